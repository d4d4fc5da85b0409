"""The arguments of ``CALL sys.<procedure>(...)`` in Spark's and in Flink's spelling.

Java's Spark procedures (``PARAMETERS`` of paimon-spark's ``*Procedure``) and Flink's
(``@ProcedureHint`` of paimon-flink's) take the same arguments under mostly the same names,
but ``compact`` and ``rescale`` order them differently and a few names differ
(``create_tag``'s ``snapshot`` / ``snapshot_id``). Named arguments take either name. Positional
arguments take one procedure's order, chosen from the statement itself:

1. a procedure only one engine has takes that engine's order; so does one whose orders agree;
2. a named argument only one engine's procedure has (``partitions =>`` for ``rescale`` is
   Spark's, ``partition =>`` Flink's), or a double-quoted string (Flink reads ``"x"`` as a
   name, so such a statement is Spark SQL), chooses that engine;
3. more positional arguments than Spark's procedure takes is Flink's order;
4. otherwise Spark's order, unless it cannot read the arguments and Flink's can: a value its
   slot cannot hold (``'zorder'`` as ``compact_strategy``, which is ``'full'`` or ``'minor'``;
   ``4`` as rescale's ``where``), or ``order_by`` without ``order_strategy``. Arguments that
   only differ on empty strings ("not given" in both) read the same either way, so the seeds'
   ``CALL sys.compact('db.t', '', '', '', '')`` is the same call in both spellings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paimon_pyspark.errors import PaimonError, SqlError
from paimon_pyspark.procedures.arguments import (
    parse_idle_time,
    parse_options,
    parse_order,
    parse_strategy,
)

SPARK = "spark"
FLINK = "flink"

_INT = frozenset(
    {
        "bucket_num",
        "retain_max",
        "retain_min",
        "max_deletes",
        "parallelism",
        "scan_parallelism",
        "sink_parallelism",
        "snapshot",
        "snapshot_id",
        "next_snapshot_id",
        "nextsnapshotid",
    }
)
_BOOL = frozenset({"dry_run", "delete_all"})


def _fits_slot(name: str, value: Any) -> bool:
    """Whether Java's procedure could take ``value`` for its argument ``name`` (an INT, a
    BOOLEAN or a STRING argument); blanks fit every slot."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return True
    if name in _INT:
        if isinstance(value, str):
            return value.strip().lstrip("-").isdigit()
        return isinstance(value, int) and not isinstance(value, bool)
    if name in _BOOL:
        return isinstance(value, bool) or str(value).strip().lower() in ("true", "false")
    return isinstance(value, str)


def _check_compact(bound: Mapping[str, Any]) -> None:
    parse_strategy(bound.get("compact_strategy"))
    parse_order(
        bound.get("order_strategy"), bound.get("order_by"), bound.get("partition_idle_time")
    )
    options = bound.get("options")
    if isinstance(options, str):
        parse_options(options)
    idle = bound.get("partition_idle_time")
    if isinstance(idle, str):
        parse_idle_time(idle, "")


