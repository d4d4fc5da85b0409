"""A primary-key table's changes as rows with their row kind: the shared reading of stream
reads, ``changelog`` incremental reads, ``$audit_log`` and ``$binlog``.

Java keeps a row's kind beside the row (``RowKind``: +I, -U, +U, -D, stored in a file as
``_VALUE_KIND`` 0..3). A change split (Java's DataSplit with ``isStreaming``: a snapshot's
delta or changelog files) is read by MergeFileSplitRead's no-merge reader: every record of its
files as written, in file order, retractions included. A batch split of ``$audit_log`` is
merged keeping deletes (AuditLogTable's ``forceKeepDelete``): each key's merged record with
the merged kind, a key whose newest record deletes it as -D.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.read.incremental import CHANGELOG, DELTA
from paimon_pyspark.read.kv_read import raw_convertible
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.key_value import VALUE_KIND
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.types.arrow import to_arrow_type

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

ROW_KIND_COLUMN = "_row_kind"
"""pypaimon's column of a stream read ``with_include_row_kind()``: first, a string."""
ROWKIND = "rowkind"
"""Java's SpecialFields.ROW_KIND: the first column of ``$audit_log`` and ``$binlog``."""
ROW_KIND_NAMES = ("+I", "-U", "+U", "-D")
"""Java's RowKind.shortString by byte value (``_VALUE_KIND``)."""
NONE = "none"


def changelog_producer(store: FileStore) -> str:
    """The table's ``changelog-producer`` (``none`` for an append table)."""
    return store.options.changelog_producer if store.primary_keys else NONE


