"""Row-level DELETE and UPDATE as Spark jobs, as Java Paimon 1.4.2's Spark connector runs them.

``delete(spark, warehouse, "db.t", "k IN (2, 3)")`` and ``update(spark, warehouse, "db.t",
{"v": "v + 1"}, "k = 1")`` take Spark SQL text, evaluated by Spark (``functions.expr``) on the
table's rows; each returns the id of the snapshot it committed, or None when nothing changed.

DELETE (Java's DeleteFromPaimonTableCommand, with OptimizeMetadataOnlyDeleteFromPaimonTable):

- no condition drops every file of the table (``truncateTable``), and a condition over partition
  columns only that read/sql_predicate.py translates drops the partitions it matches
  (``truncatePartitions``), whatever the table; ``delete.force-produce-changelog`` keeps the
  partition drop from happening (the rows are written back as -D records instead, which a
  changelog producer sees), not the truncation of a DELETE without a condition (Spark's rule
  checks the option for partitions only; Flink's for both).
  Every live file of those partitions (postpone files and the partitions' hash and
  deletion-vector index files included) is deleted in one OVERWRITE snapshot.
- a primary-key table writes the matching rows back as -D records through ``spark.write``'s
  topology of its bucket mode (one snapshot, plus a COMPACT one if the writers compact). Its
  merge engine must retract (PrimaryKeyTableUtils.validatePKUpsertDeletable): partial-update
  needs ``partial-update.remove-record-on-delete``, aggregation
  ``aggregation.remove-record-on-delete``, first-row never does. Java then falls back to the
  copy-on-write below on a fully compacted table; here such a delete is refused with Java's
  reason. Rows a batch read cannot see (a postpone table's postpone bucket) are not deleted.
- an append table with ``deletion-vectors.enabled`` keeps its files: the files the condition
  may match are read with each row's position (Spark's ``_metadata.row_index``), without the
  rows their vectors delete already; Spark finds the matching rows, each task turns their
  positions into one vector per file, and the driver merges them with the files' vectors and
  writes the index files (write/append_dv.py, Java's persistDeletionVectors). The commit of
  the index files is an OVERWRITE snapshot whose conflict check fails if a concurrent commit
  removed a marked file or replaced an index file the delete read.
- any other append table is rewritten copy-on-write: the files the condition may match (pruned
  by the condition where sql_predicate translates it) are read with their file's number, Spark
  finds the files holding a matching row, and their other rows (``NOT (cond <=> TRUE)``, so a
  NULL condition keeps the row) are written as new files, without compaction; the same commit
  deletes the old files. A commit deleting files is an OVERWRITE snapshot whose conflict
  check fails if another writer (a compaction) removed one of them meanwhile: the delete then
  fails cleanly and its new files are removed.

UPDATE (Java's UpdatePaimonTableCommand; PaimonUpdateTable and RowLevelOp for the checks):
only deduplicate and partial-update tables; assigning a primary-key column is refused. A
primary-key table writes the updated matching rows as +U records; an append table with deletion
vectors marks the matching rows in vectors, as DELETE does, and writes their new values as new
files (write-only) in the same commit; any other append table rewrites the touched files
copy-on-write with ``CASE WHEN cond THEN new ELSE old END`` per assigned column.

Every statement that writes rows runs one ``WriteJob``: a failure anywhere removes the files it
wrote and commits nothing. A partition drop writes no file, only its commit.

MERGE INTO (spark/merge.py) reuses these helpers: the target's reads, the -D/+U/+I write of a
primary-key table, the file deletions of a copy-on-write rewrite and the vectors of a
deletion-vector change.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from paimon_pyspark.errors import (
    CommitOutcomeUnknownError,
    InvalidArgumentError,
    PredicateError,
    SchemaMismatchError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_split, encode_split
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark.cluster import default_parallelism, is_session, task_rows
from paimon_pyspark.spark.compat import error_condition
from paimon_pyspark.spark.job import TableRef, WriteJob
from paimon_pyspark.spark.read import read
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import ensure_table
from paimon_pyspark.spark.write import ROW_KIND_COLUMN, postpone_bucket_counts, run_write
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.key_value import DELETE, UPDATE_AFTER
from paimon_pyspark.spec.manifest import IndexFileMeta, ManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.deletion_vectors import (
    DeletionFile,
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.index_io import DELETION_VECTORS_INDEX, HASH_INDEX, IndexFileHandler
from paimon_pyspark.store.path_checks import check_split_paths
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.upsert import APPENDING, is_upsert_table
from paimon_pyspark.write.append_dv import (
    delete_written_index_files,
    live_positions,
    persist_deletion_vectors,
)

FILE_COLUMN = "_paimon_file"
"""The number of the data file a row of a copy-on-write read comes from."""
ROW_COLUMN = "_paimon_row"
"""The position of a row in its data file (Spark's ``_metadata.row_index``)."""
WRITE_ONLY = "write-only"
DELETE_FORCE_PRODUCE_CHANGELOG = "delete.force-produce-changelog"
_DELETE_ENGINES = ("deduplicate", "partial-update", "aggregation", "first-row")
_UPDATE_ENGINES = ("deduplicate", "partial-update")

T = TypeVar("T")


@dataclass(frozen=True)
class _Target:
    """The table a statement changes, as the driver opened it, and the snapshot it reads."""

    spark: SparkSession
    warehouse: str
    name: str
    options: dict[str, str]
    ref: TableRef
    table: FileStoreTable
    snapshot: Snapshot | None

    def rows(self, where: str | None) -> DataFrame:
        """The table's rows at the statement's snapshot, pruned by ``where`` (translated)."""
        return read(
            self.spark,
            self.warehouse,
            self.name,
            where=where,
            snapshot_id=None if self.snapshot is None else self.snapshot.id,
            options=self.options,
        )


def delete(
    spark: SparkSession,
    warehouse: str,
    table: str,
    condition: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> int | None:
    """``DELETE FROM table [WHERE condition]``: the id of the snapshot committed, or None when
    no row matched. ``condition`` is Spark SQL boolean text over the table's columns (names
    match case-insensitively); ``options`` are filesystem and dynamic table options."""
    target = _open(spark, warehouse, table, options, "delete")
    text = _condition_text(target, condition, "delete")
    _check_engine(target, "Delete", _DELETE_ENGINES)
    base = target.rows(None)
    if text is not None:
        _resolve(target, "the condition", text, lambda: base.where(F.expr(text)))
    if target.snapshot is None:
        return None
    predicate = _translated(target, text)
    if text is None:
        return _drop_partitions(target, None)
    if not target.table.options.strict_bool(DELETE_FORCE_PRODUCE_CHANGELOG):
        keys = set(target.table.partition_keys)
        if predicate is not None and keys and predicate.fields() <= keys:
            return _drop_partitions(target, predicate)
    if target.table.primary_keys:
        _check_pk_deletable(target)
        if target.table.options.ignore_delete:
            return None  # the writers would drop every -D record
        matched = target.rows(text if predicate is not None else None)
        if text is not None:
            matched = matched.where(F.expr(text))
        kinds = matched.withColumn(ROW_KIND_COLUMN, F.lit(DELETE).cast("tinyint"))
        return _write_rows(target, kinds)
    if target.table.options.deletion_vectors_enabled:
        return _mark_deleted(target, text, predicate, None)
    target.table.options.check_row_tracking_rewrite(
        "a copy-on-write DELETE",
        "set 'deletion-vectors.enabled' = 'true' (a DELETE then marks rows in deletion vectors "
        "and every other row keeps its id), or run the DELETE with Java Paimon.",
    )
    cond = F.expr(text) if text is not None else F.lit(True)
    return _copy_on_write(target, text, predicate, lambda rows: rows.where(~_is_true(cond)))


def update(
    spark: SparkSession,
    warehouse: str,
    table: str,
    assignments: Mapping[str, str],
    condition: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> int | None:
    """``UPDATE table SET col = expr, ... [WHERE condition]``: the id of the snapshot
    committed, or None when no row matched. ``assignments`` maps a column name to Spark SQL
    expression text over the row's old values (``{"v": "v + 1"}``); values are cast to the
    column's type as Spark casts them."""
    target = _open(spark, warehouse, table, options, "update")
    text = _condition_text(target, condition, "update")
    assigned = _assignments(target, assignments)
    _check_engine(target, "Update", _UPDATE_ENGINES)
    keys = {k.lower() for k in target.table.primary_keys}
    if any(c.lower() in keys for c in assigned):
        raise UnsupportedOperationError(
            f"Table '{target.name}': can't update the primary key column "
            f"({', '.join(c for c in assigned if c.lower() in keys)}); primary keys "
            f"{target.table.primary_keys}."
        )
    base = target.rows(None)
    if text is not None:
        _resolve(target, "the condition", text, lambda: base.where(F.expr(text)))
    schema = spark_schema(target.table)
    values = {}
    for column, expression in assigned.items():
        what = f"the value of column '{column}'"
        new = _resolve(target, what, expression, lambda e=expression: F.expr(e))  # type: ignore[misc]
        _resolve(target, what, expression, lambda n=new: base.select(n))  # type: ignore[misc]
        values[column] = new.cast(schema[column].dataType)
    predicate = _translated(target, text)
    if target.snapshot is None:
        return None

    def updated(rows: DataFrame, when: Column | None) -> DataFrame:
        out = []
        for f in schema.fields:
            if f.name not in values:
                out.append(F.col(f.name))
            elif when is None:
                out.append(values[f.name].alias(f.name))
            else:
                out.append(F.when(when, values[f.name]).otherwise(F.col(f.name)).alias(f.name))
        return rows.select(out)

    if target.table.primary_keys:
        rows = target.rows(text if predicate is not None else None)
        if text is not None:
            rows = rows.where(F.expr(text))
        kinds = updated(rows, None).withColumn(ROW_KIND_COLUMN, F.lit(UPDATE_AFTER).cast("tinyint"))
        return _write_rows(target, kinds)
    target.table.options.check_row_tracking_rewrite(
        "UPDATE", "run the UPDATE with Java Paimon (its updated rows keep their _ROW_ID)."
    )
    if target.table.options.deletion_vectors_enabled:
        return _mark_deleted(target, text, predicate, lambda rows: updated(rows, None))
    cond = F.expr(text) if text is not None else None
    return _copy_on_write(target, text, predicate, lambda rows: updated(rows, cond))


# --- checks --------------------------------------------------------------------------------


def _open(
    spark: SparkSession,
    warehouse: str,
    table: str,
    options: Mapping[str, Any] | None,
    call: str,
) -> _Target:
    if not is_session(spark):
        raise InvalidArgumentError(
            f"paimon_pyspark.spark.dml.{call}(spark) takes a SparkSession, got {describe(spark)}."
        )
    for argument, value in (("warehouse", warehouse), ("table", table)):
        if not isinstance(value, str) or not value:
            raise InvalidArgumentError(
                f"paimon_pyspark.spark.dml.{call}({argument}) takes a non-empty string, got "
                f"{describe(value)}."
            )
    if options is not None and not isinstance(options, Mapping):
        raise InvalidArgumentError(
            f"Table '{table}': paimon_pyspark.spark.dml.{call}(options) takes a mapping of "
            f"option names to values, got {describe(options)}."
        )
    opts = {str(k).lower(): str(v) for k, v in (options or {}).items()}
    ref, loaded = ensure_table(warehouse, table, StructType([]), opts)
    return _Target(spark, warehouse, table, opts, ref, loaded, loaded.snapshot_manager.latest())


def _condition_text(target: _Target, condition: object, call: str) -> str | None:
    if condition is None:
        return None
    if not isinstance(condition, str):
        raise InvalidArgumentError(
            f"Table '{target.name}': paimon_pyspark.spark.dml.{call}(condition) takes Spark "
            f"SQL boolean text or None, got {describe(condition)}."
        )
    return condition if condition.strip() else None


def _assignments(target: _Target, assignments: object) -> dict[str, str]:
    """Column (the table's spelling) -> expression text; names match case-insensitively."""
    if not isinstance(assignments, Mapping) or not assignments:
        raise InvalidArgumentError(
            f"Table '{target.name}': paimon_pyspark.spark.dml.update(assignments) takes a "
            f"non-empty mapping of column name to Spark SQL expression text, got "
            f"{describe(assignments)}."
        )
    fields = target.table.field_names
    by_lower = {f.lower(): f for f in fields}
    out: dict[str, str] = {}
    for name, expression in assignments.items():
        if not isinstance(name, str) or not isinstance(expression, str) or not expression.strip():
            raise InvalidArgumentError(
                f"Table '{target.name}': update assignment {name!r} -> {expression!r} must map "
                "a column name to Spark SQL expression text."
            )
        column = name if name in fields else by_lower.get(name.lower())
        if column is None:
            raise SchemaMismatchError(
                f"Table '{target.name}': update assigns column '{name}', which the table does "
                f"not have (fields: {fields})."
            )
        if column in out:
            raise InvalidArgumentError(
                f"Table '{target.name}': update assigns column '{column}' more than once."
            )
        out[column] = expression
    return out


def _check_engine(target: _Target, operation: str, supported: Sequence[str]) -> None:
    """Java's RowLevelOp.checkValidity (append tables pass: their merge engine is the
    default, deduplicate)."""
    engine = target.table.options.merge_engine
    if engine not in supported:
        raise UnsupportedOperationError(
            f"Table '{target.name}': merge engine {engine} can not support {operation}, "
            f"currently only {', '.join(supported)} can support {operation}."
        )


def _check_pk_deletable(target: _Target) -> None:
    """Java's PrimaryKeyTableUtils.validatePKUpsertDeletable: the merge engine must retract."""
    o = target.table.options
    engine = o.merge_engine
    if engine == "deduplicate":
        return
    if engine == "partial-update":
        on_group = "partial-update.remove-record-on-sequence-group"
        if o.partial_update_remove_record_on_delete or on_group in o.options:
            return
        reason = (
            "To support batch delete, please set partial-update.remove-record-on-delete to "
            "true when there is no sequence-group or set "
            "partial-update.remove-record-on-sequence-group."
        )
    elif engine == "aggregation":
        if o.aggregation_remove_record_on_delete:
            return
        reason = "To support batch delete, please set aggregation.remove-record-on-delete to true."
    else:
        raise UnsupportedOperationError(
            f"Table '{target.name}': merge engine {engine} can not support batch delete."
        )
    raise UnsupportedOperationError(
        f"Table '{target.name}': merge engine {engine} doesn't support batch delete by "
        f"default. {reason}"
    )


def _resolve(target: _Target, what: str, text: str, build: Callable[[], T]) -> T:
    """``build()``, with Spark's analysis errors as typed errors naming table and column."""
    try:
        return build()
    except AnalysisException as e:
        condition = error_condition(e)
        params = e.getMessageParameters() or {}
        if condition.startswith("UNRESOLVED_COLUMN") and "objectName" in params:
            column = params["objectName"].replace("`", "")
            raise SchemaMismatchError(
                f"Table '{target.name}': {what} '{text}' names column '{column}', which the "
                f"table does not have (fields: {target.table.field_names})."
            ) from None
        first = str(e).strip().splitlines()[0] if str(e).strip() else condition
        raise InvalidArgumentError(
            f"Table '{target.name}': {what} '{text}' is not a valid Spark SQL expression over "
            f"the table: {first}"
        ) from None


def _translated(target: _Target, text: str | None) -> Predicate | None:
    """The condition as a Predicate for pruning, or None where sql_predicate cannot translate
    it exactly (then nothing is pruned: Spark still decides every row)."""
    if text is None:
        return None
    try:
        return parse_predicate(text, target.table.fields, target.name)
    except PredicateError:
        return None


def _is_true(cond: Column) -> Column:
    """``cond <=> TRUE``: NULL is not true, so ``NOT`` of it keeps rows a NULL condition meets
    (Java's ``Not(EqualNullSafe(condition, true))``)."""
    return F.coalesce(cond, F.lit(False))


# --- writes --------------------------------------------------------------------------------


def _write_rows(target: _Target, rows: DataFrame) -> int | None:
    """Rows with their kinds through the write topology of the table's bucket mode."""
    counts = postpone_bucket_counts(target.table)
    job = WriteJob(target.ref, postpone_buckets=counts)
    ids = run_write(rows, target.table, job, ROW_KIND_COLUMN)
    return ids[-1] if ids else None


def _drop_partitions(target: _Target, predicate: Predicate | None) -> int | None:
    """Java's truncateTable / truncatePartitions: one OVERWRITE snapshot deleting every live
    file (postpone files, hash and deletion-vector index files too) of the partitions
    ``predicate`` matches (all of them if None). The files are those of the statement's
    snapshot; the commit's conflict check fails if another writer removed one since."""
    table = target.table
    assert target.snapshot is not None
    entries = table.store.manifest_io.live_entries(target.snapshot)
    keep = _matching_partitions(table, {e.partition for e in entries}, predicate)
    if not keep:
        return None
    groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        if e.partition in keep:
            groups.setdefault((e.partition, e.bucket), []).append(e)
    handler = IndexFileHandler(table.file_io, table.path, table.store.manifest_io.codec)
    indexes: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    dropped = [*handler.scan(target.snapshot, HASH_INDEX)]
    dropped += handler.scan(target.snapshot, DELETION_VECTORS_INDEX)
    for ie in dropped:
        if ie.partition in keep:
            indexes.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    messages = []
    for key in sorted(groups.keys() | indexes.keys()):
        group = groups.get(key, [])
        total = group[0].total_buckets if group else None
        increment = DataIncrement(
            deleted_files=tuple(e.file for e in group),
            deleted_index_files=tuple(indexes.get(key, [])),
        )
        messages.append(CommitMessage(key[0], key[1], total, increment))
    ids = table.new_batch_write_builder().new_commit().commit(messages)
    return ids[-1] if ids else None


def _matching_partitions(
    table: FileStoreTable, partitions: set[bytes], predicate: Predicate | None
) -> set[bytes]:
    if predicate is None:
        return set(partitions)
    ordered = sorted(partitions)
    types = [t.copy(nullable=True) for t in table.partition_types]
    rows = [deserialize_with_arity(p, types) for p in ordered]
    fields = [table.arrow_schema.field(k).with_nullable(True) for k in table.partition_keys]
    schema = pa.schema(fields)
    columns = [pa.array([r[i] for r in rows], schema.field(i).type) for i in range(len(schema))]
    values = pa.Table.from_arrays(columns, schema=schema)
    values = values.append_column("_i", pa.array(np.arange(len(ordered)), pa.int64()))
    hit = values.filter(predicate.to_arrow_expression())
    return {ordered[i] for i in hit.column("_i").to_pylist()}


def _copy_on_write(
    target: _Target,
    text: str | None,
    predicate: Predicate | None,
    rewrite: Callable[[DataFrame], DataFrame],
) -> int | None:
    """Rewrite the files holding a row ``text`` matches (every candidate file without a
    condition): ``rewrite`` turns their rows into the rows to keep, which are written as new
    files (no compaction) in the commit that deletes the old ones."""
    table = target.table
    assert target.snapshot is not None
    pinned = table.copy({"scan.snapshot-id": str(target.snapshot.id)}, time_travel=False)
    splits = ReadBuilder(pinned.store).with_filter(predicate).new_scan().plan().splits()
    files = [s.with_files((f,)) for s in splits for f in s.files]
    if not files:
        return None
    if text is not None:
        found = _file_rows(target, files).where(_is_true(F.expr(text)))
        touched = sorted(r[0] for r in found.select(FILE_COLUMN).distinct().collect())
    else:
        touched = list(range(len(files)))
    if not touched:
        return None
    chosen = [files[i] for i in touched]
    messages = _file_deletions(target, chosen)
    rows = rewrite(_file_rows(target, chosen)).drop(FILE_COLUMN)
    ref, writer_table = _appending(target)
    job = WriteJob(ref, postpone_buckets=postpone_bucket_counts(writer_table))
    ids = run_write(rows, writer_table, job, driver_messages=messages)
    return ids[-1] if ids else None


def _file_deletions(target: _Target, chosen: Sequence[DataSplit]) -> list[CommitMessage]:
    """The driver's messages deleting the files of ``chosen`` (single-file splits of the
    statement's snapshot), one per (partition, bucket)."""
    assert target.snapshot is not None
    totals = {
        (e.partition, e.bucket, e.file.file_name): e.total_buckets
        for e in target.table.store.manifest_io.live_entries(target.snapshot)
    }
    deleted: dict[tuple[bytes, int], list[DataFileMeta]] = {}
    for s in chosen:
        deleted.setdefault((s.partition, s.bucket), []).extend(s.files)
    return [
        CommitMessage(
            partition,
            bucket,
            totals.get((partition, bucket, group[0].file_name)),
            DataIncrement(deleted_files=tuple(group)),
        )
        for (partition, bucket), group in sorted(deleted.items())
    ]


def _mark_deleted(
    target: _Target,
    text: str | None,
    predicate: Predicate | None,
    rewrite: Callable[[DataFrame], DataFrame] | None,
) -> int | None:
    """DELETE (``rewrite`` None) or UPDATE of an append table with deletion vectors (Java's
    collectDeletionVectors, persistDeletionVectors and writeOnlyUpdatedData): the candidate
    files are read with each row's position, without the rows their vectors delete; Spark
    finds the rows ``text`` matches, each task turns their positions into vectors per file,
    and the driver merges them with the files' vectors and writes the index files. UPDATE
    then writes ``rewrite`` of the matching rows (read again from the touched files) as new
    files, write-only, in the same commit: an OVERWRITE snapshot whose conflict check sees
    the index files it replaces. Nothing it wrote stays if it fails."""
    table = target.table
    store = table.store
    snapshot = target.snapshot
    assert snapshot is not None
    pinned = table.copy({"scan.snapshot-id": str(snapshot.id)}, time_travel=False)
    splits = ReadBuilder(pinned.store).with_filter(predicate).new_scan().plan().splits()
    files = [s.with_files([f]) for s in splits for f in s.files]
    if not files:
        return None
    dv_index = dv_index_of(store)
    where = deletion_files(dv_index, dv_index_entries(index_handler_of(store), snapshot))
    old = [where.get((bytes(s.partition), s.bucket), {}).get(s.files[0].file_name) for s in files]
    vectors = _collect_vectors(target, _matching(_positioned_rows(target, files, old), text))
    if not vectors:
        return None
    found: dict[tuple[bytes, int], dict[str, DeletionVector]] = {}
    for i, dv in vectors.items():
        s = files[i]
        found.setdefault((bytes(s.partition), s.bucket), {})[s.files[0].file_name] = dv
    messages = persist_deletion_vectors(store, snapshot, found)
    try:
        if rewrite is None:
            ids = table.new_batch_write_builder().new_commit().commit(messages)
        else:
            touched = sorted(vectors)
            again = _positioned_rows(target, [files[i] for i in touched], [old[i] for i in touched])
            rows = rewrite(_matching(again, text).drop(FILE_COLUMN, ROW_COLUMN))
            ref, writer_table = _appending(target)
            job = WriteJob(ref, postpone_buckets=postpone_bucket_counts(writer_table))
            ids = run_write(rows, writer_table, job, driver_messages=messages)
    except CommitOutcomeUnknownError:
        raise
    except BaseException:
        delete_written_index_files(store, messages)
        raise
    return ids[-1] if ids else None


def _appending(target: _Target) -> tuple[TableRef, FileStoreTable]:
    """The table (and its reference for tasks) that the rows a DELETE or UPDATE keeps or
    changes are written to: write-only, and plainly appended on an ``upsert-key`` table (Java
    rewrites only INSERT INTO into an upsert)."""
    extra = dict(APPENDING) if is_upsert_table(target.table.store) else {WRITE_ONLY: "true"}
    ref = replace(target.ref, options={**target.ref.options, **extra})
    return ref, target.table.copy(extra)


def _matching(rows: DataFrame, text: str | None) -> DataFrame:
    return rows if text is None else rows.where(_is_true(F.expr(text)))


def _collect_vectors(target: _Target, matched: DataFrame) -> dict[int, DeletionVector]:
    """File number -> the positions of ``matched`` rows in it, as one vector per file: each
    task builds the vectors of its rows, the driver merges those of a file."""
    bitmap64 = target.table.options.deletion_vectors_bitmap64
    schema = StructType(
        [StructField("file", IntegerType(), False), StructField("dv", BinaryType(), False)]
    )

    def build(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found: dict[int, DeletionVector] = {}
        for batch in batches:
            ids = batch.column(0).to_numpy(zero_copy_only=False)
            rows = batch.column(1).to_numpy(zero_copy_only=False)
            for file_id in np.unique(ids).tolist():
                dv = found.setdefault(file_id, DeletionVector(bitmap64))
                dv.delete(rows[ids == file_id])
        if found:
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(list(found), pa.int32()),
                    pa.array([dv.serialize()[0] for dv in found.values()], pa.binary()),
                ],
                names=["file", "dv"],
            )

    out: dict[int, DeletionVector] = {}
    for r in matched.select(FILE_COLUMN, ROW_COLUMN).mapInArrow(build, schema).collect():
        dv = DeletionVector.deserialize(bytes(r[1]))
        if r[0] in out:
            out[r[0]].merge(dv)
        else:
            out[r[0]] = dv
    return out


def _positioned_rows(
    target: _Target, files: Sequence[DataSplit], vectors: Sequence[DeletionFile | None]
) -> DataFrame:
    """The rows of ``files`` (single-file splits) that their ``vectors`` do not delete, with
    the file's index in ``files`` and the row's position in the file; one Spark task per file
    at most, the splits shipped as versioned bytes."""
    spark = target.spark
    ref = target.ref
    schema = spark_schema(target.table)
    out_schema = StructType(
        [
            *schema.fields,
            StructField(FILE_COLUMN, IntegerType(), False),
            StructField(ROW_COLUMN, LongType(), False),
        ]
    )
    target_arrow = spark_arrow_schema(out_schema)
    payloads = [
        (
            i,
            encode_split(s),
            None if v is None else v.path,
            None if v is None else v.offset,
            None if v is None else v.length,
        )
        for i, (s, v) in enumerate(zip(files, vectors, strict=True))
    ]
    slices = max(1, min(len(payloads), default_parallelism(spark) * 2))
    source = task_rows(
        spark,
        payloads,
        StructType(
            [
                StructField("id", IntegerType(), False),
                StructField("split", BinaryType(), False),
                StructField("dv_path", StringType(), True),
                StructField("dv_offset", LongType(), True),
                StructField("dv_length", LongType(), True),
            ]
        ),
        slices,
    )

    def read_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loaded = ref.load()
        store = loaded.store
        dv_index = dv_index_of(store)
        fields = list(store.fields)
        n = len(target_arrow) - 2
        for batch in batches:
            for file_id, blob, path, offset, length in zip(
                *(batch.column(i).to_pylist() for i in range(5)), strict=True
            ):
                split = decode_split(blob, loaded.partition_types)
                # decoded here, read below the TableRead that would check it: check it first
                vectors = () if path is None else (path,)
                check_split_paths(store, split.bucket, split.bucket_path, split.files, vectors)
                deleted = None
                if path is not None:
                    deleted = dv_index.read(DeletionFile(path, offset, length))
                f = split.files[0]
                for rows, positions in live_positions(store, split.bucket_path, f, fields, deleted):
                    columns = [rows.column(i).cast(target_arrow.field(i).type) for i in range(n)]
                    columns.append(pa.chunked_array([np.full(rows.num_rows, file_id, np.int32)]))
                    columns.append(pa.chunked_array([positions]))
                    yield from pa.Table.from_arrays(columns, schema=target_arrow).to_batches()

    return source.mapInArrow(read_files, out_schema)


def _file_rows(target: _Target, files: Sequence[DataSplit]) -> DataFrame:
    """The rows of ``files`` (single-file splits) with the file's index in ``files``, one
    Spark task per file at most, the splits shipped as versioned bytes."""
    spark = target.spark
    ref = target.ref
    schema = spark_schema(target.table)
    out_schema = StructType([*schema.fields, StructField(FILE_COLUMN, IntegerType(), False)])
    target_arrow = spark_arrow_schema(out_schema)
    payloads = [(i, encode_split(s)) for i, s in enumerate(files)]
    slices = max(1, min(len(payloads), default_parallelism(spark) * 2))
    source = task_rows(
        spark,
        payloads,
        StructType(
            [StructField("id", IntegerType(), False), StructField("split", BinaryType(), False)]
        ),
        slices,
    )

    def read_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        loaded = ref.load()
        reader = loaded.new_read_builder().new_read()
        n = len(target_arrow) - 1
        for batch in batches:
            ids = batch.column(0).to_pylist()
            blobs = batch.column(1).to_pylist()
            for file_id, blob in zip(ids, blobs, strict=True):
                split = decode_split(blob, loaded.partition_types)
                for rows in reader.to_arrow_batch_reader([split]):
                    columns = [rows.column(i).cast(target_arrow.field(i).type) for i in range(n)]
                    columns.append(pa.array(np.full(rows.num_rows, file_id, np.int32)))
                    yield pa.RecordBatch.from_arrays(columns, schema=target_arrow)

    return source.mapInArrow(read_files, out_schema)
