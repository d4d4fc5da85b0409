"""Compaction while writing: one manager per bucket a ``TableWrite`` owns, run at its commit.

Mirrors org.apache.paimon.mergetree.compact.MergeTreeCompactManager and
org.apache.paimon.append.BucketedAppendCompactManager, with the bookkeeping of
MergeTreeWriter/AppendOnlyWriter (``updateCompactResult``, ``drainIncrement``):

    restored files of the bucket + the files this write flushed
    -> pick (primary key: universal, or force-up-level-0 for lookup tables, or full;
             append: the oldest ``compaction.min.file-num`` small files, or full)
    -> rewrite, fold the result into compact_before / compact_after

Java runs a picked compaction on its compaction thread, and a batch ``prepareCommit`` waits for
it; here it runs at once, in the commit's flush. So a batch commit makes exactly the picks
Java's does: one after the flush, preceded by a full one when ``full_compaction_due`` (Java's
Flink sink: with ``full-compaction.delta-commits`` set or the ``full-compaction`` changelog
producer, every written bucket at each batch commit and at each n-th stream commit; its core
writer ignores the option, its Spark writer compacts fully only for a value > 0). A primary-key
bucket still holding more sorted runs than
``num-sorted-run.stop-trigger`` after that pick is picked again, where Java's writer would have
waited for compactions between its flushes.
"""

from __future__ import annotations

import heapq
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import Any

from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.mergetree.compaction import compact_kv_bucket
from paimon_pyspark.mergetree.universal import Levels, key_order
from paimon_pyspark.options import CoreOptions
from paimon_pyspark.spec.binary_row import deserialize_with_arity, serialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.deletion_vectors import (
    BucketDvMaintainer,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.append_dv import (
    AppendDvMaintainer,
    BucketedAppendDvMaintainer,
    delete_written_index_files,
)
from paimon_pyspark.write.append_writer import rewrite_append_files

FULL_COMPACT_MIN_FILE = 3
"""A full compaction of a fixed append bucket needs at least this many files (Java's)."""


class WriteCompaction(ABC):
    """The compaction of one bucket while it is written (Java's CompactManager and the
    writer's compact increment)."""

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        settings: CompactSettings,
    ) -> None:
        self.store = store
        self.partition_values = list(partition_values)
        self.bucket = bucket
        self.s = settings
        rel = store.partition_rel_path(self.partition_values)
        self.path_factory = PathFactory(store.path)
        self.bucket_path = self.path_factory.bucket_path(rel, bucket)
        self._before: dict[str, DataFileMeta] = {}
        self._after: list[DataFileMeta] = []
        self._changelog: list[DataFileMeta] = []

    @abstractmethod
    def add_new_files(self, files: Sequence[DataFileMeta]) -> None:
        """Files the writer flushed into the bucket (Java's ``addNewFile``)."""

    @abstractmethod
    def compact(self, full: bool) -> bool:
        """Pick once and run the pick (Java's ``triggerCompaction`` and the wait for it);
        whether anything changed."""

    def prepare_commit(self, full: bool) -> CompactIncrement:
        """The compactions of a batch commit, then the increment they leave."""
        if full:
            self.compact(True)
        self.compact(False)
        return self.drain()

    def drain(self) -> CompactIncrement:
        increment = CompactIncrement(
            compact_before=tuple(self._before.values()),
            compact_after=tuple(self._after),
            changelog_files=tuple(self._changelog),
        )
        self._before, self._after, self._changelog = {}, [], []
        return increment

    def abort(self) -> None:
        """Delete the files the compactions wrote (never an upgraded input, which is live)."""
        for f in self._after:
            if f.file_name not in self._before:
                self._delete(f)
        for f in self._changelog:
            self._delete(f)
        self._before, self._after, self._changelog = {}, [], []

    def _update(self, before: Sequence[DataFileMeta], after: Sequence[DataFileMeta]) -> None:
        """Java's ``updateCompactResult``: an input this write's earlier compaction produced
        leaves compact_after, and its file is deleted unless an upgrade still uses it."""
        after_names = {f.file_name for f in after}
        for f in before:
            produced = next(
                (a for a in self._after if a.file_name == f.file_name and a.level == f.level),
                None,
            )
            if produced is not None:
                self._after.remove(produced)
                if f.file_name not in self._before and f.file_name not in after_names:
                    self._delete(f)
            else:
                self._before.setdefault(f.file_name, f)
        self._after += after

    def _delete(self, f: DataFileMeta) -> None:
        path = data_file_path(self.store.external_paths, self.bucket_path, f)
        self.store.file_io.delete_quietly(path)


