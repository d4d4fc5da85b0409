"""Rebuilding the file indexes of existing data files: the work of ``rewrite_file_index``.

Mirrors org.apache.paimon.index.FileIndexProcessor, which Java's RewriteFileIndexProcedure
(Spark, ``where``) and RewriteFileIndexProcedure / RewriteFileIndexSink (Flink,
``partitions``) run on every live file of the latest snapshot in the kept partitions, each
file's result committed as a CompactIncrement (before: the file's entry, after: the same file
with its new index), so the snapshot is a COMPACT one.

What one file gets, as Java does it:
- the indexes the table's current ``file-index.*`` options ask for, built from the file's rows
  (every row: a key-value file's retractions too), named by the file's own column names (a
  column renamed since is indexed under the name the file knows; one the file lacks is skipped);
- the indexes of its old separate ``.index`` file for columns still configured, unless rebuilt
  (an old embedded index is not read: it is replaced, or kept when the new one goes to a file);
- up to ``file-index.in-manifest-threshold`` bytes the result is the new embedded index and the
  extra files stay as they were; above it a new ``.index`` file (``<file>.index``, or the old
  index's name numbered on: ``new_index_file_name``) replaces the old ones in ``extra_files``
  and the embedded index stays as it was; with nothing to index, only the ``.index`` names go.
One departure, to keep Java's readers whole: a file whose new (extra files, embedded index)
would be one it already has, or one the snapshot's manifests still DELETE it with, keeps its
entry as it is. Java's scan drops every ADD whose identifier any kept DELETE entry names
(AbstractFileStoreScan.readAndMergeFileEntries), so committing such a state (a second rewrite
of an embedded index, or one after the index options were removed) makes Java lose the file,
as Java's own procedure then does. The file keeps an index that is right for its rows.
Old ``.index`` files are not deleted: an older snapshot may still read them. Snapshot expiry
keeps them as it keeps the data file (the same file is ADDed back), so they are left to
``remove_orphan_files``, as in Java.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from paimon_pyspark.compact.plan import APPEND, KV, CompactTask, PartitionFilter, kept_entries
from paimon_pyspark.io.data_file_reader import iter_data_file
from paimon_pyspark.io.file_index_writer import (
    DataFileIndexWriter,
    FileIndexSettings,
    index_path,
    new_index_file_name,
)
from paimon_pyspark.spec import file_index as fi
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.file_index.format import (
    java_index_items,
    java_index_map,
    read_index_file,
    write_java_index_map,
)
from paimon_pyspark.spec.java_hashmap import JavaHashMap
from paimon_pyspark.spec.manifest import KIND_DELETE
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.versioned_record import RecordReader, RecordWriter
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.latest_plan import plan_latest
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.types.data_types import DataField, DataType

INDEX_PATH_SUFFIX = ".index"
_MAX_TASKS = 256
"""Files are packed into at most about this many tasks (Spark tasks in the Spark twin)."""
_BATCH_ROWS = 65_536


IndexState = tuple[tuple[str, ...], bytes | None]
"""A data file's (extra files, embedded index): with its name, level and place, its identity in
manifest merging (Java's FileEntry.Identifier)."""


@dataclass(frozen=True)
class FileIndexRewriteTask:
    """Some files of one bucket, and per file the index states it must not be committed with:
    its current one and those the snapshot's manifests still DELETE it with."""

    task: CompactTask
    taken: tuple[tuple[IndexState, ...], ...]
    """Per file of ``task.files``, in order."""

    MAGIC: ClassVar[bytes] = b"PPfi"
    VERSION: ClassVar[int] = 1

    def to_bytes(self) -> bytes:
        w = RecordWriter(self.MAGIC, self.VERSION).write_bytes(self.task.to_bytes())
        for states in self.taken:
            w.write_int(len(states))
            for extras, embedded in states:
                w.write_int(len(extras))
                for x in extras:
                    w.write_str(x)
                w.write_bool(embedded is not None).write_bytes(embedded or b"")
        return w.to_bytes()

    @staticmethod
    def from_bytes(data: bytes, partition_types: Sequence[DataType]) -> FileIndexRewriteTask:
        r = RecordReader(data, FileIndexRewriteTask.MAGIC, {1}, "file index rewrite task")
        task = CompactTask.from_bytes(r.read_bytes(), partition_types)
        taken: list[tuple[IndexState, ...]] = []
        for _ in task.files:
            states: list[IndexState] = []
            for _ in range(r.read_int()):
                extras = tuple(r.read_str() for _ in range(r.read_int()))
                has, embedded = r.read_bool(), r.read_bytes()
                states.append((extras, embedded if has else None))
            taken.append(tuple(states))
        r.finish()
        return FileIndexRewriteTask(task, tuple(taken))


@dataclass(frozen=True)
class FileIndexRewritePlan:
    """The files of one snapshot to re-index, in tasks of one bucket's files each."""

    snapshot_id: int | None
    tasks: tuple[FileIndexRewriteTask, ...]
    partitions: int

    @property
    def files(self) -> int:
        return sum(len(t.task.files) for t in self.tasks)


def plan_file_index_rewrite(store: FileStore, keep: PartitionFilter | None) -> FileIndexRewritePlan:
    """Every live file of the latest snapshot in the partitions ``keep`` keeps (Java's
    ``store().newScan().withPartitionFilter(...).plan().files()``); checks the table's index
    options first, as Java's processor does when it starts."""
    FileIndexSettings.of(store)  # a missing column or a type an index cannot take raises
    return plan_latest(store, lambda s: _plan(store, s, keep))


def _plan(
    store: FileStore, snapshot: Snapshot | None, keep: PartitionFilter | None
) -> FileIndexRewritePlan:
    if snapshot is None:
        return FileIndexRewritePlan(None, (), 0)
    groups: dict[tuple[bytes, int], tuple[tuple[Any, ...], int, list[DataFileMeta]]] = {}
    for e, values in kept_entries(store, snapshot, keep):
        group = groups.setdefault((e.partition, e.bucket), (values, e.total_buckets, []))
        group[2].append(e.file)
    deleted: dict[tuple[Any, ...], list[IndexState]] = {}
    if groups:
        mio = store.manifest_io
        for d in mio.read_entries(mio.data_manifests(snapshot)):
            if d.kind == KIND_DELETE and (d.partition, d.bucket) in groups:
                place = (d.partition, d.bucket, d.file.file_name, d.file.level)
                deleted.setdefault((*place, d.file.external_path), []).append(_state(d.file))
    total = sum(len(files) for _, _, files in groups.values())
    per_task = max(1, math.ceil(total / _MAX_TASKS))
    kind = KV if store.primary_keys else APPEND
    tasks = []
    for (partition, bucket), (values, buckets, files) in sorted(groups.items()):
        for i in range(0, len(files), per_task):
            chunk = tuple(files[i : i + per_task])
            taken = tuple(
                (
                    _state(f),
                    *deleted.get((partition, bucket, f.file_name, f.level, f.external_path), ()),
                )
                for f in chunk
            )
            task = CompactTask(kind, partition, values, bucket, buckets, chunk, False)
            tasks.append(FileIndexRewriteTask(task, taken))
    partitions = len({partition for partition, _ in groups})
    return FileIndexRewritePlan(snapshot.id, tuple(tasks), partitions)


def _state(f: DataFileMeta) -> IndexState:
    return tuple(f.extra_files), f.embedded_index


@dataclass(frozen=True)
class _SchemaInfo:
    """What the files of one schema version index: FileIndexProcessor's SchemaInfo."""

    settings: FileIndexSettings | None
    """The index writers' settings in the file's column names; None: nothing to build."""
    kept_names: frozenset[str]
    """The indexed names whose old indexes may stay (Java's ``projectedColFullNames``)."""


class FileIndexRewriter:
    """Rebuilds the indexes of the files of one table (one task's worth, or a whole run)."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.options = fi.parse_options(store.options.options, store.name)
        self.threshold = store.options.file_index_in_manifest_threshold
        self._schemas: dict[int, _SchemaInfo] = {}

    def run_task(self, work: FileIndexRewriteTask) -> CommitMessage | None:
        """The task's files replaced by themselves with their new indexes (compact_before /
        compact_after, as Java's sink commits them); None when no file changed."""
        task = work.task
        rel = self.store.partition_rel_path(list(task.partition_values))
        bucket_path = PathFactory(self.store.path).bucket_path(rel, task.bucket)
        before, after = [], []
        for f, taken in zip(task.files, work.taken, strict=True):
            new = self.rewrite(bucket_path, f, taken)
            if new is not None:
                before.append(f)
                after.append(new)
        return task.message(before, after) if after else None

    def rewrite(
        self, bucket_path: str, f: DataFileMeta, taken: Sequence[IndexState] = ()
    ) -> DataFileMeta | None:
        """FileIndexProcessor.process: ``f`` with its indexes rebuilt (a new ``.index`` file is
        written here); None when the result is ``f`` itself or one of the ``taken`` states."""
        info = self._schema_info(f.schema_id)
        data_path = data_file_path(self.store.external_paths, bucket_path, f, self.store.name)
        directory = os.path.dirname(data_path)
        old_files = [x for x in f.extra_files if x.endswith(INDEX_PATH_SUFFIX)]
        extras = tuple(x for x in f.extra_files if not x.endswith(INDEX_PATH_SUFFIX))
        # Java's maps, each filled as Java fills it: the Reader's header, then readAll's
        indexes = JavaHashMap()
        if old_files:
            old_path = os.path.join(directory, old_files[0])
            old = read_index_file(
                self.store.file_io.read_bytes(old_path), f"index file {old_path!r}"
            )
            data = old.read_all()
            header = java_index_map((c, [(t, None) for t in types]) for c, types in data.items())
            indexes = java_index_map(
                (c, [(t, data[c][t]) for t, _ in types]) for c, types in java_index_items(header)
            )
            for name in [c for c, _ in java_index_items(indexes) if c not in info.kept_names]:
                indexes.remove(name)
            new_path = os.path.join(directory, new_index_file_name(old_files[0]))
        else:
            new_path = index_path(data_path)
        if info.settings is not None:
            writer = DataFileIndexWriter(info.settings)
            for rows in iter_data_file(
                self.store, bucket_path, f, info.settings.fields, False, _BATCH_ROWS
            ):
                writer.write(rows)
            java_index_map(java_index_items(writer.serialized()), indexes)
        if not len(indexes):
            return _unless_taken(replace(f, extra_files=extras), f, taken)
        blob = write_java_index_map(indexes)
        if len(blob) > self.threshold:
            new = _unless_taken(
                replace(f, extra_files=(*extras, os.path.basename(new_path))), f, taken
            )
            if new is not None:
                self.store.file_io.write_bytes(new_path, blob)
            return new
        return _unless_taken(replace(f, embedded_index=blob), f, taken)

    def _schema_info(self, schema_id: int) -> _SchemaInfo:
        info = self._schemas.get(schema_id)
        if info is None:
            info = self._schemas[schema_id] = self._new_schema_info(schema_id)
        return info

    def _new_schema_info(self, schema_id: int) -> _SchemaInfo:
        file_fields = (
            tuple(self.store.fields)
            if schema_id == self.store.table_schema.id
            else tuple(self.store.schema_manager.schema(schema_id).fields)
        )
        by_id = {fd.id: fd.name for fd in file_fields}
        file_name_of = {fd.name: by_id.get(fd.id) for fd in self.store.fields}
        columns: dict[str, dict[str, dict[str, str]]] = {}
        kept: set[str] = set()
        for column, by_type in self.options.columns.items():
            pos = fi.nested_position(column)
            top = fi.top_level(column)
            name = file_name_of.get(top)
            if name is None:
                continue  # the file has no such field: Java skips the column
            nested = name if pos is None else f"{name}{column[pos:]}"
            columns[nested] = {t: dict(o) for t, o in by_type.items()}
            kept.add(column if pos is None else nested)  # Java keeps the current name here
        if not columns:
            return _SchemaInfo(None, frozenset(kept))
        tops = {fi.top_level(c) for c in columns}
        fields: Sequence[DataField] = tuple(fd for fd in file_fields if fd.name in tops)
        settings = FileIndexSettings(
            fi.FileIndexOptions(columns), tuple(fields), self.threshold, self.store.name
        )
        return _SchemaInfo(settings, frozenset(kept))


def _unless_taken(
    new: DataFileMeta, old: DataFileMeta, taken: Sequence[IndexState]
) -> DataFileMeta | None:
    state = _state(new)
    return None if state == _state(old) or state in taken else new


def rewrite_tasks(
    store: FileStore, tasks: Sequence[FileIndexRewriteTask]
) -> Iterator[CommitMessage]:
    """Each task's files re-indexed, one message per task that changed a file."""
    rewriter = FileIndexRewriter(store)
    for task in tasks:
        message = rewriter.run_task(task)
        if message is not None:
            yield message
