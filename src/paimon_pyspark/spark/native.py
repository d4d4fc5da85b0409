"""Spark's own Parquet reader for the files that need no merge.

Our reader (spark/read.py ``payload_read``, a ``mapInArrow`` job) moves every batch from
Python to the JVM through Arrow. The files of an append table, and a primary-key bucket whose
files are one sorted run without retractions (``kv_read.raw_convertible``), hold the table's
rows as they are, so ``paimon_pyspark.spark.read`` and the SQL door hand those files to Spark's
vectorized Parquet reader: our scan picks the snapshot and prunes partitions and files by the
manifests' stats, Spark reads the listed files with the table's schema (no partition discovery:
Paimon files hold their partition columns) and prunes columns and row groups itself, for every query
on the DataFrame. Splits that must be merged are read by our reader at the same snapshot and
unioned in; a split's final file (``kv_read.final_file``: under deduplicate, the newest file,
when it holds no retraction) goes to Spark too, and our reader merges the other files without
its keys' rows.

Deletion vectors are applied by Spark too (:func:`_deleting`): the files with one are read with
each row's position in its file (``_metadata.row_index``) and a row is kept unless its bit is
set in its file's vector, given to Spark as a bitset literal. A primary-key table with deletion
vectors has its batch splits raw (``kv_read.raw_convertible(..., deletion_vectors=True)``: files
above level 0, their superseded rows marked), so all of it reads through Spark.

The files go to Spark only where Spark reads them exactly as our reader does: local files
(an object store needs Spark's own credentials), Parquet, written under the current schema
(no field-id mapping needed), and columns of types whose Parquet form Spark reads to the same
values (no floating-point filter either: Spark's NaN ordering differs from Paimon's). Anything
else reads through our reader, as option ``native-read`` = ``false`` forces.
"""

from __future__ import annotations

import json
import weakref
from collections import OrderedDict
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from paimon_pyspark.errors import FileMissingError, OptionError
from paimon_pyspark.fs.local import LocalFileIO
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.options import TIME_TRAVEL_KEYS
from paimon_pyspark.read import metadata_columns
from paimon_pyspark.read.fallback_read import two_branches
from paimon_pyspark.read.kv_read import final_file, raw_convertible
from paimon_pyspark.read.predicate import CompoundPredicate, LeafPredicate, Predicate
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.spark.schema import spark_schema
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.deletion_vectors import DeletionFile, dv_index_of
from paimon_pyspark.store.external_paths import planned_file_path
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import AtomicType, TimestampType

NATIVE_READ = "native-read"
"""Reader option: ``false`` reads every split through our reader."""
SKIP_RAW_SPLITS = "skip-raw-splits"
"""Reader option, set by the native read for our reader's part of a union: it reads only
the splits that need a merge, and of those only the rows that do not come from their
``kv_read.final_file`` (Spark reads that file)."""

_PLAN_KEYS = ("incremental-between", "incremental-between-timestamp")
"""Options whose plan is not one snapshot's state: our reader reads those whole."""


def _native_type(t: pa.DataType) -> bool:
    """Arrow types whose Parquet columns Spark's reader returns as our reader's Arrow values."""
    if pa.types.is_timestamp(t):
        return t.unit != "ns" and t.tz in (None, "UTC", "+00:00")
    return (
        pa.types.is_boolean(t)
        or (pa.types.is_integer(t) and pa.types.is_signed_integer(t))
        or (pa.types.is_floating(t) and not pa.types.is_float16(t))
        or pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_decimal128(t)
        or pa.types.is_date32(t)
    )


def eligible(table: FileStoreTable) -> bool:
    """Whether the table's files can go to Spark's Parquet reader at all: not those of a
    table read over two branches (read/fallback_read.py), which our reader reads."""
    if not isinstance(table.file_io, LocalFileIO) or two_branches(table.store) is not None:
        return False
    names = [n.lower() for n in table.field_names]
    if len(set(names)) != len(names):  # Spark matches Parquet columns case-insensitively
        return False
    if _METADATA in names:  # it would hide Spark's file metadata column from _kept_rows
        return False
    return all(_native_type(f.type) for f in table.arrow_schema)


def is_raw(split: DataSplit, settings: MergeSettings | None, deletion_vectors: bool) -> bool:
    """Whether the split's files are its rows as they are (no merge, no retraction) once their
    deletion vectors are applied (``deletion_vectors``: the table's option)."""
    if settings is None:
        return True
    return split.bucket != POSTPONE_BUCKET and raw_convertible(
        split.files, settings, deletion_vectors
    )


