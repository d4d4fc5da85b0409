"""Commit-time conflict rules: what a commit may not do to the files it commits onto.

Mirrors org.apache.paimon.operation.commit.ConflictDetection (Java 1.4, ``checkConflicts``)
for the tables this package writes. ``FileStoreCommit`` runs it on the attempt's latest
snapshot for the commits Java checks (see ``FileStoreCommit.commit``): COMPACT and OVERWRITE
always, an APPEND only when it removes files (it is then committed as OVERWRITE), when the
caller asks (Java's ``appendCommitCheckConflict``) or when it is re-committed by
``filter_and_commit`` (Java's ``checkAppendFiles``). Base = the live files of the partitions the
commit changes; the rules run in Java's order and the first broken one aborts the commit
(no retry):

1. ``checkBucketKeepSame`` (not for OVERWRITE): within a partition every base and delta entry
   with a total bucket count above 0 has the same count. A writer or compaction planned
   before a rescale, or configured with another ``bucket``, cannot mix bucket layouts; only an
   overwrite (rescale) changes the count. Dynamic (-1), unaware and postpone (-2) entries are
   not checked.
2. the delta alone merges (a file is not added twice, nor added after being deleted);
3. ``checkDeleteInEntries``: every file the commit removes is still live ("File deletion
   conflicts detected!");
4. ``checkKeyRange`` (primary-key tables): in every (partition, bucket, level >= 1) of the
   merged result the files, sorted by min key, do not overlap ("LSM conflicts detected!").
   Keys compare as Java's key comparator compares them (``KeyOrder.sorted_run_check``): a
   NaN bound compares equal to any key, so it always overlaps its neighbour.
   Two compactions of one bucket that both took their own inputs to the same level would
   otherwise leave a level that is not a sorted run, and reads would lose updates.
5. Deletion vectors. Bucket-unaware tables: Java's pairing (``buildBaseEntriesWithDV``,
   ``buildDeltaEntriesWithDV``): every data file is identified together with the index file
   holding its vector, so a commit that changes or drops a vector must delete the index file
   it read, and one that deletes a data file must delete its vector too; a vector created for
   a file that is not live is refused. Buckets (primary-key tables in every bucket mode, fixed
   append buckets), beyond Java, whose bucketed writers commit a bucket's new index file
   alone: a commit that replaces a bucket's index file names the file it read as deleted
   (none: it read the bucket without vectors), which must still be the bucket's live file,
   and every vector of its new file must belong to a live data file of the bucket. Two
   writers that changed one bucket's vectors from the same base cannot both commit, so
   neither loses the other's marks (Java's index manifest would keep the last file only).

The data-evolution row-id rules of Java's class are not here: this package writes no row ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from paimon_pyspark.errors import CommitConflictError
from paimon_pyspark.mergetree.universal import KeyOrder
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.manifest import IndexManifestEntry, ManifestEntry
from paimon_pyspark.store.index_io import DELETION_VECTORS_INDEX
from paimon_pyspark.store.manifest_io import merge_entries
from paimon_pyspark.types.data_types import DataType

_CAUSES = (
    "Conflicts like this are caused by several jobs writing or compacting the same partition "
    "at the same time, or by a writer committing work planned on an old snapshot."
)


class ConflictDetection:
    """The conflict rules of one table's commits (see the module docstring).

    ``key_types``: the trimmed primary key (empty for append tables: no key-range rule).
    ``partition_text``: partition bytes -> ``k=v`` text for messages.
    ``unaware_vectors``: a bucket-unaware table with deletion vectors (Java's pairing rule).
    """

    def __init__(
        self,
        table_name: str,
        commit_user: str,
        key_types: Sequence[DataType],
        partition_text: Callable[[bytes], str],
        unaware_vectors: bool = False,
    ) -> None:
        self.table_name = table_name
        self.commit_user = commit_user
        self.key_types = tuple(key_types)
        self.partition_text = partition_text
        self.unaware_vectors = unaware_vectors

    def reads_base_index(self, delta_index: Sequence[IndexManifestEntry]) -> bool:
        """Whether ``check_conflicts`` needs the base snapshot's index entries."""
        return self.unaware_vectors or any(_is_dv(e) for e in delta_index)

    def check_conflicts(
        self,
        latest_id: int,
        latest_user: str,
        base: Sequence[ManifestEntry],
        delta: Sequence[ManifestEntry],
        kind: str,
        base_index: Sequence[IndexManifestEntry] = (),
        delta_index: Sequence[IndexManifestEntry] = (),
    ) -> None:
        """Raise CommitConflictError if ``delta`` cannot be committed onto ``base``.

        ``base``: the live entries (merged, ADD only) of the changed partitions in snapshot
        ``latest_id``, committed by ``latest_user``; ``kind``: the snapshot kind of this
        commit (APPEND, COMPACT or OVERWRITE). ``base_index``: the live index entries of those
        partitions (read when ``reads_base_index``), ``delta_index``: this commit's index
        changes.
        """
        where = (
            f"Base snapshot {latest_id} was committed by commit user {latest_user}; this "
            f"commit user is {self.commit_user}."
        )
        end = f"This {kind} snapshot was not committed."
        if kind != "OVERWRITE":
            self._check_bucket_keep_same([*base, *delta], where, end)
        merge_entries(delta)
        merged = merge_entries([*base, *delta])
        for e in merged:
            if e.kind == mf.KIND_DELETE:
                raise CommitConflictError(
                    f"Table '{self.table_name}': file deletion conflicts detected! Give up "
                    f"committing. File {e.file.file_name} ({self._place(e)}) is not live any "
                    f"more: a concurrent commit removed it. {where} {_CAUSES} {end}"
                )
        if self.key_types:
            self._check_key_range(merged, where, end)
        if self.unaware_vectors:
            self._check_paired_vectors(base, delta, base_index, delta_index, where, end)
        elif any(_is_dv(e) for e in delta_index):
            self._check_bucket_vectors(merged, base_index, delta_index, where, end)

    def _check_bucket_vectors(
        self,
        merged: Sequence[ManifestEntry],
        base_index: Sequence[IndexManifestEntry],
        delta_index: Sequence[IndexManifestEntry],
        where: str,
        end: str,
    ) -> None:
        """Rule 5 for buckets: each bucket's vectors change from its live index file."""
        live = {(e.partition, e.bucket): e.index_file.file_name for e in base_index if _is_dv(e)}
        changes: dict[tuple[bytes, int], list[IndexManifestEntry]] = {}
        for e in delta_index:
            if _is_dv(e):
                changes.setdefault((e.partition, e.bucket), []).append(e)
        for (partition, bucket), entries in changes.items():
            place = f"{self._partition(partition)}, bucket {bucket}"
            current = live.get((partition, bucket))
            read = {e.index_file.file_name for e in entries if e.kind == mf.KIND_DELETE}
            added = [e.index_file for e in entries if e.kind == mf.KIND_ADD]
            if (read and current not in read) or (not read and added and current is not None):
                was = ", ".join(sorted(read)) if read else "no index file"
                now = current if current is not None else "none"
                raise CommitConflictError(
                    f"Table '{self.table_name}': deletion vector conflicts detected! Give up "
                    f"committing. The deletion vectors of {place} were changed by a "
                    f"concurrent commit: this commit changes them from {was}, but the "
                    f"bucket's live index file is {now}; committing would lose the other "
                    f"commit's deleted rows. {where} {_CAUSES} {end}"
                )
            files = {
                e.file.file_name
                for e in merged
                if e.kind == mf.KIND_ADD and (e.partition, e.bucket) == (partition, bucket)
            }
            for meta in added:
                for r in meta.dv_ranges or ():
                    if r.data_file_name not in files:
                        raise CommitConflictError(
                            f"Table '{self.table_name}': deletion vector conflicts detected! "
                            f"Give up committing. Index file {meta.file_name} holds a deletion "
                            f"vector for data file {r.data_file_name} in {place}, which is not "
                            f"live: a concurrent commit removed it. {where} {_CAUSES} {end}"
                        )

    def _check_paired_vectors(
        self,
        base: Sequence[ManifestEntry],
        delta: Sequence[ManifestEntry],
        base_index: Sequence[IndexManifestEntry],
        delta_index: Sequence[IndexManifestEntry],
        where: str,
        end: str,
    ) -> None:
        """Rule 5 for bucket-unaware tables (Java's entries with their vector's index file)."""

        def conflict(reason: str) -> CommitConflictError:
            return CommitConflictError(
                f"Table '{self.table_name}': deletion vector conflicts detected! Give up "
                f"committing. {reason} {where} {_CAUSES} {end}"
            )

        holder: dict[str, str] = {}
        for i in base_index:
            if _is_dv(i) and i.kind == mf.KIND_ADD:
                for r in i.index_file.dv_ranges or ():
                    if r.data_file_name in holder:
                        raise conflict(
                            f"Data file {r.data_file_name} has a vector in two live index "
                            f"files ({holder[r.data_file_name]}, {i.index_file.file_name})."
                        )
                    holder[r.data_file_name] = i.index_file.file_name
        paired: list[tuple[int, tuple[object, ...], str]] = [
            (b.kind, (*b.identifier(), holder.get(b.file.file_name)), b.file.file_name)
            for b in base
        ]
        vectors: dict[str, list[IndexManifestEntry]] = {}
        for i in delta_index:
            if _is_dv(i):
                for r in i.index_file.dv_ranges or ():
                    vectors.setdefault(r.data_file_name, []).append(i)
        base_by_name = {e.file.file_name: e for e in base if e.kind == mf.KIND_ADD}
        for d in delta:
            found = vectors.pop(d.file.file_name, None)
            if found is not None and len(found) != 1:
                raise conflict(f"Data file {d.file.file_name} has more than one delta vector.")
            index_name = found[0].index_file.file_name if found else None
            paired.append((d.kind, (*d.identifier(), index_name), d.file.file_name))
        for name, found in vectors.items():
            target = base_by_name.get(name)
            if target is None:
                raise conflict(
                    f"Trying to create deletion vector on file {name} which is not "
                    "previously added."
                )
            for v in found:
                paired.append((v.kind, (*target.identifier(), v.index_file.file_name), name))
            if len(found) == 1 and found[0].kind == mf.KIND_ADD:
                paired.append((mf.KIND_DELETE, (*target.identifier(), None), name))
        live: dict[tuple[object, ...], int] = {}
        names: dict[tuple[object, ...], str] = {}
        for kind, key, name in paired:
            names[key] = name
            if kind == mf.KIND_ADD:
                if key in live:
                    raise conflict(f"Trying to add file {name} which is already added.")
                live[key] = kind
            elif live.get(key) == mf.KIND_ADD:
                del live[key]
            else:
                live[key] = kind
        for key, kind in live.items():
            if kind == mf.KIND_DELETE:
                raise conflict(
                    f"Data file {names[key]} or its deletion vector (index file {key[-1]}) "
                    "is not live any more: a concurrent commit changed it."
                )

    def _check_bucket_keep_same(
        self, entries: Sequence[ManifestEntry], where: str, end: str
    ) -> None:
        """Java's ``checkBucketKeepSame``: one total bucket count per partition."""
        totals: dict[bytes, int] = {}
        for e in entries:
            if e.total_buckets <= 0:
                continue
            old = totals.setdefault(e.partition, e.total_buckets)
            if old != e.total_buckets:
                raise CommitConflictError(
                    f"Table '{self.table_name}': total buckets of "
                    f"{self._partition(e.partition)} changed from {old} to {e.total_buckets} "
                    f"without overwrite (file {e.file.file_name}, bucket {e.bucket}). Give up "
                    f"committing. {where} The bucket count of a partition changes only by an "
                    "overwrite (rescale); a writer or compaction planned with the old count "
                    f"must start again. {end}"
                )

    def _check_key_range(self, merged: Sequence[ManifestEntry], where: str, end: str) -> None:
        """Java's ``checkKeyRange``: every level >= 1 of every bucket is one sorted run."""
        order = KeyOrder(self.key_types)
        levels: dict[tuple[bytes, int, int], list[ManifestEntry]] = {}
        for e in merged:
            if e.file.level >= 1:
                levels.setdefault((e.partition, e.bucket, e.file.level), []).append(e)
        for (partition, bucket, level), files in levels.items():
            _, overlap = order.sorted_run_check(files, _min_key, _max_key)
            if overlap is not None:
                a, b = overlap
                raise CommitConflictError(
                    f"Table '{self.table_name}': LSM conflicts detected! Give up "
                    f"committing. In {self._partition(partition)}, bucket {bucket}, level "
                    f"{level} would not be a sorted run: file {a.file.file_name} (keys "
                    f"{self._keys(a)}) overlaps file {b.file.file_name} (keys "
                    f"{self._keys(b)}). {where} {_CAUSES} {end}"
                )

    def _keys(self, e: ManifestEntry) -> str:
        types = [t.copy(nullable=True) for t in self.key_types]
        low = deserialize_with_arity(e.file.min_key, types)
        high = deserialize_with_arity(e.file.max_key, types)
        return f"{_row_text(low)} to {_row_text(high)}"

    def _partition(self, partition: bytes) -> str:
        text = self.partition_text(partition)
        return f"partition {text}" if text else "the table (unpartitioned)"

    def _place(self, e: ManifestEntry) -> str:
        return f"{self._partition(e.partition)}, bucket {e.bucket}, level {e.file.level}"


def _min_key(e: ManifestEntry) -> bytes:
    return e.file.min_key


def _max_key(e: ManifestEntry) -> bytes:
    return e.file.max_key


def _is_dv(e: IndexManifestEntry) -> bool:
    return e.index_file.index_type == DELETION_VECTORS_INDEX


def _row_text(values: Sequence[Any]) -> str:
    return "(" + ", ".join(repr(v) for v in values) + ")"
