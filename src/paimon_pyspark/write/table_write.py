"""TableWrite: Arrow in, commit messages out.

Mirrors org.apache.paimon.table.sink.TableWriteImpl over AppendOnlyFileStoreWrite and
KeyValueFileStoreWrite: every batch is checked against the table schema, split by partition and
bucket in vectorized form by the table's router (one per BucketMode, chosen once:
bucket/routers.py), and handed to the writer of that (partition, bucket): an AppendWriter for
append tables, a KeyValueWriter (sort buffer, merged level-0 runs) for primary-key tables.
Writers gather, encode and flush on a pool of ``write.parallelism`` threads (default: the cores),
since Arrow's gathers and its Parquet and ORC encoders release the GIL; the writes of one
(partition, bucket) run in order, one at a time.

Rows of a primary-key table carry a row kind: +I unless ``rowkind.field`` names a string column
holding ``+I``/``-U``/``+U``/``-D`` (kept as an ordinary column, as Java's RowKindGenerator
does). With ``ignore-delete`` retractions are dropped here, as Java's TableWriteImpl does.

Buckets the write owns are compacted at ``prepare_commit`` (write/compact_manager.py), as
Java's MergeTreeWriter and AppendOnlyWriter trigger a compaction after the flush and a batch
commit waits for it: a primary-key bucket's live files plus its new level-0 files get one
universal pick (``num-sorted-run.compaction-trigger``, ``compaction.max-size-amplification-
percent``, ``compaction.size-ratio``; ForceUpLevel0Compaction for tables that need lookup, so
no level-0 file of a first-row table outlives a commit), a fixed-bucket append bucket the
oldest ``compaction.min.file-num`` files; with ``full-compaction.delta-commits`` or the
``full-compaction`` changelog producer a full compaction comes first (compact_manager.py
``full_compaction_due``). The bucket's message then carries both increments; FileStoreCommit
commits them as an APPEND snapshot and a COMPACT snapshot. With deletion vectors the write
keeps each bucket's vectors (restored from the snapshot it read) across its commits, and the
compaction's lookups mark the rows it replaces (mergetree/dv_lookup.py); the bucket's new
index file joins the compact increment. Not with ``write-only``, not in
bucket-unaware and postpone modes (Java's writers there have no compaction), and not for writers
that share a bucket (``sequence_slot`` stride > 1).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.bucket.cross_partition import KeyIndexBootstrap
from paimon_pyspark.bucket.router import RoutedBatch
from paimon_pyspark.bucket.routers import new_router
from paimon_pyspark.errors import (
    InvalidArgumentError,
    NullViolationError,
    OptionError,
    PaimonError,
    SchemaMismatchError,
    UnsupportedOperationError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.io.data_file import DataFileSettings
from paimon_pyspark.io.key_value_file import KvFileSettings
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.mergetree.compact_settings import CompactSettings
from paimon_pyspark.mergetree.record_expire import RecordLevelExpire
from paimon_pyspark.mergetree.sorted_run_writer import changelog_settings
from paimon_pyspark.mergetree.spill import SpillSettings
from paimon_pyspark.mergetree.write_buffer import WriteBufferPool
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.key_value import (
    DELETE,
    RETRACTS,
    ROW_KIND_NAMES,
    UPDATE_BEFORE,
    VALUE_KIND,
)
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET, BucketMode
from paimon_pyspark.store.deletion_vectors import BucketDvMaintainer
from paimon_pyspark.store.external_paths import data_file_path
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.write.append_writer import AppendWriter
from paimon_pyspark.write.bucket_writer import BucketWriter
from paimon_pyspark.write.compact_manager import (
    compacts_on_write,
    dv_bases,
    full_compaction_due,
    new_write_compaction,
    restore_dv,
)
from paimon_pyspark.write.dynamic import DynamicBucketIndexMaintainer
from paimon_pyspark.write.key_value_writer import KeyValueWriter
from paimon_pyspark.write.postpone import PostponeBucketWriter, postpone_settings
from paimon_pyspark.write.writer_order import in_java_order

if TYPE_CHECKING:
    import ray.data

    from paimon_pyspark.store.file_store import FileStore
    from paimon_pyspark.write.ray_datasink import RayWriteTable

Indices = npt.NDArray[np.intp]
ROUTE_SLICE_ROWS = 262_144
"""Batches of at least twice as many rows are routed in slices on the write's threads."""
_KIND_NAMES = pa.array(list(ROW_KIND_NAMES))
_KIND_BYTES = pa.array(list(ROW_KIND_NAMES.values()), pa.int8())


