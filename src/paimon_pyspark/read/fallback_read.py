"""Batch reads over two branches, partition by partition: ``scan.fallback-branch`` and
``scan.primary-branch``.

Mirrors org.apache.paimon.table.FallbackReadFileStoreTable. With ``scan.fallback-branch = f``
a batch read of the current branch takes every partition the current branch has from it, and
the partitions only ``f`` has from ``f``. With ``scan.primary-branch = p`` the roles swap: the
partitions ``p`` has come from ``p``, the rest from the current branch. A partition counts as
present when the branch's snapshot has a file in it that the filter's partition conjuncts
accept (Java lists partitions with the partition predicate alone), and is then read only from
that branch, with the whole filter. Writes, stream reads and the system tables see the current
branch alone, as Java's delegate does.

The other branch is opened at its own latest schema with the handle's dynamic options, less
``bucket``; a ``scan.snapshot-id`` is carried over as the other branch's latest snapshot
committed at or before that snapshot's time (Java's rewriteOtherOptions). Both branches must
have the same column types, nullability aside (Java's validateSchema); their own options,
primary keys and bucket counts may differ, and each split is read with its own branch's
schema and merge settings. A branch the option names that does not exist is skipped, as Java's
table factory skips it (creating or altering a table refuses it: :func:`check_other_branches`).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from paimon_pyspark.errors import OptionError, SchemaMismatchError
from paimon_pyspark.read.incremental import earlier_or_equal
from paimon_pyspark.read.nested_projection import NestedTableRead
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit, Plan, TableScan
from paimon_pyspark.read.store_ref import PlainPredicate, predicate_from_plain
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.store.branches import branch_path, check_branch_path_name
from paimon_pyspark.store.file_store import BRANCH_OPTION, FileStore
from paimon_pyspark.store.managers import SchemaManager, SnapshotManager

if TYPE_CHECKING:
    from collections.abc import Callable

    from paimon_pyspark.fs.file_io import FileIO

FALLBACK_BRANCH = "scan.fallback-branch"
PRIMARY_BRANCH = "scan.primary-branch"
_SNAPSHOT_ID = "scan.snapshot-id"
_FIRST_SNAPSHOT_ID = 1

_log = logging.getLogger(__name__)


def _named(value: str | None) -> str | None:
    """The branch an option names; None when unset or blank (Java's isNullOrWhitespaceOnly)."""
    return value if value is not None and value.strip() else None


def check_other_branches(
    file_io: FileIO, table_path: str, options: Mapping[str, str], table: str
) -> None:
    """Java's SchemaValidation.validateFallbackBranch, run where a schema is committed: not
    both options, and the branch named must exist."""
    fallback = _named(options.get(FALLBACK_BRANCH))
    primary = _named(options.get(PRIMARY_BRANCH))
    if fallback is not None and primary is not None:
        raise OptionError(
            f"Table '{table}': cannot set both '{FALLBACK_BRANCH}' and '{PRIMARY_BRANCH}' at "
            "the same time."
        )
    for key, name in ((FALLBACK_BRANCH, fallback), (PRIMARY_BRANCH, primary)):
        if name is None:
            continue
        check_branch_path_name(name, table)
        if not SchemaManager(file_io, branch_path(table_path, name)).list_ids():
            raise OptionError(
                f"Table '{table}': cannot set '{key}' = '{name}' because the branch '{name}' "
                "does not exist."
            )


@dataclass(frozen=True)
class OtherBranchSplit(DataSplit):
    """A split planned on the other branch, read with that branch's schema and settings
    (Java's FallbackDataSplit with ``isFallback``)."""

    branch: str = ""


@dataclass(frozen=True)
class TwoBranches:
    """The current branch's store, the other branch's, and which one a partition comes from
    first (``current_first``: ``scan.fallback-branch``; else ``scan.primary-branch``)."""

    current: FileStore
    other: FileStore
    current_first: bool


def two_branches(store: FileStore) -> TwoBranches | None:
    """The branches a batch read of ``store`` reads, or None when it reads its own alone."""
    fallback = _named(store.options.get(FALLBACK_BRANCH))
    name = fallback if fallback is not None else _named(store.options.get(PRIMARY_BRANCH))
    if name is None:
        return None
    check_branch_path_name(name, store.name)
    schema = SchemaManager(store.file_io, branch_path(store.path, name)).latest()
    if schema is None:
        key = FALLBACK_BRANCH if fallback is not None else PRIMARY_BRANCH
        _log.error("Table '%s': branch '%s' of '%s' not found.", store.name, name, key)
        return None
    dynamic = _other_options(store, name)
    base = store.name.split("$", 1)[0]
    other = FileStore(
        store.file_io, store.path, f"{base}$branch_{name}", schema, dynamic, store.snapshot_commit
    )
    _check_same_columns(store, other)
    return TwoBranches(store, other, fallback is not None)


def partition_sources(store: FileStore) -> list[FileStore]:
    """The branches whose partitions a listing of ``store`` shows, first one first: a partition
    of a later one shows only when no earlier one has it (Java's listPartitionEntries of
    FallbackReadScan, under ``$partitions`` and the catalog's partition listing)."""
    b = two_branches(store)
    if b is None:
        return [store]
    return [b.current, b.other] if b.current_first else [b.other, b.current]


def _other_options(store: FileStore, branch: str) -> dict[str, str]:
    """Java's rewriteOtherOptions: the handle's dynamic options on the other branch."""
    dynamic = dict(store.dynamic_options)
    dynamic[BRANCH_OPTION] = branch
    dynamic.pop("bucket", None)
    wanted = dynamic.get(_SNAPSHOT_ID)
    if wanted is not None and wanted.strip():
        millis = store.snapshot_manager.snapshot(int(wanted)).time_millis
        other = earlier_or_equal(
            SnapshotManager(store.file_io, branch_path(store.path, branch)), millis
        )
        dynamic[_SNAPSHOT_ID] = str(_FIRST_SNAPSHOT_ID if other is None else other.id)
    return dynamic


def _check_same_columns(current: FileStore, other: FileStore) -> None:
    """Java's validateSchema (same column count and types, nullability aside); the columns'
    names must match too, since our predicates and projections name columns."""
    a, b = current.fields, other.fields
    same = len(a) == len(b) and all(
        x.name == y.name and x.type.copy(True) == y.type.copy(True)
        for x, y in zip(a, b, strict=True)
    )
    if not same:
        raise SchemaMismatchError(
            f"Table '{current.name}': branch '{current.branch}' and '{other.branch}' do not "
            f"have the same row type; '{current.branch}' has "
            f"{[f'{f.name} {f.type}' for f in a]}, '{other.branch}' has "
            f"{[f'{f.name} {f.type}' for f in b]}."
        )


class FallbackTableScan(TableScan):
    """A batch scan over two branches (Java's FallbackReadScan): the partitions the first
    branch has, then the other partitions of the second. Sharding and slicing apply to the
    joined plan."""

    def __init__(
        self, branches: TwoBranches, predicate: Predicate | None, limit: int | None
    ) -> None:
        super().__init__(branches.current, predicate, limit)
        self.branches = branches
        self._all_levels = False

    def with_all_levels(self) -> TableScan:
        self._all_levels = True
        return super().with_all_levels()

    def _plan(self) -> Plan:
        b = self.branches
        first, second = (b.current, b.other) if b.current_first else (b.other, b.current)
        first_plan = self._scan(first, self.predicate, self.limit)._plan()
        on_partitions = self.partition_predicate
        if (
            self.limit is None
            and (on_partitions is None) == (self.predicate is None)
            and (on_partitions == self.predicate)
        ):
            listed = first_plan  # the same scan: its partitions are those listed
        else:
            listed = self._scan(first, on_partitions, None)._plan()
        complete = {bytes(s.partition) for s in listed.splits()}
        second_plan = self._scan(second, self.predicate, self.limit)._plan()
        splits = [self._mark(first, s) for s in first_plan.splits()]
        splits += [
            self._mark(second, s)
            for s in second_plan.splits()
            if bytes(s.partition) not in complete
        ]
        current_plan = first_plan if b.current_first else second_plan
        snapshot_id = current_plan.snapshot_id
        if snapshot_id is None:
            snapshot_id = (second_plan if b.current_first else first_plan).snapshot_id
        return Plan(snapshot_id, tuple(splits))

    def _scan(self, store: FileStore, predicate: Predicate | None, limit: int | None) -> TableScan:
        scan = TableScan(store, predicate, limit)
        scan.scan_all_files = self.scan_all_files
        if self.only_level is not None:
            scan.with_level(self.only_level)
        elif self._all_levels:
            scan.with_all_levels()
        return scan

    def _mark(self, store: FileStore, split: DataSplit) -> DataSplit:
        if store is self.branches.current:
            return split
        return as_other_branch([split], store.branch)[0]


def as_other_branch(splits: Sequence[DataSplit], branch: str) -> list[DataSplit]:
    """``splits`` marked as planned on ``branch`` (a Spark task marks the splits it decodes)."""
    out: list[DataSplit] = []
    for s in splits:
        values = {f.name: getattr(s, f.name) for f in dataclasses.fields(DataSplit)}
        out.append(OtherBranchSplit(**values, branch=branch))
    return out


_OTHER_MAGIC = b"PPob"
"""Before the encoded splits of another process's input partition that were planned on the
other branch (a Spark task decodes them as plain DataSplits and marks them again)."""


def split_by_branch(splits: Sequence[DataSplit]) -> tuple[list[DataSplit], list[DataSplit]]:
    """(the current branch's splits, the other branch's): a group sent to another process
    holds splits of one branch."""
    other: list[DataSplit] = [s for s in splits if isinstance(s, OtherBranchSplit)]
    return [s for s in splits if not isinstance(s, OtherBranchSplit)], other


def mark_other(payload: bytes) -> bytes:
    """``payload`` (encoded splits of the other branch) marked as such."""
    return _OTHER_MAGIC + payload


def unmark_other(payload: bytes) -> tuple[bytes, bool]:
    """(the encoded splits, whether :func:`mark_other` marked them)."""
    if payload.startswith(_OTHER_MAGIC):
        return payload[len(_OTHER_MAGIC) :], True
    return payload, False


def reading_other(read: TableRead, splits: Sequence[DataSplit]) -> list[DataSplit]:
    """``splits``, decoded in a task, marked for ``read`` as the other branch's."""
    if not isinstance(read, FallbackTableRead | FallbackNestedTableRead):
        return list(splits)
    return as_other_branch(splits, read.branches.other.branch)


class _TwoBranchRead(TableRead):
    """Reads each split with its own branch's read (Java's FallbackReadFileStoreTable.Read):
    the current branch's splits as the read it is mixed into, an :class:`OtherBranchSplit`
    with the same kind of read opened on the other branch."""

    branches: TwoBranches
    _other: TableRead | None = None
    _nested = False

    def _new_other(self) -> TableRead:
        if isinstance(self, NestedTableRead):
            return NestedTableRead(self.branches.other, self.names, self.predicate, None)
        return TableRead(self.branches.other, self.projection, self.predicate, None)

    def _read_tasks(
        self, splits: Sequence[DataSplit], by_row_group: bool
    ) -> Iterator[Callable[[], pa.Table]]:
        for split in splits:
            if isinstance(split, OtherBranchSplit):
                if self._other is None:
                    self._other = _like(self, self._new_other())
                yield from self._other._read_tasks([split], by_row_group)
            else:
                yield from super()._read_tasks([split], by_row_group)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        _, args = super().__reduce__()
        return _reopen_fallback, (*args, self._nested)


class FallbackTableRead(_TwoBranchRead):
    """A read over two branches."""

    def __init__(
        self,
        branches: TwoBranches,
        projection: Sequence[str] | None,
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        super().__init__(branches.current, projection, predicate, limit)
        self.branches = branches


class FallbackNestedTableRead(_TwoBranchRead, NestedTableRead):
    """:class:`FallbackTableRead` for a projection of ROW subfields."""

    _nested = True

    def __init__(
        self,
        branches: TwoBranches,
        names: Sequence[str],
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        NestedTableRead.__init__(self, branches.current, names, predicate, limit)
        self.branches = branches


_Read = TypeVar("_Read", bound=TableRead)


def _like(read: TableRead, other: _Read) -> _Read:
    """``other`` with the metadata columns and final-file choice of ``read``."""
    if read._metadata:
        other.with_metadata_columns(read._metadata)
    if read._leave_out_final:
        other.leaving_out_final_files()
    return other


def _reopen_fallback(
    store: FileStore,
    projection: list[str],
    predicate: PlainPredicate | None,
    limit: int | None,
    nested: bool,
) -> TableRead:
    """A read over two branches unpickled: ``store`` was reloaded from its StoreRef."""
    restored = predicate_from_plain(predicate, store.fields, store.name)
    return new_table_read(store, projection, restored, limit, nested)


def new_table_scan(store: FileStore, predicate: Predicate | None, limit: int | None) -> TableScan:
    """The batch scan of a user's read of ``store``: over two branches when an option says so."""
    branches = two_branches(store)
    if branches is None:
        return TableScan(store, predicate, limit)
    return FallbackTableScan(branches, predicate, limit)


def new_table_read(
    store: FileStore,
    projection: Sequence[str] | None,
    predicate: Predicate | None,
    limit: int | None,
    nested: bool = False,
) -> TableRead:
    """The read of a user's splits of ``store``: each split with its own branch's read;
    ``nested``: ``projection`` names ROW subfields (read/nested_projection.py)."""
    branches = two_branches(store)
    if nested:
        assert projection is not None
        if branches is None:
            return NestedTableRead(store, projection, predicate, limit)
        return FallbackNestedTableRead(branches, projection, predicate, limit)
    if branches is None:
        return TableRead(store, projection, predicate, limit)
    return FallbackTableRead(branches, projection, predicate, limit)


__all__ = [
    "FALLBACK_BRANCH",
    "PRIMARY_BRANCH",
    "FallbackNestedTableRead",
    "FallbackTableRead",
    "FallbackTableScan",
    "OtherBranchSplit",
    "TwoBranches",
    "as_other_branch",
    "check_other_branches",
    "mark_other",
    "new_table_read",
    "new_table_scan",
    "partition_sources",
    "reading_other",
    "split_by_branch",
    "two_branches",
    "unmark_other",
]