class MergeTreeWriteCompaction(WriteCompaction):
    """A primary-key bucket (MergeTreeCompactManager): its files as LSM levels, compacted by
    ``mergetree/compaction.py`` one pick at a time.

    With deletion vectors, ``dv`` holds the bucket's vectors (restored from the snapshot the
    files come from; ``dv_base`` is the index file they were read from, or the one this
    manager wrote last). The increment a commit drains carries the bucket's new index file,
    written once after its compactions (Java's CompactDeletionFile.lazyGeneration), and the
    file it replaces as a deleted index file, so the commit can tell that nobody else changed
    the bucket's vectors meanwhile (commit/conflict_detection.py).
    """

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        settings: CompactSettings,
        restored: Sequence[DataFileMeta],
        dv: BucketDvMaintainer | None = None,
        dv_base: IndexFileMeta | None = None,
    ) -> None:
        super().__init__(store, partition_values, bucket, settings)
        self.files = list(restored)
        schema = store.table_schema
        self.order = key_order([schema.field(k).type for k in schema.trimmed_primary_keys()])
        self.dv = dv
        self.dv_base = dv_base
        self._dv_written: IndexFileMeta | None = None

    def add_new_files(self, files: Sequence[DataFileMeta]) -> None:
        self.files += files

    def number_of_sorted_runs(self) -> int:
        return Levels(self.files, self.s.num_levels, self.order).number_of_sorted_runs()

    def compact(self, full: bool) -> bool:
        result = compact_kv_bucket(
            self.store, self.partition_values, self.bucket, self.files, full, 1, dv=self.dv
        )
        if result.is_empty():
            return False
        gone = {(f.file_name, f.level) for f in result.before}
        self.files = [f for f in self.files if (f.file_name, f.level) not in gone] + result.after
        self._update(result.before, result.after)
        self._changelog += result.changelog
        return True

    def prepare_commit(self, full: bool) -> CompactIncrement:
        if full:
            self.compact(True)
        changed = self.compact(False)
        while changed and self.number_of_sorted_runs() > self.s.num_sorted_run_stop_trigger:
            changed = self.compact(False)
        return self.drain()

    def drain(self) -> CompactIncrement:
        increment = super().drain()
        if self.dv is None:
            return increment
        written = self.dv.write_index(self.path_factory)
        if written is None:
            return increment
        replaced = (self.dv_base,) if self.dv_base is not None else ()
        self._dv_written, self.dv_base = written, written
        return replace(increment, new_index_files=(written,), deleted_index_files=replaced)

    def abort(self) -> None:
        super().abort()
        if self._dv_written is not None:
            dv_index_of(self.store).delete_quietly([self._dv_written])
            self._dv_written = None