def _final_file(split: DataSplit, settings: MergeSettings | None) -> DataFileMeta | None:
    """The file of a split to merge whose rows Spark may read as they are (``final_file``):
    our reader leaves its rows out of the merge (``skip-raw-splits``)."""
    if settings is None or split.bucket == POSTPONE_BUCKET:
        return None
    return final_file(split.files, settings)


_METADATA = "_metadata"
"""Spark's hidden file metadata column (``row_index``, ``file_size``), which a table column of
that name shadows; ``DataFrame.metadataColumn``, which a shadowed one needs, is pyspark 4."""

_GLOB = frozenset("*?[]{}\\")
"""Characters Spark's file source reads as a glob pattern in a path it is given."""


def _file_ok(table: FileStoreTable, split: DataSplit) -> bool:
    current = table.table_schema
    if _GLOB.intersection(split.bucket_path):
        return False
    for f in split.files:
        if not f.file_name.lower().endswith(".parquet") or f.external_path is not None:
            return False
        if f.schema_id != current.id:
            old = table.store.schema_manager.schema(f.schema_id)
            if old.fields != current.fields:
                return False
    return True


def native_frame(
    spark: SparkSession,
    table: FileStoreTable,
    opts: Mapping[str, str],
    python_frame: Any,
) -> DataFrame | None:
    """The relation of ``opts`` (``filter``, ``columns``, time travel) read by Spark's Parquet
    reader where it can be, or None when our reader must read it all.

    ``table``: the table with ``opts``' table options applied (the planner's load);
    ``python_frame(options)``: our reader's DataFrame for ``options``, for the splits that
    need a merge.
    """
    flag = opts.get(NATIVE_READ, "true").strip().lower()
    if flag not in ("true", "false"):
        raise OptionError(
            f"Table '{table.name}': option '{NATIVE_READ}' = '{opts[NATIVE_READ]}' must be "
            "true or false."
        )
    if flag == "false" or any(opts.get(k) for k in _PLAN_KEYS) or not eligible(table):
        return None
    if opts.get(metadata_columns.OPTION):  # our reader adds them
        return None
    filter_text = opts.get("filter")
    predicate = None
    if filter_text is not None and filter_text.strip():
        predicate = parse_predicate(filter_text, table.fields, table.name)
    condition = spark_condition(predicate) if predicate is not None else None
    if predicate is not None and condition is None:
        return None
    rb = table.new_read_builder()
    if predicate is not None:
        rb = rb.with_filter(predicate)
    plan = rb.new_scan().plan()
    if plan.snapshot_id is None:
        return None
    settings = MergeSettings.from_table(table.store) if table.primary_keys else None
    dv = table.options.deletion_vectors_enabled
    splits = plan.splits()
    raw: list[DataSplit] = []
    merged = 0
    for split in splits:
        if is_raw(split, settings, dv):
            raw.append(split)
            continue
        merged += 1
        final = _final_file(split, settings)
        if final is not None:
            raw.append(split.with_files((final,)))
    if not raw:
        return None
    if not all(_file_ok(table, split) for split in raw):
        return None
    wanted = _columns(table, opts.get("columns"))
    needed = wanted + sorted(_fields_of(predicate) - set(wanted)) if predicate else wanted
    full = spark_schema(table)
    schema = StructType([full[name] for name in needed])
    df = _files_frame(spark, table, schema, raw)
    if merged:
        rest = {k: v for k, v in opts.items() if k not in TIME_TRAVEL_KEYS}
        rest.update({"snapshot-id": str(plan.snapshot_id), SKIP_RAW_SPLITS: "true"})
        rest["columns"] = ",".join(needed)
        df = df.unionByName(python_frame(rest))
    if condition is not None and not _decided_by_partitions(table, predicate, splits):
        df = df.filter(condition)
    if needed != wanted:
        df = df.selectExpr(*[_quoted(name) for name in wanted])
    return df


def _decided_by_partitions(
    table: FileStoreTable, predicate: Predicate | None, splits: list[DataSplit]
) -> bool:
    """Whether every row of ``splits`` matches ``predicate`` as it names only partition fields
    and the partition of each split satisfies it (judged as ``TableRead`` judges one): then
    Spark need not test it row by row (nor analyze it, ~13 ms of a small query's plan)."""
    keys = set(table.partition_keys)
    if predicate is None or not keys or not predicate.fields() <= keys:
        return False
    fields = list(table.table_schema.partition_fields())
    values = {s.partition_values for s in splits}
    try:
        rows = pa.table(
            [pa.array([v[i] for v in values], to_arrow_type(f.type)) for i, f in enumerate(fields)],
            names=[f.name for f in fields],
        )
        return bool(rows.filter(predicate.to_arrow_expression()).num_rows == len(values))
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return False