@dataclass(frozen=True)
class Signature:
    """One procedure's arguments: Spark's and Flink's positional orders (None: that engine
    has no such procedure), the package procedure's name for each SQL name that differs
    (None: accepted and ignored, as Flink's parallelism hints are on Spark), arguments only the
    package has (by name), and the checks that tell whether an order can read a call."""

    spark: tuple[str, ...] | None
    flink: tuple[str, ...] | None
    renames: Mapping[str, str | None] = field(default_factory=dict)
    extra: tuple[str, ...] = ()
    check: Callable[[Mapping[str, Any]], None] | None = None

    @staticmethod
    def same(params: Sequence[str]) -> Signature:
        """A procedure whose Spark and Flink arguments are ``params``, in that order."""
        return Signature(tuple(params), tuple(params))

    def names(self) -> tuple[str, ...]:
        out: list[str] = []
        for order in (self.spark, self.flink, self.extra):
            out += [n for n in order or () if n not in out]
        return tuple(out)

    def _engine(self, name: str) -> str | None:
        in_spark = name in (self.spark or ())
        in_flink = name in (self.flink or ())
        if in_spark and not in_flink:
            return SPARK
        if in_flink and not in_spark:
            return FLINK
        return None

    def _readable(self, order: tuple[str, ...], args: Sequence[Any]) -> bool:
        if len(args) > len(order):
            return False
        bound = dict(zip(order, args, strict=False))
        if not all(_fits_slot(k, v) for k, v in bound.items()):
            return False
        if self.check is None:
            return True
        clean = {k: v for k, v in bound.items() if not (isinstance(v, str) and not v.strip())}
        try:
            self.check(clean)
        except PaimonError:
            return False
        return True

    def order(
        self, args: Sequence[Any], kwargs: Mapping[str, Any], spark_quoted: bool = False
    ) -> tuple[str, tuple[str, ...]]:
        """The engine whose positional order reads ``args``, and that order (the rules in
        the module's docstring)."""
        if self.spark is None or self.flink is None:
            only = self.spark if self.spark is not None else self.flink
            assert only is not None
            return (SPARK if self.spark is not None else FLINK), only
        if self.spark == self.flink or not args:
            return SPARK, self.spark
        engines = {e for e in (self._engine(k.lower()) for k in kwargs) if e is not None}
        if spark_quoted:
            engines.add(SPARK)
        if len(engines) == 1:
            engine = engines.pop()
            return engine, self.spark if engine == SPARK else self.flink
        if len(args) > len(self.spark):
            return FLINK, self.flink
        if not self._readable(self.spark, args) and self._readable(self.flink, args):
            return FLINK, self.flink
        return SPARK, self.spark


def bind(
    procedure: str,
    signature: Signature,
    call_args: Sequence[Any],
    call_kwargs: Mapping[str, Any],
    spark_quoted: bool = False,
) -> dict[str, Any]:
    """The package procedure's keyword arguments for ``CALL sys.<procedure>(...)``: positional
    arguments in the chosen engine's order, names in either engine's spelling, renamed to the
    package's; empty strings dropped (Java's "not given"). ``table`` is required where the
    procedure has one."""
    name = f"CALL sys.{procedure}"
    engine, order = signature.order(call_args, call_kwargs, spark_quoted)
    if len(call_args) > len(order):
        raise SqlError(
            f"{name} takes at most {len(order)} arguments in {engine.capitalize()}'s order "
            f"({', '.join(order)}), got {len(call_args)}."
        )
    bound: dict[str, Any] = dict(zip(order, call_args, strict=False))
    known = signature.names()
    for key, value in call_kwargs.items():
        key = key.lower()
        if key not in known:
            raise SqlError(f"{name} has no argument '{key}' (its arguments: {', '.join(known)}).")
        if key in bound:
            raise SqlError(f"{name}: argument '{key}' is given twice.")
        bound[key] = value
    out: dict[str, Any] = {}
    for key, value in bound.items():
        if isinstance(value, str) and not value.strip():
            continue
        target = signature.renames.get(key, key)
        if target is None:
            continue
        if target in out:
            raise SqlError(f"{name}: argument '{target}' is given twice (as '{key}').")
        out[target] = value
    if "table" not in out and "table" in known:  # compact_database names no table
        raise SqlError(f"{name} needs the argument 'table'.")
    return out


_COMPACT_SPARK = (
    "table",
    "partitions",
    "compact_strategy",
    "order_strategy",
    "order_by",
    "where",
    "options",
    "partition_idle_time",
)
_COMPACT_FLINK = (
    "table",
    "partitions",
    "order_strategy",
    "order_by",
    "options",
    "where",
    "partition_idle_time",
    "compact_strategy",
)