class AppendWriteCompaction(WriteCompaction):
    """A fixed bucket of an append table (BucketedAppendCompactManager): files wait in sequence
    order; a minor pick rewrites the oldest window of ``compaction.min.file-num`` files, a full
    one every small file after the leading big ones.

    With deletion vectors (``dv``, Java's dvMaintainer) a rewrite leaves out the rows the
    vectors of its inputs delete and drops those vectors; the bucket's new index file goes into
    the compact increment. A full pick then always runs, and a big file with a vector is
    rewritten too."""

    def __init__(
        self,
        store: FileStore,
        partition_values: Sequence[Any],
        bucket: int,
        settings: CompactSettings,
        restored: Sequence[DataFileMeta],
        dv: AppendDvMaintainer | None = None,
    ) -> None:
        super().__init__(store, partition_values, bucket, settings)
        self.to_compact: list[tuple[int, int, DataFileMeta]] = []
        self._tie = 0
        self.dv = dv
        self.add_new_files(restored)

    def add_new_files(self, files: Sequence[DataFileMeta]) -> None:
        for f in files:
            heapq.heappush(self.to_compact, (f.min_sequence_number, self._tie, f))
            self._tie += 1

    def _poll(self) -> DataFileMeta:
        return heapq.heappop(self.to_compact)[2]

    def compact(self, full: bool) -> bool:
        picked = self._pick_full() if full else self._pick_minor()
        if not picked:
            return False
        vectors = {}
        if self.dv is not None:
            for f in picked:
                found = self.dv.deletion_vector_of(f.file_name)
                if found is not None:
                    vectors[f.file_name] = found
        after = rewrite_append_files(
            DataFileSettings.of(self.store, primary_key=False),
            self.store,
            self.bucket_path,
            self.path_factory,
            picked,
            vectors,
        )
        if self.dv is not None:
            for f in picked:
                self.dv.notify_removed_deletion_vector(f.file_name)
        if after and after[-1].file_size < self.s.compaction_file_size:
            self.add_new_files(after[-1:])  # a small last output waits for the next pick
        self._update(picked, after)
        return True

    def drain(self) -> CompactIncrement:
        increment = super().drain()
        if self.dv is None:
            return increment
        changes = self.dv.persist(self.path_factory)
        return replace(
            increment, new_index_files=changes.added, deleted_index_files=changes.deleted
        )

    def _pick_minor(self) -> list[DataFileMeta]:
        """Java's ``pickCompactBefore`` over the queue; files the window dropped leave the
        queue for good, the rest (or the unfinished window) goes back."""
        window, rest = minor_window([self._poll() for _ in range(len(self.to_compact))], self.s)
        self.add_new_files(rest)
        return window

    def _pick_full(self) -> list[DataFileMeta]:
        """Java's ``triggerFullCompaction``: with at least three files waiting (with deletion
        vectors, any), all of them leave the queue for FullCompactTask's pick
        (``full_rewrite``)."""
        waiting = len(self.to_compact)
        least = 1 if self.dv is not None else FULL_COMPACT_MIN_FILE
        if not self.s.force_rewrite_all_files and waiting < least:
            return []
        has_vector = None
        if self.dv is not None:
            dv = self.dv
            has_vector = lambda name: dv.deletion_vector_of(name) is not None  # noqa: E731
        return full_rewrite([self._poll() for _ in range(waiting)], self.s, has_vector)


def minor_window(
    files: Sequence[DataFileMeta], s: CompactSettings
) -> tuple[list[DataFileMeta], list[DataFileMeta]]:
    """Java's ``pickCompactBefore`` over ``files`` in sequence order: the window taken (empty
    when none) and the files left to wait. Files enter a window oldest first; it is taken once
    it holds ``min_file_num`` files, and drops its oldest file (for good) once it holds twice
    the target size. Without a pick the unfinished window is what is left."""
    window: list[DataFileMeta] = []
    size = 0
    for i, f in enumerate(files):
        window.append(f)
        size += f.file_size
        if len(window) >= s.min_file_num:
            return window, list(files[i + 1 :])
        if size >= s.target_file_size * 2:
            size -= window.pop(0).file_size
    return [], window


def full_rewrite(
    files: Sequence[DataFileMeta],
    s: CompactSettings,
    has_vector: Callable[[str], bool] | None = None,
) -> list[DataFileMeta]:
    """Java's FullCompactTask over ``files`` in sequence order: all of them with
    ``force_rewrite_all_files``; else, after the leading big files, the rest when small files
    outnumber big ones among them and there are at least three. With deletion vectors
    (``has_vector``: whether a data file has one) a leading big file with a vector is not
    skipped, and the rest is always taken."""
    if s.force_rewrite_all_files:
        return list(files)
    start = 0
    while start < len(files) and files[start].file_size >= s.compaction_file_size:
        if has_vector is not None and has_vector(files[start].file_name):
            break
        start += 1
    rest = list(files[start:])
    if has_vector is not None:
        return rest
    small = sum(1 for f in rest if f.file_size < s.compaction_file_size)
    if small > len(rest) - small and len(rest) >= FULL_COMPACT_MIN_FILE:
        return rest
    return []


def new_write_compaction(
    store: FileStore,
    partition_values: Sequence[Any],
    bucket: int,
    settings: CompactSettings,
    restored: Sequence[DataFileMeta],
    dv: BucketDvMaintainer | None = None,
    dv_base: IndexFileMeta | None = None,
) -> WriteCompaction:
    """The manager of a primary-key or fixed-bucket append bucket (``dv``, ``dv_base``: see
    MergeTreeWriteCompaction; an append bucket reads ``dv_base`` when ``dv`` is None)."""
    if store.primary_keys:
        return MergeTreeWriteCompaction(
            store, partition_values, bucket, settings, restored, dv, dv_base
        )
    append_dv = None
    if store.options.deletion_vectors_enabled:
        partition = serialize_with_arity(partition_values, store.partition_types)
        base = () if dv_base is None else (dv_base,)
        append_dv = BucketedAppendDvMaintainer(dv_index_of(store), partition, bucket, base, dv)
    return AppendWriteCompaction(store, partition_values, bucket, settings, restored, append_dv)


