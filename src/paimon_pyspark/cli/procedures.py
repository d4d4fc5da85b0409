"""The ``CALL sys.*`` procedures as commands: ``compact``, ``rescale``, ``expire-snapshots``,
``expire-changelogs``, ``expire-partitions``, ``remove-orphan-files``, ``rewrite-file-index``,
``create-tag``, ``delete-tag``, ``replace-tag``, ``rename-tag``, ``rollback``, ``rollback-to``,
``create-tag-from-timestamp``, ``create-tag-from-watermark``, ``rollback-to-timestamp``,
``rollback-to-watermark``, ``expire-tags``, ``trigger-tag-automatic-creation``,
``reset-consumer``, ``clear-consumers``, ``mark-partition-done``, ``purge-files``,
``remove-unexisting-files``, ``compact-manifest``, ``compact-database`` (which compacts in this
process: it names no one table for the Spark job's report), ``create-branch``, ``delete-branch``,
``rename-branch``, ``fast-forward``.

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
from paimon_pyspark.procedures import (
    branch_calls,
    calls,
    compact_database,
    file_calls,
    mark_done_calls,
    partition_calls,
    tag_auto_calls,
    timestamp_calls,
)
from paimon_pyspark.procedures.calls import RewriteFileIndexResult, RollbackResult
from paimon_pyspark.procedures.timestamp_calls import CreateTagResult

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
        "expire-partitions",
        partition_calls.expire_partitions,
        False,
        "drop expired partitions (one OVERWRITE snapshot)",
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
    ProcedureCommand("replace-tag", calls.replace_tag, False, "point a tag at another snapshot"),
    ProcedureCommand("rename-tag", calls.rename_tag, False, "rename a tag"),
    ProcedureCommand(
        "expire-tags", tag_auto_calls.expire_tags, False, "delete tags past their retention"
    ),
    ProcedureCommand(
        "trigger-tag-automatic-creation",
        tag_auto_calls.trigger_tag_automatic_creation,
        False,
        "create the automatic tags that are due",
    ),
    ProcedureCommand("rollback-to", calls.rollback_to, False, "roll back (Flink's arguments)"),
    ProcedureCommand(
        "create-tag-from-timestamp",
        timestamp_calls.create_tag_from_timestamp,
        False,
        "tag the first snapshot committed at or after a time",
    ),
    ProcedureCommand(
        "create-tag-from-watermark",
        timestamp_calls.create_tag_from_watermark,
        False,
        "tag the first snapshot at or after a watermark",
    ),
    ProcedureCommand(
        "rollback-to-timestamp",
        timestamp_calls.rollback_to_timestamp,
        False,
        "roll back to the last snapshot committed at or before a time",
    ),
    ProcedureCommand(
        "rollback-to-watermark",
        timestamp_calls.rollback_to_watermark,
        False,
        "roll back to the last snapshot at or before a watermark",
    ),
    ProcedureCommand(
        "reset-consumer", calls.reset_consumer, False, "set or delete a stream consumer"
    ),
    ProcedureCommand(
        "clear-consumers", calls.clear_consumers, False, "delete stream consumers by pattern"
    ),
    ProcedureCommand(
        "purge-files", file_calls.purge_files, False, "empty a table and delete its files"
    ),
    ProcedureCommand(
        "remove-unexisting-files",
        file_calls.remove_unexisting_files,
        True,
        "drop missing data files from the table (a Spark job)",
    ),
    ProcedureCommand("compact-manifest", file_calls.compact_manifest, False, "merge the manifests"),
    ProcedureCommand(
        "compact-database",
        compact_database,
        False,
        "compact every matching table (in this process)",
    ),
    ProcedureCommand(
        "mark-partition-done",
        mark_done_calls.mark_partition_done,
        False,
        "mark partitions done (a _SUCCESS file each)",
    ),
    ProcedureCommand(
        "create-branch", branch_calls.create_branch, False, "create a branch, empty or from a tag"
    ),
    ProcedureCommand(
        "delete-branch", branch_calls.delete_branch, False, "delete branches (comma-separated)"
    ),
    ProcedureCommand("rename-branch", branch_calls.rename_branch, False, "rename a branch"),
    ProcedureCommand(
        "fast-forward", branch_calls.fast_forward, False, "publish a branch onto main"
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
    # a procedure bound to the in-process runner (procedures/in_process.py) wraps its own
    hints = typing.get_type_hints(getattr(procedure, "__wrapped__", procedure))
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
    if isinstance(result, CreateTagResult):
        return {
            "tagName": result.tag_name,
            "snapshot": result.snapshot,
            "commit_time": result.commit_time,
            "watermark": result.watermark,
        }
    if command.name == "expire-snapshots":
        return {"deleted_snapshots_count": result}
    if command.name in ("compact", "rescale"):
        return {"result": True, "snapshot_id": result}
    if command.name == "expire-changelogs":
        return {"result": result}
    if command.name == "expire-tags":
        return {"expired_tags": result}
    if command.name == "expire-partitions":
        return {"expired_partitions": result}
    if command.name == "remove-unexisting-files":
        return {"fileName": list(result)}
    if command.name == "compact-manifest":
        return {"result": True, "snapshot_id": result}
    if command.name in ("purge-files", "compact-database"):
        return {"result": result}
    if command.name == "clear-consumers":
        return {"result": True, "cleared_consumers": result}
    if command.name == "mark-partition-done":
        return {"result": True, "partitions": result}
    return {"result": True}