SIGNATURES: dict[str, Signature] = {
    "compact": Signature(_COMPACT_SPARK, _COMPACT_FLINK, extra=("buckets",), check=_check_compact),
    "rescale": Signature(
        ("table", "bucket_num", "partitions", "where"),
        ("table", "bucket_num", "partition", "scan_parallelism", "sink_parallelism"),
        renames={"partitions": "partition", "scan_parallelism": None, "sink_parallelism": None},
    ),
    "expire_snapshots": Signature.same(
        ("table", "retain_max", "retain_min", "older_than", "max_deletes", "options")
    ),
    "expire_partitions": Signature.same(
        (
            "table",
            "expiration_time",
            "timestamp_formatter",
            "timestamp_pattern",
            "expire_strategy",
            "max_expires",
            "options",
        )
    ),
    "expire_changelogs": Signature(
        None, ("table", "retain_max", "retain_min", "older_than", "max_deletes", "delete_all")
    ),
    "remove_orphan_files": Signature.same(
        ("table", "older_than", "dry_run", "parallelism", "mode")
    ),
    # Spark's (table, where) and Flink's (table, partitions): the procedure tells a second
    # argument that reads as a SQL condition from a partition spec (procedures/calls.py)
    "rewrite_file_index": Signature(
        ("table", "partitions"), ("table", "partitions"), extra=("where",)
    ),
    "create_tag": Signature(
        ("table", "tag", "snapshot", "time_retained"),
        ("table", "tag", "snapshot_id", "time_retained"),
    ),
    "replace_tag": Signature(
        ("table", "tag", "snapshot", "time_retained"),
        ("table", "tag", "snapshot_id", "time_retained"),
    ),
    "rename_tag": Signature(
        ("table", "tag", "target_tag"),
        ("table", "tagname", "targettagname"),
    ),
    "delete_tag": Signature.same(("table", "tag")),
    "expire_tags": Signature.same(("table", "older_than")),
    "trigger_tag_automatic_creation": Signature.same(("table",)),
    "rollback": Signature(("table", "version", "snapshot", "tag"), None),
    "rollback_to": Signature(None, ("table", "tag", "snapshot_id")),
    "create_tag_from_timestamp": Signature.same(("table", "tag", "timestamp", "time_retained")),
    "create_tag_from_watermark": Signature(None, ("table", "tag", "watermark", "time_retained")),
    "rollback_to_timestamp": Signature.same(("table", "timestamp")),
    "rollback_to_watermark": Signature.same(("table", "watermark")),
    "reset_consumer": Signature(
        ("table", "consumerid", "nextsnapshotid"),
        ("table", "consumer_id", "next_snapshot_id"),
        renames={"consumerid": "consumer_id", "nextsnapshotid": "next_snapshot_id"},
    ),
    "clear_consumers": Signature(
        ("table", "includingconsumers", "excludingconsumers"),
        ("table", "including_consumers", "excluding_consumers"),
        renames={
            "includingconsumers": "including_consumers",
            "excludingconsumers": "excluding_consumers",
        },
    ),
    "mark_partition_done": Signature.same(("table", "partitions")),
    "create_branch": Signature(
        ("table", "branch", "tag", "ignoreifexists"),
        ("table", "branch", "tag", "ignoreifexists"),
        renames={"ignoreifexists": "ignore_if_exists"},
    ),
    "delete_branch": Signature.same(("table", "branch")),
    "rename_branch": Signature.same(("table", "from_branch", "to_branch")),
    "fast_forward": Signature.same(("table", "branch")),
    "purge_files": Signature.same(("table",)),
    "remove_unexisting_files": Signature.same(("table", "dry_run", "parallelism")),
    "compact_manifest": Signature.same(("table", "options")),
    "compact_database": Signature(
        ("including_databases", "including_tables", "excluding_tables", "options"),
        (
            "including_databases",
            "mode",
            "including_tables",
            "excluding_tables",
            "table_options",
            "partition_idle_time",
            "compact_strategy",
        ),
        renames={"table_options": "options"},
    ),
}
"""Java 1.4.2's argument lists, Spark's and Flink's (rename_tag's Flink names are
``tagName``/``targetTagName``, reset_consumer's and clear_consumers' Spark names
``consumerId``/``nextSnapshotId``/``includingConsumers``/``excludingConsumers``; SQL names are
matched without case)."""


__all__ = ["FLINK", "SIGNATURES", "SPARK", "Signature", "bind"]