def _columns(table: FileStoreTable, text: str | None) -> list[str]:
    """The table's field names the ``columns`` option asks for, in its order (Spark resolves
    names case-insensitively; the source has already refused unknown ones)."""
    if text is None:
        return list(table.field_names)
    by_lower = {f.lower(): f for f in table.field_names}
    names = [c.strip() for c in text.split(",")]
    return [n if n in table.field_names else by_lower[n.lower()] for n in names]


def _fields_of(predicate: Predicate) -> set[str]:
    if isinstance(predicate, CompoundPredicate):
        return set().union(*(_fields_of(c) for c in predicate.children))
    return {predicate.field} if isinstance(predicate, LeafPredicate) else set()


_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
_RELATIONS_KEPT = 32
_relations: weakref.WeakKeyDictionary[SparkSession, OrderedDict[tuple[str, ...], DataFrame]] = (
    weakref.WeakKeyDictionary()
)
"""Per session, the Parquet relations of the last file lists read, newest last."""


def _relation(spark: SparkSession, schema: StructType, paths: list[str]) -> DataFrame:
    """Spark's Parquet relation of exactly ``paths`` with ``schema``. Making one stats every
    file on the driver (60-100 ms for 7 local files: most of a small query's cost), so the
    last few are kept per session: a Paimon data file never changes once written, so a
    relation of the same files is the same relation (each query still plans its snapshot)."""
    key = (schema.json(), *paths)
    kept = _relations.setdefault(spark, OrderedDict())
    df = kept.get(key)
    if df is None:
        df = _listed(spark, lambda: spark.read.schema(schema).parquet(*paths), len(paths))
        kept[key] = df
        while len(kept) > _RELATIONS_KEPT:
            kept.popitem(last=False)
    else:
        kept.move_to_end(key)
    return df


def _files_frame(
    spark: SparkSession, table: FileStoreTable, schema: StructType, splits: list[DataSplit]
) -> DataFrame:
    """Spark's Parquet read of the files of ``splits`` with ``schema``, their deletion vectors
    applied: the files without a vector in one relation, those with one apart
    (:func:`_deleting`), so only their rows pay for the vector's test; a file whose vector
    deletes every row is not read."""
    plain: list[str] = []
    marked: list[tuple[str, DataFileMeta, DeletionFile]] = []
    for split in splits:
        deletions = split.deletion_files or (None,) * len(split.files)
        for f, deletion in zip(split.files, deletions, strict=True):
            path = planned_file_path(split.bucket_path, f)
            if deletion is None or deletion.cardinality == 0:
                plain.append(f"file://{path}")
            elif deletion.cardinality is None or deletion.cardinality < f.row_count:
                marked.append((path, f, deletion))
            # else every row of the file is deleted: nothing to read
    frames = [_relation(spark, schema, plain)] if plain else []
    if marked:
        frames.append(_deleting(spark, table, schema, marked))
    if not frames:
        return spark.createDataFrame([], schema)
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    return df


_DELETING_KEPT = 4
_deleting_frames: weakref.WeakKeyDictionary[
    SparkSession, OrderedDict[tuple[str, ...], DataFrame]
] = weakref.WeakKeyDictionary()
"""Per session, the frames of the last files with vectors read (:func:`_deleting`), newest
last: fewer than relations, as each holds its bitsets (a bit per row of its files)."""

_BITS = "array<array<bigint>>"
"""The deleted rows of the files of a relation, each a bitset as 64-bit words (bit ``i`` of
word ``j`` set: row ``64 * j + i`` is deleted), in the order of their sizes (``_SIZES``)."""
_SIZES = "array<bigint>"


