"""TableRead: splits in, Arrow out.

Mirrors org.apache.paimon.table.source.TableRead. Append tables (raw-convertible splits): each
data file is read with only the columns needed, mapped from the schema it was written with to
the current one by field id, filtered exactly, then projected; files are read concurrently.
Primary-key tables: each split (one bucket) is merged per key first (read/kv_read.py), then
filtered and projected; splits are read concurrently. An incremental read of a primary-key
table (read/incremental.py) reads a delta's records unmerged, without retractions, or, for a
diff, merges the bucket's files of both sides and keeps the new or changed rows.

A file with a deletion vector (``DataSplit.deletion_files``) is read whole, or row group by row
group, or in its ``with_slice`` range, and the vector's rows are dropped by the file positions
of the rows read (io/data_file_reader.py ``kept_rows``) in the same pass as the filter, before
any limit or merge sees them. The index files' bytes are read once per TableRead; files
without a vector take the same path as before.

The conjuncts of the filter on partition keys alone are evaluated once per split, on its
partition values, with the same Arrow expression the rows would get: every row of a split
holds those values, so a split they reject is not read, and rows of a split they accept are
filtered by the remaining conjuncts only.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.errors import FileMissingError, InvalidArgumentError, describe
from paimon_pyspark.io.data_file_reader import (
    kept_rows,
    read_data_file,
    row_group_rows,
    with_constants,
)
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.read import metadata_columns
from paimon_pyspark.read.arrow_stream import SplitStream
from paimon_pyspark.read.incremental import (
    CHANGELOG,
    DELTA,
    DIFF,
    added_records,
    all_records,
    diff_rows,
    incremental_mode,
)
from paimon_pyspark.read.kv_read import final_file, merge_read, raw_convertible
from paimon_pyspark.read.predicate import CompoundPredicate, Predicate, PredicateBuilder
from paimon_pyspark.read.row_tracking import tracking_fields, with_tracking
from paimon_pyspark.read.scan import DataSplit, Plan, TableScan
from paimon_pyspark.read.store_ref import (
    PlainPredicate,
    StoreRef,
    predicate_from_plain,
    predicate_to_plain,
)
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.deletion_vectors import DeletionFile, dv_index_of
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.types.arrow import to_arrow_type

if TYPE_CHECKING:
    import ray.data
    from duckdb import DuckDBPyConnection

    from paimon_pyspark.store.file_store import FileStore

_READ_THREADS = 4
_WHOLE_FILE_ROWS = 1_000_000
"""A stream reads files of at most this many rows whole, without looking at their row groups."""
_KEEP = "__paimon_dv_keep"
"""A file's deletion-vector mask as a column, so the filter and the vector take one pass."""


class Row(tuple[Any, ...]):
    """One row of ``TableRead.to_iterator``: a tuple, with pypaimon's InternalRow accessor."""

    __slots__ = ()

    def get_field(self, pos: int) -> Any:
        return self[pos]


