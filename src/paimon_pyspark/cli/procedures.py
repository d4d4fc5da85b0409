"""The ``CALL sys.*`` procedures as commands: ``compact``, ``rescale``, ``expire-snapshots``,
``expire-changelogs``, ``remove-orphan-files``, ``rewrite-file-index``, ``create-tag``,
``delete-tag``, ``rollback``, ``reset-consumer``, ``clear-consumers``.

Each command's flags are its procedure's own arguments (procedures/calls.py), read from the
procedure's signature as the SQL door reads them, so a new argument needs no change here:
``CALL sys.compact(table => 'db.t', compact_strategy => 'full')`` is ``compact --table db.t
--compact_strategy full`` (``--compact-strategy`` works too). An argument typed ``int`` takes
an integer, one typed ``bool`` takes ``true`` or ``false``, every other one its text, parsed
by the procedure as the SQL door's text is. Procedures that rewrite data or list many files
run as Spark jobs (spark/procedures.py); the others are metadata work done in this process.
"""

from __future__ import annotations

import argparse
import inspect
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from paimon_pyspark.maintenance.orphan_files import OrphanFilesResult
from paimon_pyspark.procedures import calls
from paimon_pyspark.procedures.calls import RewriteFileIndexResult, RollbackResult

_NOT_ARGUMENTS = {"runner", "catalog", "progress"}


@dataclass(frozen=True)
class ProcedureCommand:
    """``name`` runs ``procedure`` (its arguments, its docs); ``on_spark``: as the Spark job."""

    name: str
    procedure: Callable[..., Any]
    on_spark: bool
    summary: str

    @property
    def sql_name(self) -> str:
        return self.procedure.__name__


COMMANDS = (
    ProcedureCommand("compact", calls.compact, True, "compact a table (a Spark job)"),
    ProcedureCommand("rescale", calls.rescale, True, "rewrite buckets to a new count (Spark)"),
    ProcedureCommand(
        "expire-snapshots", calls.expire_snapshots, False, "expire old snapshots and their files"
    ),
    ProcedureCommand(
        "expire-changelogs",
        calls.expire_changelogs,
        False,
        "expire long-lived changelogs and their files",
    ),
    ProcedureCommand(
        "remove-orphan-files",
        calls.remove_orphan_files,
        True,
        "delete files no snapshot, tag or branch uses (a Spark job)",
    ),
    ProcedureCommand(
        "rewrite-file-index",
        calls.rewrite_file_index,
        True,
        "rebuild file indexes from the table's options (Spark)",
    ),
    ProcedureCommand("create-tag", calls.create_tag, False, "tag a snapshot"),
    ProcedureCommand("delete-tag", calls.delete_tag, False, "delete tags"),
    ProcedureCommand("rollback", calls.rollback, False, "roll back to a snapshot or tag"),
    ProcedureCommand(
        "reset-consumer", calls.reset_consumer, False, "set or delete a stream consumer"
    ),
    ProcedureCommand(
        "clear-consumers", calls.clear_consumers, False, "delete stream consumers by pattern"
    ),
)
BY_NAME = {c.name: c for c in COMMANDS}


@dataclass(frozen=True)
class Argument:
    name: str
    kind: type
    required: bool


def arguments(procedure: Callable[..., Any]) -> list[Argument]:
    """The procedure's SQL arguments (after the runner or catalog), in its order."""
    hints = typing.get_type_hints(procedure)
    out = []
    for name, p in inspect.signature(procedure).parameters.items():
        if name in _NOT_ARGUMENTS:
            continue
        out.append(
            Argument(name, _kind(hints.get(name, str)), p.default is inspect.Parameter.empty)
        )
    return out


def _kind(hint: Any) -> type:
    """``int`` or ``bool`` when that is the only type the argument takes, else ``str``."""
    options = typing.get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    given = [o for o in options if o is not type(None)]
    if given == [bool]:
        return bool
    if given == [int]:
        return int
    return str


def _bool(text: str) -> bool:
    value = text.strip().lower()
    if value not in ("true", "false"):
        raise argparse.ArgumentTypeError(f"expected true or false, got '{text}'")
    return value == "true"


def add_arguments(parser: argparse.ArgumentParser, command: ProcedureCommand) -> None:
    for arg in arguments(command.procedure):
        flags = [f"--{arg.name}"]
        if "_" in arg.name:
            flags.append(f"--{arg.name.replace('_', '-')}")
        parser.add_argument(
            *flags,
            dest=f"call_{arg.name}",
            type=_bool if arg.kind is bool else arg.kind,
            required=arg.required,
            metavar=arg.kind.__name__.upper(),
            help=f"CALL sys.{command.sql_name} argument '{arg.name}'",
        )


def call_arguments(args: argparse.Namespace, command: ProcedureCommand) -> dict[str, Any]:
    """The arguments given on the command line, by their procedure names."""
    out = {}
    for arg in arguments(command.procedure):
        value = getattr(args, f"call_{arg.name}")
        if value is not None:
            out[arg.name] = value
    return out


def result_document(command: ProcedureCommand, result: Any) -> dict[str, Any]:
    """The procedure's result in Java's result column names, plus what we know beyond them."""
    if isinstance(result, OrphanFilesResult):
        return {
            "deletedFileCount": result.deleted_file_count,
            "deletedFileTotalLenInBytes": result.deleted_file_total_len_in_bytes,
            "deleted_files": list(result.deleted_files),
        }
    if isinstance(result, RollbackResult | RewriteFileIndexResult):
        return result._asdict()
    if command.name == "expire-snapshots":
        return {"deleted_snapshots_count": result}
    if command.name in ("compact", "rescale"):
        return {"result": True, "snapshot_id": result}
    if command.name == "expire-changelogs":
        return {"result": result}
    if command.name == "clear-consumers":
        return {"result": True, "cleared_consumers": result}
    return {"result": True}