def _deleting(
    spark: SparkSession,
    table: FileStoreTable,
    schema: StructType,
    files: list[tuple[str, DataFileMeta, DeletionFile]],
) -> DataFrame:
    """The rows of ``files`` (local path, file, where its vector is) that their vectors keep:
    a Parquet relation with Spark's ``_metadata.file_size`` and ``_metadata.row_index``, kept
    where the row's bit in its file's bitset is not set. The bitsets are a map literal from
    each file's size (a file's size picks its bitset in a few integer comparisons a row, where
    its name costs string comparisons: a fifth of the read), so files of one size go to
    separate relations. The literal is ``from_json`` of its text, which Spark folds once per
    query (an ``array(...)`` of SQL literals costs the parser and the analyzer a node per
    word); a word is found by index and its bit by a shift, a few instructions a row in
    whole-stage generated code. (A join against the deleted positions costs a shuffle or a
    broadcast of them, a relation per file the planning of each.) The frame is kept per
    session (``_deleting_frames``), as :func:`_relation` keeps its relation: the same files
    with the same vectors are the same rows."""
    key = (
        "deleting",
        schema.json(),
        *(f"{path}\0{d.path}\0{d.offset}\0{d.length}" for path, _, d in files),
    )
    kept = _deleting_frames.setdefault(spark, OrderedDict())
    found = kept.get(key)
    if found is not None:
        kept.move_to_end(key)
        return found
    dv_index = dv_index_of(table.store)
    groups: list[dict[int, tuple[str, list[int]]]] = []
    for path, f, deletion in files:
        try:
            vector = dv_index.read(deletion)
        except FileMissingError as e:
            raise FileMissingError(
                f"Table '{table.name}': the deletion vector of data file '{path}' is in index "
                f"file '{deletion.path}', which is missing: {e}",
                e.path,
            ) from e
        size = table.file_io.file_size(path)
        group = next((g for g in groups if size not in g), None)
        if group is None:
            group = {}
            groups.append(group)
        group[size] = (path, _words(vector, f.row_count))
    taken = {n.lower() for n in schema.names}
    names = [_fresh(base, taken) for base in ("_dv_size", "_dv_row", "_dv_bits")]
    frames = [
        _kept_rows(_relation(spark, schema, [f"file://{p}" for p, _ in g.values()]), g, names)
        for g in groups
    ]
    df = frames[0]
    for other in frames[1:]:
        df = df.union(other)
    kept[key] = df
    while len(kept) > _DELETING_KEPT:
        kept.popitem(last=False)
    return df


def _kept_rows(
    rel: DataFrame, bitsets: Mapping[int, tuple[str, list[int]]], names: list[str]
) -> DataFrame:
    """The rows of ``rel`` (files of distinct sizes) whose bit is not set in the bitset of
    their file's size (``bitsets``: size -> (path, words)); ``names``: free column names."""
    size, row, bits = names
    meta = rel[_METADATA]
    words = F.map_from_arrays(
        F.from_json(F.lit(json.dumps(list(bitsets))), _SIZES),
        F.from_json(F.lit(json.dumps([w for _, w in bitsets.values()])), _BITS),
    )
    word = f"get(try_element_at({bits}, {size}), CAST(shiftright({row}, 6) AS INT))"
    return (
        rel.select(
            "*",
            meta.getField("file_size").alias(size),
            meta.getField("row_index").alias(row),
            words.alias(bits),
        )
        .where(f"NOT ((shiftright({word}, CAST({row} & 63 AS INT)) & 1L) <=> 1L)")
        .drop(size, row, bits)
    )