class TableRead:
    def __init__(
        self,
        table: FileStore,
        projection: Sequence[str] | None,
        predicate: Predicate | None,
        limit: int | None,
    ) -> None:
        table.check_readable()
        self.table = table
        self.projection = list(projection) if projection is not None else table.field_names
        self.predicate = predicate
        self.limit = limit
        self._tracking = tracking_fields(table, self.projection)
        by_name = {f.name: f for f in (*table.fields, *self._tracking)}
        self.output_fields = [by_name[n] for n in self.projection]
        needed = set(self.projection) | (predicate.fields() if predicate else set())
        self.read_fields = [f for f in table.fields if f.name in needed]
        self.output_schema = pa.schema(
            [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in self.output_fields]
        )
        self._filter = predicate.to_arrow_expression() if predicate else None
        on_keys, rest = _by_partition(predicate, set(table.partition_keys))
        self._partition_filter = on_keys.to_arrow_expression() if on_keys else None
        self._rest_filter = rest.to_arrow_expression() if rest else None
        self._partition_fields = list(table.table_schema.partition_fields())
        self._verdicts: dict[bytes, bool | None] = {}
        self._rows: dict[bytes, pa.Table | None] = {}
        self._merge_settings = MergeSettings.from_table(table) if table.primary_keys else None
        self._incremental = incremental_mode(table) if table.primary_keys else None
        self._before: dict[tuple[bytes, int], DataSplit] | None = None
        self._before_lock = threading.Lock()
        self._dv_index = dv_index_of(table)
        self._raw_dv = bool(table.primary_keys) and table.options.deletion_vectors_enabled
        self._leave_out_final = False
        self._metadata: list[str] = []

    def with_metadata_columns(self, names: Sequence[str]) -> TableRead:
        """This read, each row followed by the metadata columns ``names``
        (read/metadata_columns.py); of a primary-key table, file path and row index come only
        from the splits that need no merge, and a split that does is refused."""
        self._metadata = [n for n in metadata_columns.NAMES if n in names]
        extra = metadata_columns.arrow_fields(self._metadata, self._partition_fields)
        self.output_schema = pa.schema([*self.output_schema, *extra])
        return self

    def leaving_out_final_files(self) -> TableRead:
        """This read, giving of each primary-key split only the merged rows that do not come
        from its ``kv_read.final_file``: for a reader that reads those files as they are
        (spark/native.py hands them to Spark's Parquet reader)."""
        self._leave_out_final = True
        return self

    def to_arrow(self, splits: Sequence[DataSplit], parallelism: int | None = None) -> pa.Table:
        """The rows of ``splits``; ``parallelism``: threads reading files (pypaimon's
        argument; default 4, 1 reads serially)."""
        threads = self._parallelism("to_arrow", parallelism)
        parts = list(self._parts(self._splits("to_arrow", splits), threads))
        if not parts:
            return self.output_schema.empty_table()
        result = pa.concat_tables(parts)
        if self.limit is not None and result.num_rows > self.limit:
            result = result.slice(0, self.limit)
        return result

    def to_arrow_batch_reader(
        self, splits: Sequence[DataSplit], *, parallelism: int | None = None
    ) -> pa.RecordBatchReader:
        """The rows of ``splits`` as a stream, in plan order; ``parallelism`` (pypaimon's
        keyword; default 4) threads read the next files or row groups ahead."""
        checked = self._splits("to_arrow_batch_reader", splits)
        threads = self._parallelism("to_arrow_batch_reader", parallelism)
        batches = self._batches(checked, threads)
        return pa.RecordBatchReader.from_batches(self.output_schema, batches)

    def to_pandas(
        self, splits: Sequence[DataSplit], parallelism: int | None = None
    ) -> pd.DataFrame:
        threads = self._parallelism("to_pandas", parallelism)
        return self.to_arrow(self._splits("to_pandas", splits), threads).to_pandas()

    def to_iterator(self, splits: Sequence[DataSplit]) -> Iterator[Row]:
        """The rows of ``splits`` one at a time, as :class:`Row` tuples of the projected fields
        (pypaimon's ``to_iterator``; its rows are InternalRows, ours answer ``get_field`` too).
        Reads one file (or merged bucket) at a time."""
        checked = self._splits("to_iterator", splits)

        def rows() -> Iterator[Row]:
            for batch in self._batches(checked):
                columns = [column.to_pylist() for column in batch.columns]
                yield from (Row(values) for values in zip(*columns, strict=True))

        return rows()

    def to_duckdb(
        self,
        splits: Sequence[DataSplit],
        table_name: str,
        connection: DuckDBPyConnection | None = None,
    ) -> DuckDBPyConnection:
        """``connection`` (or a new in-memory DuckDB) with the rows of ``splits`` registered as
        ``table_name`` (pypaimon's ``to_duckdb``).

        Registered as an Arrow stream source, not a table: nothing is read until a query scans
        it, a scan holds a few batches at a time, and each query reads the splits again
        (read/arrow_stream.py), so every query sees the same rows.
        """
        import duckdb

        checked = self._splits("to_duckdb", splits)
        if not isinstance(table_name, str) or not table_name.strip():
            raise InvalidArgumentError(
                f"Table '{self.table.name}': TableRead.to_duckdb(table_name) takes a non-empty "
                f"string, got {describe(table_name)}."
            )
        con = duckdb.connect(database=":memory:") if connection is None else connection
        con.register(table_name, SplitStream(self, checked))
        return con

    def to_ray(
        self,
        splits: Sequence[DataSplit],
        *,
        ray_remote_args: dict[str, Any] | None = None,
        concurrency: int | None = None,
        override_num_blocks: int | None = None,
        **read_args: Any,
    ) -> ray.data.Dataset:
        """A Ray Dataset of the rows of ``splits``, read by parallel Ray tasks (pypaimon's
        ``to_ray``; read/ray_datasource.py). ``ray_remote_args``, ``concurrency``,
        ``override_num_blocks`` and ``read_args`` go to ``ray.data.read_datasource``. Each
        task reloads the table from the warehouse; a limit holds for the whole dataset.
        """
        import ray.data

        from paimon_pyspark.read.ray_datasource import RayDatasource

        checked = self._splits("to_ray", splits)
        if override_num_blocks is not None and (
            isinstance(override_num_blocks, bool)
            or not isinstance(override_num_blocks, int)
            or override_num_blocks < 1
        ):
            raise InvalidArgumentError(
                f"Table '{self.table.name}': TableRead.to_ray(override_num_blocks) takes an int "
                f">= 1, or None, got {describe(override_num_blocks)}."
            )
        if not checked:
            return ray.data.from_arrow(self.output_schema.empty_table())
        dataset: ray.data.Dataset = ray.data.read_datasource(
            RayDatasource(self, checked),
            ray_remote_args=ray_remote_args,
            concurrency=concurrency,
            override_num_blocks=override_num_blocks,
            **read_args,
        )
        if self.limit is not None:
            dataset = dataset.limit(self.limit)
        return dataset

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickles as plain values (Ray ships a read to its tasks; pypaimon's reads pickle):
        the store's reference, the projection, the filter as tuples and the limit. Unpickling
        reads the table's schema back from the warehouse (read/store_ref.py)."""
        predicate = predicate_to_plain(self.predicate)
        return _reopen, (StoreRef.of(self.table), list(self.projection), predicate, self.limit)

    def _parallelism(self, call: str, parallelism: object) -> int:
        if parallelism is None:
            return _READ_THREADS
        if isinstance(parallelism, bool) or not isinstance(parallelism, int) or parallelism < 1:
            raise InvalidArgumentError(
                f"Table '{self.table.name}': TableRead.{call}(parallelism) takes an int >= 1, "
                f"or None, got {describe(parallelism)}."
            )
        return parallelism

    def _splits(self, call: str, splits: object) -> list[DataSplit]:
        """``splits`` as a list of DataSplits, or a typed error naming what came instead;
        InvalidSplitError for one naming a path that is not the table's (a split may be built
        by hand or decoded in another process), before any file is opened."""
        where = f"Table '{self.table.name}': TableRead.{call}(splits)"
        if isinstance(splits, Plan):
            raise InvalidArgumentError(f"{where} takes plan.splits(), not the Plan itself.")
        if not isinstance(splits, list | tuple):
            raise InvalidArgumentError(
                f"{where} takes a list of DataSplits from a scan's plan().splits(), got "
                f"{describe(splits)}."
            )
        for s in splits:
            if not isinstance(s, DataSplit):
                raise InvalidArgumentError(
                    f"{where} holds {describe(s)}; each split is a DataSplit from a scan's "
                    "plan().splits()."
                )
            s.check_paths(self.table)  # every split, before any file is opened
        return list(splits)

    def _parts(self, splits: Sequence[DataSplit], threads: int = _READ_THREADS) -> list[pa.Table]:
        """Every split's rows, read concurrently: per file, or per merged bucket."""
        tasks = list(self._read_tasks(splits, by_row_group=False))
        if len(tasks) <= 1 or threads == 1:
            return [t() for t in tasks]
        with ThreadPoolExecutor(max_workers=min(threads, len(tasks))) as pool:
            return list(pool.map(lambda t: t(), tasks))

    def _read_tasks(
        self, splits: Sequence[DataSplit], by_row_group: bool
    ) -> Iterator[Callable[[], pa.Table]]:
        """One task per file or merged bucket of the splits the filter may match; with
        ``by_row_group`` (a stream, which then holds row groups, not whole files), one per row
        group of a Parquet file of more than ``_WHOLE_FILE_ROWS`` rows, its footer read when the
        stream reaches it."""
        for split in splits:
            if self._verdict(split) is False:
                continue
            if (
                self._merge_settings is not None
                and not self._reads_raw(split)
                and not self._reads_raw_for_metadata(split)
            ):
                yield partial(self._read_merged, split)
                continue
            deletions = split.deletion_files or (None,) * len(split.files)
            for f, deletion in zip(split.files, deletions, strict=True):
                groups = None
                big = by_row_group and f.row_count > _WHOLE_FILE_ROWS
                if big and split.file_rows(f) is None:
                    groups = row_group_rows(self.table, split.bucket_path, f)
                if groups is None or len(groups) <= 1:
                    yield partial(self._read_one, split, f, deletion)
                    continue
                vector = self._vector(split, f, deletion)  # read once for all its row groups
                first = 0
                for g, rows in enumerate(groups):
                    yield partial(self._read_one, split, f, vector, g, first)
                    first += rows

    def _reads_raw(self, split: DataSplit) -> bool:
        """Whether a primary-key split is read file by file as an append split is: with
        deletion vectors, a batch split whose files are all above level 0 without retractions
        (Java's PrimaryKeyTableRawFileSplitReadProvider), so only the columns asked for are
        decoded and its files are read concurrently."""
        settings = self._merge_settings
        return (
            settings is not None
            and self._raw_dv
            and self._incremental is None
            and not self._leave_out_final
            and split.bucket != POSTPONE_BUCKET
            and all(f.level > 0 for f in split.files)
            and raw_convertible(split.files, settings, deletion_vectors=True)
        )

    def _reads_raw_for_metadata(self, split: DataSplit) -> bool:
        """Whether a primary-key split is read file by file for the file path or row index
        asked for: its files are its rows as they are (Java reads such a split raw)."""
        settings = self._merge_settings
        return (
            settings is not None
            and bool(metadata_columns.PER_FILE.intersection(self._metadata))
            and self._incremental is None
            and not self._leave_out_final
            and split.bucket != POSTPONE_BUCKET
            and raw_convertible(split.files, settings, self.table.options.deletion_vectors_enabled)
        )

    def _units(
        self, splits: Sequence[DataSplit], threads: int = _READ_THREADS
    ) -> Iterator[pa.Table]:
        """Every split's rows in order, read ahead on ``threads`` threads: at most ``threads``
        row groups, files or merged buckets are read while the caller holds the one before."""
        tasks = self._read_tasks(splits, by_row_group=True)
        if threads == 1:
            for t in tasks:
                yield t()
            return
        pool = ThreadPoolExecutor(max_workers=threads)
        try:
            ahead: deque[Future[pa.Table]] = deque()
            waiting = iter(tasks)
            for t in itertools.islice(waiting, threads):
                ahead.append(pool.submit(t))
            while ahead:
                table = ahead.popleft().result()
                following = next(waiting, None)
                if following is not None:
                    ahead.append(pool.submit(following))
                yield table
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _batches(
        self, splits: Sequence[DataSplit], threads: int = _READ_THREADS
    ) -> Iterator[pa.RecordBatch]:
        remaining = self.limit
        for table in self._units(splits, threads):
            if remaining is not None:
                table = table.slice(0, remaining)
                remaining -= table.num_rows
            yield from table.to_batches()
            if remaining is not None and remaining <= 0:
                return

    def _read_one(
        self,
        split: DataSplit,
        f: DataFileMeta,
        deletion: DeletionFile | DeletionVector | None,
        row_group: int | None = None,
        first_row: int = 0,
    ) -> pa.Table:
        """One file's rows (of a Parquet file, of ``row_group``, whose first row is the file's
        row ``first_row``), without those its deletion vector marks (``deletion``: where it
        is, or the vector); its partition's columns come from the split's partition values,
        not the file (Java's PartitionInfo): decoding a dictionary-encoded string column was
        two fifths of a 4-column file's read."""
        vector = self._vector(split, f, deletion)
        constants = self._partition_scalars(split)
        fields = self.read_fields
        if constants:
            fields = [x for x in fields if x.name not in constants]
        rows = split.file_rows(f)  # a with_slice split reads part of a file
        if rows is not None:
            first_row = rows[0]
        tracking = self._tracking
        meta = self._metadata
        if not fields and constants and row_group is None and not tracking and not meta:
            count = f.row_count if rows is None else rows[1] - rows[0]
            if vector is not None:
                count = int(vector.keep_mask(count, first_row).sum())
            table = with_constants(pa.table({}), self.read_fields, constants, count)
            return self._filtered(split, table).select(self.projection)
        if fields or not (tracking or meta):
            table = read_data_file(self.table, split.bucket_path, f, fields, row_group=row_group)
        else:  # only row-tracking, metadata (and partition) columns: no file column decoded
            count = f.row_count if row_group is None else self._group_rows(split, f, row_group)
            table = pa.table({_KEEP: pa.nulls(count)}).drop_columns([_KEEP])
        if rows is not None:
            table = table.slice(rows[0], rows[1] - rows[0])
        table = with_tracking(
            self.table, split.bucket_path, f, table, tracking, first_row, row_group
        )
        if meta:  # positions counted before any row is dropped
            path = data_file_path(self.table.external_paths, split.bucket_path, f, self.table.name)
            table = metadata_columns.append_columns(
                table,
                meta,
                self._partition_row(split),
                self._partition_fields,
                split.bucket,
                path,
                first_row,
            )
        keep = kept_rows(vector, table.num_rows, first_row)
        if keep is not None and self._row_filter(split) is None:
            table, keep = table.filter(pa.array(keep)), None
        if meta and constants:  # with_constants keeps only the fields it is given
            held = table.select(meta)
            table = with_constants(table, [*self.read_fields, *tracking], constants)
            for name in meta:
                table = table.append_column(held.schema.field(name), held.column(name))
        else:
            table = with_constants(table, [*self.read_fields, *tracking], constants)
        return self._filtered(split, table, keep).select([*self.projection, *meta])

    def _group_rows(self, split: DataSplit, f: DataFileMeta, row_group: int) -> int:
        groups = row_group_rows(self.table, split.bucket_path, f)
        return f.row_count if groups is None else groups[row_group]

    def _vector(
        self, split: DataSplit, f: DataFileMeta, deletion: DeletionFile | DeletionVector | None
    ) -> DeletionVector | None:
        """The deletion vector of file ``f`` of ``split`` that ``deletion`` points at."""
        if deletion is None or isinstance(deletion, DeletionVector):
            return deletion
        try:
            return self._dv_index.read(deletion)
        except FileMissingError as e:
            raise FileMissingError(
                f"Table '{self.table.name}': the deletion vector of data file "
                f"'{split.bucket_path}/{f.file_name}' is in index file '{deletion.path}', which "
                f"is missing: {e}",
                e.path,
            ) from e

    def _vectors(
        self,
        split: DataSplit,
        files: Sequence[DataFileMeta],
        deletions: Sequence[DeletionFile | None] | None,
    ) -> dict[str, DeletionVector]:
        """The deletion vectors of ``files`` by file name (``deletions``: where they are)."""
        out: dict[str, DeletionVector] = {}
        for f, deletion in zip(files, deletions or (), strict=False):
            vector = self._vector(split, f, deletion)
            if vector is not None:
                out[f.file_name] = vector
        return out

    def _partition_scalars(self, split: DataSplit) -> dict[str, pa.Scalar]:
        """The partition columns this read needs, as Arrow scalars of their type, or nothing
        when a value does not convert (those files are read as they are)."""
        read = {f.name for f in self.read_fields}
        if not any(f.name in read for f in self._partition_fields):
            return {}
        return {k: v for k, v in self._partition_values(split).items() if k in read}

    def _partition_values(self, split: DataSplit) -> dict[str, pa.Scalar]:
        """Every partition column of ``split`` as an Arrow scalar, or nothing when a value
        does not convert."""
        row = self._partition_row(split)
        if row is None:
            return {}
        return {n: c[0] for n, c in zip(row.column_names, row.columns, strict=True)}

    def _partition_row(self, split: DataSplit) -> pa.Table | None:
        """``split``'s partition values as a one-row Arrow table of their types (cached per
        partition), or None when they do not convert."""
        if split.partition in self._rows:
            return self._rows[split.partition]
        row: pa.Table | None
        try:
            row = pa.table(
                [
                    pa.array([v], to_arrow_type(f.type))
                    for f, v in zip(self._partition_fields, split.partition_values, strict=True)
                ],
                names=[f.name for f in self._partition_fields],
            )
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            row = None
        self._rows[split.partition] = row
        return row

    def _read_merged(self, split: DataSplit) -> pa.Table:
        """A primary-key split: merge its files per key, then filter and project."""
        assert self._merge_settings is not None
        if self._incremental == DELTA:
            # Java's delta splits carry no deletion files (IncrementalDeltaStartingScanner)
            table = added_records(self.table, split.bucket_path, split.files)
        elif self._incremental == CHANGELOG:
            table = all_records(self.table, split.bucket_path, split.files)
        elif self._incremental == DIFF:
            path, settings = split.bucket_path, self._merge_settings
            start = self._before_split(split)
            before_files = start.before_files or ()
            before_vectors = self._vectors(split, before_files, start.before_deletion_files)
            before = merge_read(self.table, path, before_files, settings, vectors=before_vectors)
            after_vectors = self._vectors(split, split.files, split.deletion_files)
            after = merge_read(self.table, path, split.files, settings, vectors=after_vectors)
            table = diff_rows(before, after, self.table.trimmed_primary_keys)
        else:
            postpone = split.bucket == POSTPONE_BUCKET  # with_scan_all_files: in write order
            settings = self._merge_settings
            final = None
            if self._leave_out_final and not postpone:
                final = final_file(split.files, settings)
            constants = self._partition_values(split)
            vectors = self._vectors(split, split.files, split.deletion_files)
            table = merge_read(
                self.table,
                split.bucket_path,
                split.files,
                settings,
                postpone,
                final,
                constants,
                vectors,
            )
        table = self._filtered(split, table).select(self.projection)
        if self._metadata:
            metadata_columns.refuse_merged(self.table.name, self._metadata)
            table = metadata_columns.append_columns(
                table,
                self._metadata,
                self._partition_row(split),
                self._partition_fields,
                split.bucket,
            )
        return table

    def _before_split(self, split: DataSplit) -> DataSplit:
        """A diff split with the start snapshot's files of its bucket (and their deletion
        files): itself, or, for a split whose encoding dropped them (a Spark task's), the
        table's diff plan's split of that bucket."""
        if split.before_files is not None:
            return split
        with self._before_lock:
            if self._before is None:
                plan = TableScan(self.table, None, None).plan()
                self._before = {(s.partition, s.bucket): s for s in plan.splits()}
            return self._before.get((split.partition, split.bucket), split)

    def _filtered(
        self, split: DataSplit, table: pa.Table, keep: npt.NDArray[np.bool_] | None = None
    ) -> pa.Table:
        """The rows of ``split`` that match: by the conjuncts the partition does not decide
        when it matches the others, by the whole filter when its values could not be judged;
        of those, the ones ``keep`` (a file's deletion vector) keeps, in the same pass."""
        row_filter = self._row_filter(split)
        if keep is not None:
            marked = table.append_column(_KEEP, pa.array(keep))
            row_filter = pc.field(_KEEP) if row_filter is None else row_filter & pc.field(_KEEP)
            return marked.filter(row_filter).drop_columns([_KEEP])
        return table if row_filter is None else table.filter(row_filter)

    def _row_filter(self, split: DataSplit) -> pc.Expression | None:
        return self._rest_filter if self._verdict(split) else self._filter

    def _verdict(self, split: DataSplit) -> bool | None:
        """Whether the filter's partition conjuncts hold for every row of ``split`` (True), for
        none (False), or None when its partition values do not make an Arrow row."""
        if self._partition_filter is None:
            return True
        if split.partition in self._verdicts:
            return self._verdicts[split.partition]
        row = self._partition_row(split)
        verdict: bool | None = None
        if row is not None:
            try:
                verdict = row.filter(self._partition_filter).num_rows == 1
            except (pa.ArrowException, TypeError, ValueError, OverflowError):
                verdict = None
        self._verdicts[split.partition] = verdict
        return verdict


def _reopen(
    store: FileStore, projection: list[str], predicate: PlainPredicate | None, limit: int | None
) -> TableRead:
    """A TableRead unpickled: ``store`` was reloaded from its StoreRef."""
    restored = predicate_from_plain(predicate, store.fields, store.name)
    return TableRead(store, projection, restored, limit)


def _by_partition(
    predicate: Predicate | None, keys: set[str]
) -> tuple[Predicate | None, Predicate | None]:
    """``predicate`` as (its conjuncts on ``keys`` alone, the other conjuncts)."""
    if predicate is None or not keys:
        return None, predicate
    if predicate.fields() <= keys:
        return predicate, None
    if isinstance(predicate, CompoundPredicate) and predicate.function == "and":
        on_keys = [c for c in predicate.children if c.fields() <= keys]
        rest = [c for c in predicate.children if not c.fields() <= keys]
        return PredicateBuilder.and_predicates(on_keys), PredicateBuilder.and_predicates(rest)
    return None, predicate
