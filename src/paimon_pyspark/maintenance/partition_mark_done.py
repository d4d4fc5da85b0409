"""Marking partitions done: telling downstream readers a partition has finished writing.

Mirrors Java 1.4.2's PartitionMarkDoneAction and SuccessFileMarkDoneAction. The actions come
from ``partition.mark-done-action`` (comma separated, Java's default ``success-file``):

- ``success-file`` writes ``<partition>/_SUCCESS``, Java's SuccessFile JSON
  (``creationTime``, ``modificationTime``: epoch ms of store/clock.py); marking a partition
  again keeps its ``creationTime`` and moves ``modificationTime``. The file is replaced whole
  (``overwrite_hint``), so a reader, or a crash, sees the old file or the new one, and marking
  again finishes what a failed mark began.
- ``done-partition`` adds a ``<last value>.done`` partition to a metastore; Java refuses it
  for a table without one ("Cannot mark done partition for table without metastore."), as
  every filesystem-catalog table is.
- ``mark-event`` sends a mark-done event to the catalog; Java refuses it unless
  ``metastore.partitioned-table`` is true, and a filesystem catalog then ignores the event
  (AbstractCatalog.markDonePartitions does nothing): so do we.
- ``http-report`` and ``custom`` call a server or a user's Java class.

What cannot run raises UnsupportedOptionError when a mark is asked for, and only then, as Java
fails when it builds the actions: the table opens, writes and reads regardless.

Partitions are marked by the ``mark_partition_done`` procedure and, with
``partition.end-input-to-done``, after every batch commit (table/table_commit.py; every door's
batch write, SQL statement and procedure commits as one), as Java's Spark writer does after its
commit (WriteHelper.markDoneIfNeeded): the partitions the commit wrote new files into, as
Flink's PartitionMarkDoneListener picks them (Java's Spark writer takes every message's
partition, so a compaction or a delete that only removes files marks its partitions there and
not here). Structured Streaming micro-batches are not the end of input and mark nothing (Java's
Spark sink marks at each; Flink's streaming marks by ``partition.idle-time-to-done``, a
Flink option).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from paimon_pyspark.errors import (
    CorruptTableError,
    InvalidArgumentError,
    PartitionSpecError,
    UnsupportedOptionError,
)
from paimon_pyspark.options import (
    PARTITION_END_INPUT_TO_DONE,
    PARTITION_MARK_DONE_ACTION,
    option_value,
)
from paimon_pyspark.spec import json_format
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.store.clock import now_millis
from paimon_pyspark.store.paths import escape_path_name, partition_value_string

if TYPE_CHECKING:
    from paimon_pyspark.spec.commit_message import CommitMessage
    from paimon_pyspark.store.file_store import FileStore

SUCCESS_FILE_NAME = "_SUCCESS"
SUCCESS_FILE = "success-file"
MARK_EVENT = "mark-event"
METASTORE_PARTITIONED_TABLE = "metastore.partitioned-table"
_ACTIONS = ("success-file", "done-partition", "mark-event", "http-report", "custom")
_WHY_NOT = {
    "done-partition": "it adds a '.done' partition to a metastore, and Java refuses it for a "
    "table without one (a filesystem catalog's)",
    "mark-event": "Java refuses it unless 'metastore.partitioned-table' is true (and then a "
    "filesystem catalog ignores the event)",
    "http-report": "it reports to an HTTP server, which paimon_pyspark does not do",
    "custom": "it runs a user's Java class (partition.mark-done-action.custom.class)",
}


@dataclass(frozen=True)
class SuccessFile:
    """Java's SuccessFile: when a partition was first and last marked done (epoch ms)."""

    creation_time: int
    modification_time: int

    def to_json(self) -> str:
        return json_format.dumps(
            {"creationTime": self.creation_time, "modificationTime": self.modification_time}
        )

    @staticmethod
    def from_json(text: str, where: str) -> SuccessFile:
        """Other fields are ignored, as Java's ``@JsonIgnoreProperties(ignoreUnknown)``."""
        try:
            obj = json.loads(text)
            created, modified = obj["creationTime"], obj["modificationTime"]
            if not all(isinstance(v, int) and not isinstance(v, bool) for v in (created, modified)):
                raise TypeError("the times are not integers")
            return SuccessFile(created, modified)
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptTableError(f"Success file {where} is not a valid success file: {e}") from e


