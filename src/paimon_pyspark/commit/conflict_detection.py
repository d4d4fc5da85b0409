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
   Two compactions of one bucket that both took their own inputs to the same level would
   otherwise leave a level that is not a sorted run, and reads would lose updates.

The deletion-vector pairing and data-evolution row-id rules of Java's class are not here: this
package writes neither deletion vectors nor row ids.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from paimon_pyspark.errors import CommitConflictError
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.store.manifest_io import merge_entries
from paimon_pyspark.types.data_types import DataType

KeyOrder = Callable[[bytes], Any]

_CAUSES = (
    "Conflicts like this are caused by several jobs writing or compacting the same partition "
    "at the same time, or by a writer committing work planned on an old snapshot."
)


def key_order(key_types: Sequence[DataType]) -> KeyOrder:
    """Serialized keys ordered field by field, nulls first, as Java's key comparator orders
    (``KeyComparatorSupplier`` over the trimmed primary key)."""
    types = [t.copy(nullable=True) for t in key_types]

    def order(row: bytes) -> tuple[tuple[bool, Any], ...]:
        values = deserialize_with_arity(row, types)
        return tuple((False, 0) if v is None else (True, v) for v in values)

    return order


class ConflictDetection:
    """The conflict rules of one table's commits (see the module docstring).

    ``key_types``: the trimmed primary key (empty for append tables: no key-range rule).
    ``partition_text``: partition bytes -> ``k=v`` text for messages.
    """

    def __init__(
        self,
        table_name: str,
        commit_user: str,
        key_types: Sequence[DataType],
        partition_text: Callable[[bytes], str],
    ) -> None:
        self.table_name = table_name
        self.commit_user = commit_user
        self.key_types = tuple(key_types)
        self.partition_text = partition_text

    def check_conflicts(
        self,
        latest_id: int,
        latest_user: str,
        base: Sequence[ManifestEntry],
        delta: Sequence[ManifestEntry],
        kind: str,
    ) -> None:
        """Raise CommitConflictError if ``delta`` cannot be committed onto ``base``.

        ``base``: the live entries (merged, ADD only) of the changed partitions in snapshot
        ``latest_id``, committed by ``latest_user``; ``kind``: the snapshot kind of this
        commit (APPEND, COMPACT or OVERWRITE).
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
        order = key_order(self.key_types)
        decoded: dict[bytes, Any] = {}

        def key(row: bytes) -> Any:
            value = decoded.get(row)
            if value is None:
                value = decoded[row] = order(row)
            return value

        levels: dict[tuple[bytes, int, int], list[ManifestEntry]] = {}
        for e in merged:
            if e.file.level >= 1:
                levels.setdefault((e.partition, e.bucket, e.file.level), []).append(e)
        for (partition, bucket, level), files in levels.items():
            files.sort(key=lambda e: key(e.file.min_key))
            for a, b in itertools.pairwise(files):
                if key(a.file.max_key) >= key(b.file.min_key):
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


def _row_text(values: Sequence[Any]) -> str:
    return "(" + ", ".join(repr(v) for v in values) + ")"