class TableWrite:
    """Writes Arrow data into new files of one table; ``prepare_commit`` describes them.

    ``sequence_slot`` = (index, stride) lets several writers share a bucket of a primary-key
    table without colliding: the k-th record (0-based, arrival order) this TableWrite writes
    to a bucket gets sequence number ``base + k * stride + index``, ``base`` being the bucket's
    highest existing sequence number + 1. The default (0, 1) numbers records contiguously.
    Append tables hold no sequence column and ignore it (shared buckets are renumbered at
    commit, see spark/job.py). Writers sharing a bucket (stride > 1) never compact at commit:
    each would rewrite the same live files (a stride > 1 tells append writers so too).

    ``key_index_bootstrap`` reads the live keys of a cross-partition upsert table (the facade
    passes ``read.bootstrap.bootstrapped_global_assigner``); a write given its buckets needs none.

    ``ignore_previous_files`` (an overwrite, Java's ``withIgnorePreviousFiles``): the files in
    the table are about to be replaced, so sequence numbers start at 0 and the table's bucket
    count is not checked against them.
    """

    def __init__(
        self,
        table: FileStore,
        commit_user: str,
        sequence_slot: tuple[int, int] | None = None,
        ignore_previous_files: bool = False,
        key_index_bootstrap: KeyIndexBootstrap | None = None,
    ) -> None:
        table.check_writable()
        if not table.primary_keys and table.options.upsert_key and not ignore_previous_files:
            raise UnsupportedOptionError(
                f"Table '{table.name}': option 'upsert-key' makes an insert replace the rows "
                "with the same key, which this writer cannot do (it only appends). Use "
                "table.new_batch_write_builder().new_write(), paimon_pyspark.spark.write(df, "
                "..., mode='append') or the SQL door's INSERT INTO, or an overwrite."
            )
        if not isinstance(commit_user, str) or not commit_user:
            raise InvalidArgumentError(
                f"Table '{table.name}': TableWrite(commit_user) must be a non-empty string, "
                f"got {describe(commit_user)}."
            )
        slot = _sequence_slot(table.name, sequence_slot)
        if slot[1] < 1 or not 0 <= slot[0] < slot[1]:
            raise OptionError(
                f"Table '{table.name}': sequence_slot {sequence_slot} must be (index, stride) "
                "with 0 <= index < stride."
            )
        self.sequence_slot = slot
        self.ignore_previous_files = ignore_previous_files
        self.table = table
        self.commit_user = commit_user
        o = table.options
        self.router = new_router(table, ignore_previous_files, key_index_bootstrap)
        if self.router.mode is BucketMode.POSTPONE_MODE:
            self.postpone_files = postpone_settings(table, commit_user)
        self.settings = DataFileSettings.of(table, primary_key=False)
        self.primary_key = bool(table.primary_keys)
        if self.primary_key:  # checked as Java's KeyValueFileStoreWrite creates it
            RecordLevelExpire.create(table)
        self.kv_settings = KvFileSettings.of(table) if self.primary_key else None
        self.merge_settings = MergeSettings.from_table(table) if self.primary_key else None
        self.changelog_settings = (
            changelog_settings(table)
            if self.primary_key and o.changelog_producer == "input" and not ignore_previous_files
            else None
        )
        """The input producer's changelog files, written at each key-value writer's flush. An
        overwrite writes none: Java's writers write them and its overwrite commit drops them,
        leaving files no snapshot lists."""
        # Java's memory pool per write: one write-buffer-size for every key-value writer
        self.buffer_pool = WriteBufferPool(o.write_buffer_size)
        self.spill_settings = SpillSettings.of(o)
        self.path_factory = PathFactory(table.path)
        self.index_maintainer: DynamicBucketIndexMaintainer | None = None
        if self.router.hash_index is not None:
            self.index_maintainer = DynamicBucketIndexMaintainer(
                self.router.hash_index, self.path_factory
            )
        self._writers: dict[tuple[bytes, int], BucketWriter] = {}
        self._pending: dict[tuple[bytes, int], Future[None]] = {}
        self._parallelism = o.write_parallelism
        shared = _write_pool(self._parallelism)
        self._own_pool = shared is None
        self._pool = shared or ThreadPoolExecutor(max_workers=self._parallelism)
        self._restored: dict[tuple[bytes, int], int] | None = None
        self._bucket_totals: dict[tuple[bytes, int], int] = {}
        self.compact_settings: CompactSettings | None = None
        if self.router.compacts_at_commit and slot[1] == 1:
            self.compact_settings = compacts_on_write(table)
        self.compact_at_commit = self.compact_settings is not None
        self.full_compaction = full_compaction_due(o, None)
        self._live_files: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        self._dv_bases: dict[tuple[bytes, int], IndexFileMeta] = {}
        """Per bucket: its live deletion-vector index file in the snapshot the write restored,
        or the one this write wrote for it since (a stream's next checkpoint builds on it)."""
        self._dv: dict[tuple[bytes, int], BucketDvMaintainer] = {}
        """Per bucket: its deletion vectors, kept across commits as Java keeps a writer's
        dvMaintainer."""
        self._partition_buckets: dict[bytes, set[int]] = {}
        self._closed = False

    # --- public API ----------------------------------------------------------------------------

    def write_arrow(
        self,
        table: pa.Table,
        buckets: npt.ArrayLike | None = None,
        row_kinds: npt.ArrayLike | None = None,
    ) -> None:
        """Write ``table``; ``buckets`` (one per row; dynamic-bucket tables, and postpone tables
        with ``postpone.batch-write-fixed-bucket``) is Java's ``write(row, bucket)``: rows whose
        bucket an assigner stage already chose.
        ``row_kinds`` (one int8 per row, primary-key tables): the kinds that stage left the
        rows with (the -D records of keys that changed partition included), taken as they are
        instead of ``rowkind.field``."""
        data = self._align(self._arrow("write_arrow", table))
        if row_kinds is not None and self.primary_key:
            kinds = self._per_row("row_kinds", row_kinds, data.num_rows)
            if ((kinds < 0) | (kinds >= len(ROW_KIND_NAMES))).any():
                raise InvalidArgumentError(
                    f"Table '{self.table.name}': TableWrite.write_arrow(row_kinds) holds a value "
                    f"outside {sorted(ROW_KIND_NAMES.values())} (the row kinds {ROW_KIND_NAMES})."
                )
            data = data.append_column(VALUE_KIND, pa.array(kinds.astype(np.int8)))
        elif self.primary_key:
            data = self._with_row_kinds(data)
        if buckets is not None and not self.router.accepts_buckets:
            raise OptionError(
                f"Table '{self.table.name}': buckets are given only for bucket = -1 "
                "primary-key tables and fixed-bucket writes of postpone tables; this write "
                "assigns its own."
            )
        given = None if buckets is None else self._per_row("buckets", buckets, data.num_rows)
        dropped = self._dropped_kinds()
        if self.primary_key and dropped:
            # Java's RowKindFilter in TableWriteImpl: these kinds never reach a writer
            keep = pc.invert(pc.is_in(data.column(VALUE_KIND), pa.array(dropped, pa.int8())))
            if not pc.all(keep).as_py():
                data = data.filter(keep)
                given = None if given is None else given[keep.to_numpy(zero_copy_only=False)]
        self._write_aligned(data, given)

    def compact_bucket(self, partition: bytes, bucket: int) -> None:
        """Compact this bucket at the next ``prepare_commit`` even if nothing is written to it
        (Java's ``TableWrite.compact``; ``full_compaction`` says whether fully)."""
        if self.compact_at_commit:
            values = deserialize_with_arity(partition, self.table.partition_types)
            self._writer(partition, values, bucket)

    def pin_postpone_buckets(self, known: Mapping[bytes, int]) -> None:
        """Postpone tables: route fixed-bucket writes with these partitions' bucket counts (a
        job driver's ``known_num_buckets``) instead of the latest snapshot's; a partition
        missing from ``known`` gets ``postpone.default-bucket-num``."""
        self.router.pin(known)

    def rows_with_kinds(self, table: pa.Table) -> pa.Table:
        """``table`` aligned to the schema, with its ``_VALUE_KIND`` column if the table has a
        primary key (retractions dropped under ignore-delete): the rows a write would route."""
        data = self._align(self._arrow("rows_with_kinds", table))
        return self._with_row_kinds(data) if self.primary_key else data

    def delete_arrow(self, table: pa.Table) -> None:
        """Write ``table``'s rows as -D records of a primary-key table (whatever their kind)."""
        if not self.primary_key:
            raise OptionError(f"Table '{self.table.name}': delete needs a primary key.")
        data = self._align(self._arrow("delete_arrow", table))
        rowkind = self.table.options.rowkind_field
        if rowkind is not None:
            index = data.schema.get_field_index(rowkind)
            minus_d = pa.repeat(pa.scalar("-D", data.schema.field(index).type), data.num_rows)
            data = data.set_column(index, data.schema.field(index), minus_d)
        kinds = pa.array(np.full(data.num_rows, DELETE, np.int8))
        data = data.append_column(VALUE_KIND, kinds)
        if self.merge_settings is not None and self.merge_settings.ignore_delete:
            return
        self._write_aligned(data)

    def _write_aligned(self, data: pa.Table, buckets: npt.NDArray[np.int32] | None = None) -> None:
        if data.num_rows == 0:
            return
        for routed in self._route(data, buckets):
            rows = routed.data  # cross-partition: with the -D records of moved keys
            for group in routed.groups:
                partition, values, bucket, indices = group
                hashes = routed.hashes_of(group)
                if self.index_maintainer is not None and hashes is not None:
                    self.index_maintainer.track(partition, bucket, hashes)
                writer = self._writer(partition, values, bucket)
                self._submit((partition, bucket), partial(self._write_rows, writer, rows, indices))

    def _route(self, data: pa.Table, buckets: npt.NDArray[np.int32] | None) -> list[RoutedBatch]:
        """``data`` routed, in slices of at least ``ROUTE_SLICE_ROWS`` rows routed at once on
        the pool when the router is pure: a slice's groups are written after the previous
        slice's, so every (partition, bucket) still gets its rows in arrival order."""
        n = data.num_rows
        slices = min(self._parallelism, n // ROUTE_SLICE_ROWS)
        if slices < 2 or not self.router.pure:
            return [self.router.route(data, buckets)]
        step = -(-n // slices)
        futures = [
            self._pool.submit(
                self.router.route,
                data.slice(lo, step),
                None if buckets is None else buckets[lo : lo + step],
            )
            for lo in range(0, n, step)
        ]
        return [f.result() for f in futures]

    def write_arrow_batch(self, batch: pa.RecordBatch) -> None:
        self.write_arrow(self._arrow("write_arrow_batch", batch))

    def write_pandas(self, dataframe: pd.DataFrame) -> None:
        """Write a pandas DataFrame: its columns are converted as Arrow infers them, then cast
        to the table's types as ``write_arrow`` does (its index is not written)."""
        if not isinstance(dataframe, pd.DataFrame):
            raise InvalidArgumentError(
                f"Table '{self.table.name}': TableWrite.write_pandas(dataframe) takes a "
                f"pandas.DataFrame, got {describe(dataframe)}"
                + ("; use write_arrow for Arrow data." if _is_arrow(dataframe) else ".")
            )
        try:
            data = pa.Table.from_pandas(dataframe, preserve_index=False)
        except (pa.ArrowException, ValueError, TypeError, OverflowError) as e:
            raise SchemaMismatchError(
                f"Table '{self.table.name}': the DataFrame cannot be converted to Arrow: {e}"
            ) from e
        self.write_arrow(data)

    def prepare_commit(self) -> list[CommitMessage]:
        """Flush every writer and describe the new files; the write can then be closed."""
        futures = {
            key: self._submit(key, partial(self._prepare_bucket, key, w))
            for key, w in self._writers.items()
        }
        try:
            messages = [m for m in (fut.result() for fut in futures.values()) if m is not None]
        except BaseException:
            for fut in futures.values():  # buckets already prepared hold files of their own
                with contextlib.suppress(BaseException):
                    done = fut.result()
                    if done is not None:
                        self._delete_written(done)
            self.abort()
            raise
        self._writers = {}
        self._pending = {}
        if self.table.options.row_tracking_enabled:  # rows are numbered in message order
            messages = in_java_order(messages)
        return messages

    def _prepare_bucket(self, key: tuple[bytes, int], writer: BucketWriter) -> CommitMessage | None:
        """Runs on the pool: flush one writer, compact its bucket if the table needs lookup."""
        partition, bucket = key
        total = self.router.total_buckets(partition, bucket)
        new_files = tuple(writer.prepare_commit())
        changelog = tuple(writer.take_changelog()) if isinstance(writer, KeyValueWriter) else ()
        message = CommitMessage(
            partition, bucket, total, DataIncrement(new_files, changelog_files=changelog)
        )
        if self.index_maintainer is not None:
            index = self.index_maintainer.index_files(partition, bucket)
            message = replace(
                message, data_increment=replace(message.data_increment, new_index_files=index)
            )
        if self.compact_settings is not None:
            values = deserialize_with_arity(partition, self.table.partition_types)
            restored = self._live_files.get(key, [])
            dv = self._dv_of(key)
            base = self._dv_bases.get(key)
            manager = new_write_compaction(
                self.table, values, bucket, self.compact_settings, restored, dv, base
            )
            try:
                manager.add_new_files(message.new_files)
                compact = manager.prepare_commit(self.full_compaction)
            except BaseException:
                self._dv.pop(key, None)  # half-changed: restored again if the write goes on
                manager.abort()
                self._delete_written(message)
                raise
            for written in compact.new_index_files:
                self._dv_bases[key] = written
            message = replace(message, compact_increment=compact)
        return None if message.is_empty() else message

    def _dv_of(self, key: tuple[bytes, int]) -> BucketDvMaintainer | None:
        """The bucket's deletion vectors (None without them): restored at first use from the
        index file the write's snapshot holds for the bucket (none after
        ``ignore_previous_files``), then kept."""
        dv = self._dv.get(key)
        if dv is None:
            dv = restore_dv(self.table, self._dv_bases.get(key))
            if dv is not None:
                self._dv[key] = dv
        return dv

    def _delete_written(self, message: CommitMessage) -> None:
        """Delete the files this write produced for ``message`` (never an upgraded live file)."""
        inputs = {f.file_name for f in message.compact_increment.compact_before}
        written = [*message.new_files]
        written += [f for f in message.compact_increment.compact_after if f.file_name not in inputs]
        written += message.data_increment.changelog_files
        written += message.compact_increment.changelog_files
        values = deserialize_with_arity(message.partition, self.table.partition_types)
        rel = self.table.partition_rel_path(values)
        bucket_path = self.path_factory.bucket_path(rel, message.bucket)
        for f in written:
            path = data_file_path(self.table.external_paths, bucket_path, f)
            self.table.file_io.delete_quietly(path)
        index_dir = os.path.join(self.table.path, "index")
        for index in message.data_increment.new_index_files + (
            message.compact_increment.new_index_files
        ):
            self.table.file_io.delete_quietly(
                index.external_path or os.path.join(index_dir, index.file_name)
            )

    def abort(self) -> None:
        """Delete every file written and not yet handed out in a commit message."""
        for fut in self._pending.values():
            with contextlib.suppress(Exception):
                fut.result()
        for w in self._writers.values():
            w.abort()
        self._writers = {}
        self._pending = {}

    def close(self) -> None:
        if not self._closed:
            self.abort()
            if self._own_pool:
                self._pool.shutdown(wait=True)
            self._closed = True

    def __enter__(self) -> TableWrite:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- Ray -----------------------------------------------------------------------------------

    ray_table: RayWriteTable | None = None
    """The facade this write was made from, for ``write_ray`` (set by ``with_table``)."""

    def with_table(self, table: RayWriteTable) -> TableWrite:
        """Remember the table facade this write was made from (BatchWriteBuilder.new_write
        passes it): ``write_ray`` opens its own builders on it, as pypaimon's does."""
        self.ray_table = table
        return self

    def write_ray(
        self,
        dataset: ray.data.Dataset,
        overwrite: bool = False,
        concurrency: int | None = None,
        ray_remote_args: dict[str, Any] | None = None,
    ) -> None:
        """Write a Ray Dataset with Ray tasks and commit it once, here (pypaimon's
        ``write_ray``; write/ray_datasink.py): one snapshot, or an overwrite of the partitions
        written with ``overwrite``. ``concurrency`` and ``ray_remote_args`` go to
        ``Dataset.write_datasink``. Rows written with this TableWrite's own ``write_arrow``
        are not part of it: they are committed through its builder, as before."""
        from paimon_pyspark.write.ray_datasink import PaimonDatasink

        if self.ray_table is None:
            raise UnsupportedOperationError(
                f"Table '{self.table.name}': write_ray needs a TableWrite from "
                "table.new_batch_write_builder().new_write(), or write "
                "dataset.write_datasink(PaimonDatasink(table)) directly."
            )
        dataset.write_datasink(
            PaimonDatasink(self.ray_table, overwrite),
            concurrency=concurrency,
            ray_remote_args=ray_remote_args,
        )

    # --- schema --------------------------------------------------------------------------------

    def _arrow(self, call: str, data: object) -> pa.Table:
        """``data`` as a Table if it is Arrow data pypaimon's writes take (a Table or a
        RecordBatch), else an InvalidArgumentError saying what to pass instead."""
        if isinstance(data, pa.Table):
            return data
        if isinstance(data, pa.RecordBatch):
            return pa.Table.from_batches([data])
        hint = ""
        if isinstance(data, pd.DataFrame):
            hint = " Use write_pandas for a pandas DataFrame."
        elif isinstance(data, pa.RecordBatchReader):
            hint = " Read a RecordBatchReader first (reader.read_all()), or write its batches."
        elif isinstance(data, list | tuple | dict):
            hint = " Build a table first, e.g. pyarrow.Table.from_pylist(rows)."
        raise InvalidArgumentError(
            f"Table '{self.table.name}': TableWrite.{call} takes a pyarrow.Table or "
            f"pyarrow.RecordBatch, got {describe(data)}.{hint}"
        )

    def _per_row(self, argument: str, values: object, num_rows: int) -> npt.NDArray[np.int32]:
        """``write_arrow``'s ``buckets`` or ``row_kinds``: one int32 per row, or a typed error."""
        where = f"Table '{self.table.name}': TableWrite.write_arrow({argument})"
        try:
            array = np.asarray(values)
        except (ValueError, TypeError) as e:
            raise InvalidArgumentError(f"{where} is not an array of integers: {e}") from e
        if array.ndim != 1 or len(array) != num_rows or array.dtype.kind not in "iu":
            raise InvalidArgumentError(
                f"{where} must hold one integer per row ({num_rows}), got {array.size} "
                f"value(s) of dtype {array.dtype} in {array.ndim} dimension(s)."
            )
        if array.size and (array.min() < -(2**31) or array.max() >= 2**31):
            raise InvalidArgumentError(f"{where} holds a value outside the int32 range.")
        return array.astype(np.int32)

    def _align(self, data: pa.Table) -> pa.Table:
        """Reorder and cast ``data`` to the table schema, or say exactly what does not fit."""
        name = self.table.name
        target = self.table.arrow_schema
        given = data.schema.names
        duplicated = sorted({n for n in given if given.count(n) > 1})
        if duplicated:
            raise SchemaMismatchError(
                f"Table '{name}': written data has the field(s) {duplicated} more than once."
            )
        missing = [n for n in target.names if n not in given]
        extra = [n for n in given if n not in target.names]
        if missing or extra:
            raise SchemaMismatchError(
                f"Table '{name}': written data does not match the table schema"
                + (f"; missing fields {missing}" if missing else "")
                + (f"; unknown fields {extra}" if extra else "")
                + f". Table fields: {target.names}."
            )
        columns = []
        for field in target:
            column = data.column(field.name)
            if column.type != field.type:
                try:
                    column = pc.cast(column, field.type, safe=True)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                    raise SchemaMismatchError(
                        f"Table '{name}': field '{field.name}' has type {column.type}, which "
                        f"cannot be written as {field.type}: {e}"
                    ) from e
            if not field.nullable and column.null_count:
                raise NullViolationError(
                    f"Table '{name}': field '{field.name}' is NOT NULL but the data has "
                    f"{column.null_count} null value(s)."
                )
            columns.append(column)
        return pa.Table.from_arrays(columns, schema=target)

    def _dropped_kinds(self) -> list[int]:
        """The row kinds Java's RowKindFilter drops at write: every retraction under
        ignore-delete, -U under ignore-update-before."""
        if self.merge_settings is not None and self.merge_settings.ignore_delete:
            return list(RETRACTS)
        return [UPDATE_BEFORE] if self.table.options.ignore_update_before else []

    def _with_row_kinds(self, data: pa.Table) -> pa.Table:
        """``data`` with its ``_VALUE_KIND`` column; retractions dropped under ignore-delete."""
        rowkind = self.table.options.rowkind_field
        if rowkind is None:
            return data.append_column(VALUE_KIND, pa.array(np.zeros(data.num_rows, np.int8)))
        names = data.column(rowkind)
        index = pc.index_in(names, value_set=_KIND_NAMES)
        if index.null_count:
            bad = names.filter(pc.is_null(index)).slice(0, 1).to_pylist()[0]
            raise SchemaMismatchError(
                f"Table '{self.table.name}': field '{rowkind}' ('rowkind.field') has the "
                f"value {bad!r}; a row kind must be one of {list(ROW_KIND_NAMES)}."
            )
        kinds = pc.take(_KIND_BYTES, index)
        data = data.append_column(VALUE_KIND, kinds)
        assert self.merge_settings is not None
        if self.merge_settings.ignore_delete:
            data = data.filter(pc.invert(pc.is_in(kinds, pa.array(RETRACTS, pa.int8()))))
        return data

    # --- writers -------------------------------------------------------------------------------

    def _write_rows(self, writer: BucketWriter, data: pa.Table, indices: Indices | None) -> None:
        """Runs on the pool: gather one group's rows and flush them once enough are buffered.

        Append and postpone writers flush every ``piece_bytes`` into the open file; key-value
        writers reserve their rows in ``buffer_pool`` (``write-buffer-size`` shared by all of
        them, as Java's write buffer), which spills or flushes buffers when it is full.
        """
        writer.write_rows(data, indices)
        if writer.buffered_bytes >= writer.flush_threshold:
            writer.flush()

    def _writer(self, partition: bytes, values: list[Any], bucket: int) -> BucketWriter:
        key = (partition, bucket)
        writer = self._writers.get(key)
        if writer is None:
            rel = self.table.partition_rel_path(values)
            bucket_path = self.path_factory.bucket_path(rel, bucket)
            if bucket == POSTPONE_BUCKET:
                flush = self.settings.piece_bytes
                writer = PostponeBucketWriter(
                    self.postpone_files, bucket_path, self.path_factory, flush
                )
            else:
                writer = self._new_writer(bucket_path, self._next_sequence(key))
            self._writers[key] = writer
        return writer

    def _new_writer(self, bucket_path: str, next_seq: int) -> BucketWriter:
        if self.kv_settings is not None and self.merge_settings is not None:
            return KeyValueWriter(
                self.kv_settings,
                self.merge_settings,
                bucket_path,
                self.path_factory,
                next_seq,
                self.sequence_slot,
                self.buffer_pool,
                self.spill_settings,
                self.changelog_settings,
            )
        return AppendWriter(self.settings, bucket_path, self.path_factory, next_seq)

    def _next_sequence(self, key: tuple[bytes, int]) -> int:
        """Writers continue after the bucket's highest sequence number (the router says
        whether its mode does, and which bucket count a bucket must already have)."""
        if not self.router.continues_sequence or self.ignore_previous_files:
            return 0
        if self._restored is None:
            self._restored = self._restore()
        previous = self._bucket_totals.get(key)
        required = self.router.fixed_num_buckets
        if required is not None and previous is not None and previous != required:
            values = deserialize_with_arity(key[0], self.table.partition_types)
            where = self.table.partition_rel_path(values) or "the table"
            raise PaimonError(
                f"Table '{self.table.name}': try to write {where} with a new bucket num "
                f"{required}, but the previous bucket num is {previous}. Please switch "
                "to batch mode and INSERT OVERWRITE (or rescale) to change the bucket layout."
            )
        return self._restored.get(key, -1) + 1

    def _restore(self) -> dict[tuple[bytes, int], int]:
        snapshot = self.table.snapshot_manager.latest()
        if snapshot is None:
            return {}
        if self.compact_at_commit:
            self._dv_bases = dv_bases(self.table, snapshot)
        max_seq: dict[tuple[bytes, int], int] = {}
        for e in self.table.manifest_io.live_entries(snapshot):
            if e.kind != mf.KIND_ADD:
                continue
            k = (e.partition, e.bucket)
            if e.total_buckets > 0:  # checked per bucket written, as Java's writer does
                self._bucket_totals[k] = e.total_buckets
            max_seq[k] = max(max_seq.get(k, -1), e.file.max_sequence_number)
            if self.compact_at_commit:
                self._live_files.setdefault(k, []).append(e.file)
        return max_seq

    # --- flushing ------------------------------------------------------------------------------

    def _submit(self, key: tuple[bytes, int], fn: Any) -> Future[Any]:
        if self._closed:
            raise PaimonError(
                f"Table '{self.table.name}': this TableWrite is closed; open a new one with "
                "new_write()."
            )
        previous = self._pending.get(key)
        if previous is not None:
            previous.result()
        fut: Future[Any] = self._pool.submit(fn)
        self._pending[key] = fut
        return fut


_POOLS: dict[int, ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()
_POOL_THREAD = "paimon-write"


def _write_pool(threads: int) -> ThreadPoolExecutor | None:
    """The process's pool of ``threads`` write threads, shared by every TableWrite and kept
    between writes. A pool per write started new threads, whose allocator heaps started
    empty: every write faulted in fresh pages again, and a 2M-row write took 4-7% longer.
    None inside a write thread itself: a write started there gets its own pool, so no task
    ever waits for one queued behind it."""
    if threading.current_thread().name.startswith(_POOL_THREAD):
        return None
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = ThreadPoolExecutor(threads, thread_name_prefix=_POOL_THREAD)
            _POOLS[threads] = pool
        return pool


def _forget_pools() -> None:
    """In a forked child the parent's threads do not exist (Spark forks its Python workers)."""
    global _POOLS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pools)


def _is_arrow(value: object) -> bool:
    return isinstance(value, pa.Table | pa.RecordBatch | pa.RecordBatchReader)


def _sequence_slot(table: str, slot: object) -> tuple[int, int]:
    """``sequence_slot`` as a pair of ints (its range is checked by the caller)."""
    if slot is None:
        return (0, 1)
    if (
        isinstance(slot, tuple | list)
        and len(slot) == 2
        and all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in slot)
    ):
        return int(slot[0]), int(slot[1])
    raise InvalidArgumentError(
        f"Table '{table}': TableWrite(sequence_slot) must be None or a pair of ints "
        f"(index, stride), got {describe(slot)}."
    )