def mark_done_actions(store: FileStore) -> list[str]:
    """The table's ``partition.mark-done-action`` list, each checked as Java's ``valueOf`` is
    (exact lower-case names, no spaces); any but ``success-file`` is refused."""
    raw = store.options.get(PARTITION_MARK_DONE_ACTION, SUCCESS_FILE) or SUCCESS_FILE
    actions: list[str] = []
    for action in raw.split(","):
        if action not in _ACTIONS:
            raise InvalidArgumentError(
                f"Table '{store.name}': option '{PARTITION_MARK_DONE_ACTION}' = '{raw}' has "
                f"'{action}', which is none of {', '.join(_ACTIONS)}."
            )
        if action == MARK_EVENT and _partitioned_in_metastore(store):
            continue  # the filesystem catalog's markDonePartitions: nothing
        if action != SUCCESS_FILE:
            raise UnsupportedOptionError(
                f"Table '{store.name}': option '{PARTITION_MARK_DONE_ACTION}' = '{raw}': "
                f"'{action}' is refused: {_WHY_NOT[action]}. Use 'success-file'."
            )
        if action not in actions:
            actions.append(action)
    return actions


def _partitioned_in_metastore(store: FileStore) -> bool:
    return (store.options.get(METASTORE_PARTITIONED_TABLE) or "").strip().lower() == "true"


def end_input_to_done(store: FileStore) -> bool:
    """``partition.end-input-to-done``: mark the partitions a batch write touched, at its end."""
    options = store.options.options
    if PARTITION_END_INPUT_TO_DONE not in options:
        return False
    return bool(option_value(options, PARTITION_END_INPUT_TO_DONE, store.name))


def partition_paths_of_specs(
    store: FileStore, specs: Sequence[Mapping[str, Any]], call: str
) -> list[str]:
    """Each spec as its partition directory, relative to the table (``dt=1/hr=2``).

    Keys are taken in the table's partition-key order, as Java's ``generatePartitionPath``
    takes them; a string value is used as written (as in Java), any other value is written as
    the table writes it in its data directories. Unlike Java, which drops a key that is not a
    partition key and marks whatever directory is left, a spec must name partition keys only,
    and a prefix of them (``dt`` of ``dt, hr`` marks the day's directory), so a typo never
    marks another directory.
    """
    keys = store.partition_keys
    if not keys:
        raise InvalidArgumentError(
            f"Table '{store.name}': {call}: the table has no partition keys, so no partition "
            "can be marked done."
        )
    legacy = store.options.partition_legacy_name
    default = store.options.partition_default_name
    paths: list[str] = []
    for spec in specs:
        unknown = [k for k in spec if k not in keys]
        if unknown:
            raise PartitionSpecError(
                f"Table '{store.name}': {call}: '{unknown[0]}' is not a partition key "
                f"(partition keys: {', '.join(keys)})."
            )
        named = [k for k in keys if k in spec]
        if not named or named != keys[: len(named)]:
            raise PartitionSpecError(
                f"Table '{store.name}': {call}: the spec {dict(spec)} must give the first "
                f"partition keys in order ({', '.join(keys)}), at least '{keys[0]}'."
            )
        parts = []
        for key in named:
            value = spec[key]
            if isinstance(value, str):
                if not value:
                    raise PartitionSpecError(
                        f"Table '{store.name}': {call}: partition key '{key}' has an empty "
                        "value; Java cannot make a path of it."
                    )
                text = value
            else:
                t = store.partition_types[keys.index(key)]
                text = partition_value_string(value, t, legacy, default)
            parts.append(f"{escape_path_name(key)}={escape_path_name(text)}")
        paths.append("/".join(parts))
    return paths


def partition_paths_of_messages(store: FileStore, messages: Iterable[CommitMessage]) -> list[str]:
    """The partition directories of the messages' partitions, each once, in message order."""
    seen: dict[bytes, None] = dict.fromkeys(m.partition for m in messages)
    return [
        store.partition_rel_path(deserialize_with_arity(p, store.partition_types)) for p in seen
    ]


def mark_partitions_done(store: FileStore, partition_paths: Sequence[str]) -> None:
    """Run the table's mark-done actions on each partition (Java's ``markDone`` loop)."""
    actions = mark_done_actions(store)
    for rel in partition_paths:
        for action in actions:
            if action == SUCCESS_FILE:
                _write_success_file(store, rel)


def read_success_file(store: FileStore, partition_path: str) -> SuccessFile | None:
    """The success file of a partition directory, or None when it has none."""
    path = os.path.join(store.path, partition_path, SUCCESS_FILE_NAME)
    if not store.file_io.exists(path):
        return None
    return SuccessFile.from_json(store.file_io.read_text(path), path)


def _write_success_file(store: FileStore, rel: str) -> None:
    now = now_millis()
    success = read_success_file(store, rel)
    updated = SuccessFile(now, now) if success is None else SuccessFile(success.creation_time, now)
    directory = os.path.join(store.path, rel)
    store.file_io.mkdirs(directory)
    store.file_io.overwrite_hint(os.path.join(directory, SUCCESS_FILE_NAME), updated.to_json())


__all__ = [
    "SUCCESS_FILE_NAME",
    "SuccessFile",
    "end_input_to_done",
    "mark_done_actions",
    "mark_partitions_done",
    "partition_paths_of_messages",
    "partition_paths_of_specs",
    "read_success_file",
]