def restore_dv(store: FileStore, base: IndexFileMeta | None) -> BucketDvMaintainer | None:
    """A bucket's deletion vectors as ``base`` (its live index file, None for none) holds
    them; None when the table has no deletion vectors (Java's BucketedDvMaintainer.Factory)."""
    if not store.options.deletion_vectors_enabled or not store.primary_keys:
        return None
    dv_index = dv_index_of(store)
    return BucketDvMaintainer(dv_index, dv_index.read_all(base) if base is not None else {})


def dv_bases(store: FileStore, snapshot: Snapshot | None) -> dict[tuple[bytes, int], IndexFileMeta]:
    """Per (partition, bucket): the live deletion-vector index file of ``snapshot`` (none when
    the table has no deletion vectors)."""
    if not store.options.deletion_vectors_enabled or snapshot is None:
        return {}
    entries = dv_index_entries(index_handler_of(store), snapshot)
    return {(bytes(e.partition), e.bucket): e.index_file for e in entries}


def full_compaction_due(options: CoreOptions, identifier: int | None) -> bool:
    """Whether a commit fully compacts the buckets it wrote (Java's Flink writer:
    StoreSinkWrite.createWriteProvider and GlobalFullCompactionSinkWrite). Only when
    ``full-compaction.delta-commits`` is set (a negative value counts as unset) or
    ``changelog-producer`` is ``full-compaction``: then every commit whose identifier is a
    multiple of the value (at least 1; 1 when unset), and every batch commit (``identifier``
    None, Java's Long.MAX_VALUE)."""
    delta = options.full_compaction_delta_commits
    if delta is None:
        delta = -1
    if delta < 0 and options.changelog_producer != "full-compaction":
        return False
    return identifier is None or identifier % max(delta, 1) == 0


def compacts_on_write(store: FileStore) -> CompactSettings | None:
    """The settings a writer that owns its buckets compacts with, or None when it does not
    (``write-only``). Bucket modes without write compaction are the router's business
    (``compacts_at_commit``)."""
    if store.options.write_only:
        return None
    return CompactSettings.of(store)


def compact_written_buckets(
    store: FileStore, written: Collection[tuple[bytes, int]], identifier: int | None = None
) -> list[CommitMessage]:
    """The commit compaction of one writer, for buckets that several writers shared and just
    committed (a ``format("paimon")`` write): each bucket of ``written`` in the latest snapshot
    gets the picks a lone writer makes at its commit (``identifier``: a stream's commit
    identifier, None for a batch; see ``full_compaction_due``). The messages hold compact
    increments only; on failure every file written here is deleted first."""
    settings = compacts_on_write(store)
    snapshot = store.snapshot_manager.latest()
    if settings is None or snapshot is None or not written:
        return []
    files: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    totals: dict[tuple[bytes, int], int] = {}
    for e in store.manifest_io.live_entries(snapshot):
        key = (e.partition, e.bucket)
        if key in written:
            files.setdefault(key, []).append(e.file)
            totals[key] = e.total_buckets
    bases = dv_bases(store, snapshot)
    full = full_compaction_due(store.options, identifier)
    messages: list[CommitMessage] = []
    try:
        for (partition, bucket), restored in files.items():
            values = deserialize_with_arity(partition, store.partition_types)
            base = bases.get((partition, bucket))
            dv = restore_dv(store, base)
            manager = new_write_compaction(store, values, bucket, settings, restored, dv, base)
            try:
                increment = manager.prepare_commit(full)
            except BaseException:
                manager.abort()
                raise
            if not increment.is_empty():
                total = totals[(partition, bucket)]
                messages.append(
                    CommitMessage(partition, bucket, total, compact_increment=increment)
                )
    except BaseException:
        for m in messages:
            inputs = {f.file_name for f in m.compact_increment.compact_before}
            path = _bucket_path(store, m)
            for f in m.compact_increment.compact_after:
                if f.file_name not in inputs:
                    store.file_io.delete_quietly(data_file_path(store.external_paths, path, f))
        delete_written_index_files(store, messages)
        raise
    return messages


def _bucket_path(store: FileStore, message: CommitMessage) -> str:
    values = deserialize_with_arity(message.partition, store.partition_types)
    rel = store.partition_rel_path(values)
    return PathFactory(store.path).bucket_path(rel, message.bucket)