def kind_names(kinds: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``_VALUE_KIND`` bytes as Java's short strings, vectorized."""
    values = kinds.combine_chunks() if isinstance(kinds, pa.ChunkedArray) else kinds
    return pa.array(ROW_KIND_NAMES, pa.string()).take(values.cast(pa.int8()))


def change_records(store: FileStore, bucket_path: str, files: Sequence[DataFileMeta]) -> pa.Table:
    """Every record of ``files`` as written, in file order, with its ``_VALUE_KIND``: the
    table's columns plus that one (Java's no-merge reader of a streaming split)."""
    records = read_kv_records(store, bucket_path, files)
    return records.select([*store.field_names, VALUE_KIND])


def merged_with_kinds(
    store: FileStore,
    bucket_path: str,
    files: Sequence[DataFileMeta],
    vectors: Mapping[str, DeletionVector] | None = None,
    keep_deletes: bool = True,
) -> pa.Table:
    """The merged record of every key of ``files`` with its kind (Java's merge reader),
    deletes kept with ``keep_deletes`` (``forceKeepDelete``): the table's columns plus
    ``_VALUE_KIND``."""
    records = read_kv_records(store, bucket_path, files, vectors=vectors)
    settings = MergeSettings.from_table(store)
    keys = store.table_schema.trimmed_primary_keys()
    merged = merge(records, keys, settings, drop_delete=not keep_deletes)
    return merged.select([*store.field_names, VALUE_KIND])


def with_kind_column(table: pa.Table, kinds: pa.Array, name: str) -> pa.Table:
    """``table`` with the kind strings ``kinds`` as its first column ``name``."""
    return table.add_column(0, pa.field(name, pa.string()), kinds)


def insert_kinds(rows: int) -> pa.Array:
    """``rows`` times +I: the kind of a row read from a full (merged) plan or an append table."""
    return pa.repeat(pa.scalar("+I", pa.string()), rows)


def pack_updates(changes: pa.Table, kinds: pa.Array, columns: Sequence[str]) -> pa.Table:
    """Java's PackChangelogReader under ``$binlog``'s stream read: a -U followed by a row (its
    +U) becomes one row of that row's kind whose every column is ``[before, after]``; every
    other row holds ``[value]``. ``kinds`` are the rows' kind strings; the result has
    ``rowkind`` first, then ``columns`` as arrays."""
    n = changes.num_rows
    before = np.asarray(pc.equal(kinds, "-U").to_numpy(zero_copy_only=False), dtype=bool)
    # Java reads the row after a -U as its pair, whatever it is: within a run of -U rows every
    # other one opens a pair, and a -U that ends the read stands alone
    idx = np.arange(n)
    run_start = np.maximum.accumulate(np.where(before, 0, idx + 1))
    opens = before & ((idx - run_start) % 2 == 0) & (idx + 1 < n)
    consumed = np.zeros(n, dtype=bool)
    consumed[1:] = opens[:-1]
    first = np.flatnonzero(~consumed)
    size = np.where(opens[first], 2, 1).astype(np.int32)
    offsets = pa.array(np.concatenate([[0], np.cumsum(size)]).astype(np.int32))
    rows_kind = kinds.take(pa.array(first + size - 1))
    out: dict[str, pa.Array] = {ROWKIND: rows_kind}
    for name in columns:
        column = changes.column(name).combine_chunks()
        out[name] = pa.ListArray.from_arrays(offsets, column)
    return pa.table(out)


def single_arrays(table: pa.Table, kinds: pa.Array, columns: Sequence[str]) -> pa.Table:
    """``$binlog``'s batch rows: ``rowkind`` then every column as a one-value array."""
    offsets = pa.array(np.arange(table.num_rows + 1, dtype=np.int32))
    out: dict[str, pa.Array] = {ROWKIND: kinds}
    for name in columns:
        out[name] = pa.ListArray.from_arrays(offsets, table.column(name).combine_chunks())
    return pa.table(out)


AUDIT_LOG = "audit_log"
BINLOG = "binlog"
CHANGE_TABLES = (AUDIT_LOG, BINLOG)
"""The system tables of changes, by the name after ``$``."""


class ChangesRead(TableRead):
    """A TableRead of changes: a change split (a stream's follow-up ``is_streaming`` split, an
    incremental ``delta`` or ``changelog`` split) gives every record as written, retractions
    included; ``kind_column`` (``_row_kind`` for pypaimon's stream read, ``rowkind`` for
    ``$audit_log``) puts each row's kind first. ``keep_deletes`` (``$audit_log``, Java's
    ``forceKeepDelete``): a merged split gives each key's merged kind, deleted keys as -D;
    else a merged split gives its merged kinds without deletes, and a split Java reads raw
    (rawConvertible, no ``forceKeepDelete``) and every row of an append table +I.
    ``layout`` = ``binlog``: the kind, then every column as an array, ``[before, after]`` for
    an update of a change split.
    ``projection`` may name ``kind_column`` anywhere (a system table's columns)."""

    def __init__(
        self,
        table: FileStore,
        projection: Sequence[str] | None,
        predicate: Predicate | None,
        limit: int | None,
        kind_column: str | None = None,
        keep_deletes: bool = False,
        layout: str = AUDIT_LOG,
    ) -> None:
        binlog = layout == BINLOG
        data = None if projection is None else [n for n in projection if n != kind_column]
        super().__init__(table, None if binlog else data, predicate, limit)
        self.kind_column = kind_column
        self.keep_deletes = keep_deletes
        self.layout = layout
        self.selected = None if projection is None else list(projection)
        """The output columns in order, when a projection asked for them."""
        if binlog:
            self.output_schema = pa.schema(
                [
                    pa.field(f.name, pa.list_(to_arrow_type(f.type)), True)
                    for f in self.output_fields
                ]
            )
        if kind_column is not None:
            kind = pa.field(kind_column, pa.string())
            self.output_schema = pa.schema([kind, *self.output_schema])
        if self.selected is not None and self.selected != self.output_schema.names:
            by_name = {f.name: f for f in self.output_schema}
            self.output_schema = pa.schema([by_name[n] for n in self.selected])

    def _is_change_split(self, split: DataSplit) -> bool:
        return bool(getattr(split, "is_streaming", False)) or self._incremental in (
            DELTA,
            CHANGELOG,
        )

    def _read_tasks(
        self, splits: Sequence[DataSplit], by_row_group: bool
    ) -> Iterator[Callable[[], pa.Table]]:
        keyed = self._merge_settings is not None
        for split in splits:
            if keyed and self._is_change_split(split):
                if self._verdict(split) is not False:
                    yield partial(self._read_changes, split)
            elif keyed and self.kind_column is not None and self._merged_kinds(split):
                if self._verdict(split) is not False:
                    yield partial(self._read_merged_kinds, split)
            elif self.kind_column is not None:
                for task in super()._read_tasks([split], by_row_group):
                    yield partial(self._inserted, task)
            else:
                yield from super()._read_tasks([split], by_row_group)

    def _read_changes(self, split: DataSplit) -> pa.Table:
        records = change_records(self.table, split.bucket_path, split.files)
        return self._shaped(self._filtered(split, records), pack=True)

    def _merged_kinds(self, split: DataSplit) -> bool:
        """Whether a batch split's rows take their kinds from a merge: always for
        ``keep_deletes``; else unless Java reads it raw (PrimaryKeyTableRawFileSplitReadProvider:
        raw convertible, every file's delete count known), whose rows are +I."""
        if self._incremental is not None or split.bucket == POSTPONE_BUCKET:
            return False
        if self.keep_deletes:
            return True
        assert self._merge_settings is not None
        dv = self.table.options.deletion_vectors_enabled
        return not raw_convertible(split.files, self._merge_settings, dv)

    def _read_merged_kinds(self, split: DataSplit) -> pa.Table:
        vectors = self._vectors(split, split.files, split.deletion_files)
        path, files = split.bucket_path, split.files
        merged = merged_with_kinds(self.table, path, files, vectors, self.keep_deletes)
        return self._shaped(self._filtered(split, merged), pack=False)

    def _inserted(self, task: Callable[[], pa.Table]) -> pa.Table:
        table = task()
        if self.layout == BINLOG:
            out = single_arrays(table, insert_kinds(table.num_rows), table.column_names)
        else:
            assert self.kind_column is not None
            out = with_kind_column(table, insert_kinds(table.num_rows), self.kind_column)
        return self._selected(out)

    def _selected(self, table: pa.Table) -> pa.Table:
        """``table`` as ``output_schema`` has it: the asked columns, in order."""
        if self.selected is not None:
            table = table.select(self.selected)
        return table if table.schema == self.output_schema else table.cast(self.output_schema)

    def _shaped(self, records: pa.Table, pack: bool) -> pa.Table:
        """Rows with ``_VALUE_KIND`` as this read gives them."""
        kinds = kind_names(records.column(VALUE_KIND))
        if self.layout == BINLOG:
            columns = self.projection
            if pack:
                return self._selected(pack_updates(records, kinds, columns))
            return self._selected(single_arrays(records, kinds, columns))
        table = records.select(self.projection)
        if self.kind_column is None:
            return table
        return self._selected(with_kind_column(table, kinds, self.kind_column))