def _words(vector: DeletionVector, row_count: int) -> list[int]:
    """The bitset of ``vector``'s positions below ``row_count`` as signed 64-bit words, up to
    the word of the last one (a row past them finds no word: kept)."""
    positions = vector.positions()
    positions = positions[positions < np.uint64(row_count)].astype(np.int64)
    if not positions.size:
        return []
    bits = np.zeros((int(positions[-1]) // 64 + 1) * 64, dtype=np.bool_)
    bits[positions] = True
    words: list[int] = np.packbits(bits, bitorder="little").view("<i8").tolist()
    return words


def _fresh(base: str, taken: set[str]) -> str:
    """A column name like ``base`` that no name of ``taken`` (lower case) is; taken with it."""
    name, n = base, 0
    while name.lower() in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name.lower())
    return name


def _listed(spark: SparkSession, make: Callable[[], DataFrame], files: int) -> DataFrame:
    """``make()`` with Spark's file listing kept on the driver: past 32 paths Spark lists them
    in a job of one task per path (2 s for 128 local files, against 0.2 s here), though our
    plan already knows every file. The setting is restored at once: the listing happens while
    the frame is made, and its schema asked for, since a Spark Connect server resolves the
    relation (and lists its files) only when asked; it keeps the resolved relation for the
    queries on the frame."""

    def made() -> DataFrame:
        df = make()
        df.schema  # noqa: B018  (resolves the relation now: Connect is lazy)
        return df

    before = spark.conf.get(_LISTING_THRESHOLD)
    if before is not None and int(before) >= files:
        return made()
    spark.conf.set(_LISTING_THRESHOLD, str(files))
    try:
        return made()
    finally:
        if before is None:
            spark.conf.unset(_LISTING_THRESHOLD)
        else:
            spark.conf.set(_LISTING_THRESHOLD, before)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(leaf: LeafPredicate, value: Any) -> str:
    """``value`` as Spark SQL typed as the leaf's field, so Spark compares without widening.
    Text goes as its UTF-8 bytes in hex, so no character of it is ever parsed as SQL."""
    t = leaf.type
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(t, TimestampType):
        kind = "timestamp" if t.local_tz else "timestamp_ntz"
        return f"CAST({_text(value.isoformat())} AS {kind})"
    if isinstance(value, bytes):
        return f"X'{value.hex()}'"
    if isinstance(value, str):
        return _text(value)
    kind = _spark_type_of(leaf).simpleString()
    if isinstance(value, int):
        return f"CAST({int(value)} AS {kind})"
    if isinstance(value, Decimal):
        return f"CAST({_text(format(value, 'f'))} AS {kind})"
    return f"CAST({_text(value.isoformat())} AS {kind})"  # a date


def _text(value: str) -> str:
    return f"CAST(X'{value.encode('utf-8').hex()}' AS STRING)"


def _spark_type_of(leaf: LeafPredicate) -> Any:
    schema: StructType = from_arrow_schema(pa.schema([pa.field("x", to_arrow_type(leaf.type))]))
    return schema.fields[0].dataType


_COMPARE = {
    "equal": "=",
    "notEqual": "<>",
    "lessThan": "<",
    "lessOrEqual": "<=",
    "greaterThan": ">",
    "greaterOrEqual": ">=",
}
_STRING_FUNCTIONS = {"startsWith": "startswith", "endsWith": "endswith", "contains": "contains"}


def spark_condition(predicate: Predicate) -> str | None:
    """``predicate`` as a Spark SQL condition selecting the same rows as its Arrow expression,
    or None when Spark's semantics could differ (floating point, binary patterns, LIKE
    escapes). Text, not Columns: Spark parses it in one call, where each Column costs the
    driver a Py4J round trip (40 for one comparison)."""
    if isinstance(predicate, CompoundPredicate):
        parts = [spark_condition(c) for c in predicate.children]
        if any(p is None for p in parts):
            return None
        joiner = " AND " if predicate.function == "and" else " OR "
        return "(" + joiner.join(f"({p})" for p in parts) + ")"
    if not isinstance(predicate, LeafPredicate):
        return None
    return _leaf_condition(predicate)


def _leaf_condition(leaf: LeafPredicate) -> str | None:
    t, fn, lits = leaf.type, leaf.function, leaf.literals
    if isinstance(t, AtomicType) and t.name in ("FLOAT", "DOUBLE"):
        return None
    col = _quoted(leaf.field)
    if fn == "isNull":
        return f"{col} IS NULL"
    if fn == "isNotNull":
        return f"{col} IS NOT NULL"
    if fn in ("startsWith", "endsWith", "contains", "like") and not isinstance(lits[0], str):
        return None
    if fn == "like" and "\\" in lits[0]:
        return None
    if leaf.never_true():
        return "false"
    if fn in _COMPARE:
        return f"{col} {_COMPARE[fn]} {_literal(leaf, lits[0])}"
    if fn in ("in", "notIn"):
        values = [_literal(leaf, x) for x in lits if x is not None]
        if not values:
            return f"{col} IS NOT NULL" if fn == "notIn" else "false"
        found = f"{col} IN ({', '.join(values)})"
        return found if fn == "in" else f"({col} IS NOT NULL AND NOT ({found}))"
    if fn == "between":
        return f"({col} >= {_literal(leaf, lits[0])} AND {col} <= {_literal(leaf, lits[1])})"
    if fn == "notBetween":
        lo, hi = lits
        parts = [f"{col} < {_literal(leaf, lo)}"] if lo is not None else []
        parts += [f"{col} > {_literal(leaf, hi)}"] if hi is not None else []
        return parts[0] if len(parts) == 1 else f"({parts[0]} OR {parts[1]})"
    if fn in _STRING_FUNCTIONS:
        return f"{_STRING_FUNCTIONS[fn]}({col}, {_text(lits[0])})"
    if fn == "like":
        return f"{col} LIKE {_text(lits[0])}"
    return None
