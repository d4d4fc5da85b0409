"""``write.merge-schema`` for the Spark doors: Java's SchemaHelper.mergeSchema.

A write with the option on (as a write option, or the session's
``spark.paimon.write.merge-schema``) merges its DataFrame's schema into the table's
(store/schema_merge.py: new columns appended, nullable; types widened; nested ROW fields
added), publishes the merged schema as the table's next schema file on the driver, and only
then writes: the data is aligned to the new schema by name (a column or nested field it lacks
is null) and cast to its types. As in Java, the schema change is committed before the data,
so a write that fails afterwards leaves the new schema (with no snapshot of it), and the
next write of the same columns finds nothing to change. Off (the default), nothing here runs
and a frame that does not match the table is refused as before.

``mergeSchema`` (the spelling of Spark's Parquet and Delta sources) is taken as
``write.merge-schema`` on the DataFrame doors; Java's connector ignores it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, StructField, StructType
from pyspark.sql.types import DataType as SparkType

from paimon_pyspark.errors import SchemaMismatchError
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.store.schema_merge import EXPLICIT_CAST, MERGE_SCHEMA, merge_schemas
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.arrow import from_arrow_type
from paimon_pyspark.types.data_types import DataField, RowType

SPARK_MERGE_SCHEMA = "mergeschema"
"""Spark's ``mergeSchema`` write option, lowercased as Spark hands option keys over."""
SESSION_PREFIX = "spark.paimon."


def _true(value: object) -> bool:
    return str(value).strip().lower() == "true"


def pop_merge_options(
    options: MutableMapping[str, Any], session: Mapping[str, str] | None = None
) -> tuple[bool, bool]:
    """(merge, explicit cast) from a write's options, which lose those keys (they steer the
    write and are never table options); ``session``: the ``spark.paimon.*`` settings
    without their prefix, which apply when the write's options do not name the key (Java ORs
    the two; here a write's ``false`` wins, so the SQL door can turn merging off for an
    INSERT by position)."""
    session = session or {}
    merge = options.pop(MERGE_SCHEMA, None)
    spark_merge = options.pop(SPARK_MERGE_SCHEMA, None)
    explicit = options.pop(EXPLICIT_CAST, None)
    if merge is None and spark_merge is None:
        merge = session.get(MERGE_SCHEMA)
    if explicit is None:
        explicit = session.get(EXPLICIT_CAST)
    return _true(merge) or _true(spark_merge), _true(explicit)


def session_merge_options(df: DataFrame) -> dict[str, str]:
    """The session's ``spark.paimon.write.merge-schema[.explicit-cast]`` settings."""
    conf = df.sparkSession.conf
    out = {}
    for key in (MERGE_SCHEMA, EXPLICIT_CAST):
        value = conf.get(SESSION_PREFIX + key, None)
        if value is not None:
            out[key] = value
    return out


def table_names(table: FileStoreTable, names: list[str]) -> list[str]:
    """Each data column under the table's spelling when it matches one case-insensitively
    (Spark's resolver); other names as they are."""
    by_lower = {n.lower(): n for n in table.field_names}
    return [n if n in table.field_names else by_lower.get(n.lower(), n) for n in names]


def data_row_type(schema: StructType, names: list[str]) -> RowType:
    """The Paimon row type of a DataFrame schema, as a table created from it would have."""
    arrow = spark_arrow_schema(schema)
    return RowType(
        tuple(
            DataField(i, name, from_arrow_type(f.type, f.nullable, name))
            for i, (name, f) in enumerate(zip(names, arrow, strict=True))
        )
    )


def merge_into_table(
    table: FileStoreTable, schema: StructType, explicit: bool
) -> tuple[bool, list[str]]:
    """Merge ``schema`` into ``table``'s latest schema and publish the result when it differs
    (Java's SchemaManager.mergeSchema: checked as any schema is, then written create-if-absent;
    when a concurrent change took the id, merged again into the winner's schema). Returns
    whether a schema was published, and the data columns under the table's spelling."""
    names = table_names(table, schema.fieldNames())
    data = data_row_type(schema, names)
    manager = table.schema_manager
    current = manager.latest() or table.table_schema
    while True:
        merged = merge_schemas(current, data, explicit, table.name)
        if merged is current:
            return False, names
        FileStoreTable(table.file_io, table.path, table.name, merged)  # the checks of a load
        if manager.commit_new(merged):
            return True, names
        current = manager.latest_from(merged.id)


def align_frame(df: DataFrame, names: list[str], target: StructType) -> DataFrame:
    """``df`` (its columns renamed to ``names``) as ``target``: columns by name, nested ROW
    fields by name too, a missing one null, every value cast to the target type by Spark."""
    source = {
        n: (c, f.dataType) for n, c, f in zip(names, df.columns, df.schema.fields, strict=True)
    }
    columns = []
    for field in target.fields:
        found = source.get(field.name)
        if found is None:
            columns.append(F.lit(None).cast(field.dataType).alias(field.name))
        else:
            column, kind = found
            columns.append(_align(F.col(f"`{column}`"), kind, field).alias(field.name))
    return df.select(*columns)


def _align(column: Column, source: SparkType, target: StructField) -> Column:
    if isinstance(source, StructType) and isinstance(target.dataType, StructType):
        if source == target.dataType:
            return column
        given = {f.name: f for f in source.fields}
        parts = []
        for sub in target.dataType.fields:
            found = given.get(sub.name)
            if found is None:
                parts.append(F.lit(None).cast(sub.dataType).alias(sub.name))
            else:
                parts.append(
                    _align(column.getField(found.name), found.dataType, sub).alias(sub.name)
                )
        return F.when(column.isNull(), F.lit(None).cast(target.dataType)).otherwise(
            F.struct(*parts)
        )
    return column.cast(target.dataType)


def merge_frame(
    df: DataFrame, table: FileStoreTable, explicit: bool, reload: Any
) -> tuple[DataFrame, FileStoreTable]:
    """The DataFrame door's merge step: publish the merged schema, reload the table with
    ``reload()`` (its dynamic options kept) and align ``df`` to it."""
    changed, names = merge_into_table(table, df.schema, explicit)
    if changed:
        table = reload()
    target = spark_schema(table)
    if df.schema == target and names == df.columns:
        return df, table
    return align_frame(df, names, target), table


def align_batches(
    batches: Iterator[pa.RecordBatch], target: pa.Schema, table: str
) -> Iterator[pa.RecordBatch]:
    """The Data Source door's alignment, in the write tasks (a data source cannot change its
    DataFrame): each batch as ``target``, columns and nested ROW fields by name
    (case-insensitively), a missing one null, values cast by Arrow's safe cast."""
    for batch in batches:
        columns = [
            _align_array(_find(batch.schema, batch.columns, f.name), f, batch.num_rows, table)
            for f in target
        ]
        yield pa.RecordBatch.from_arrays(
            columns, schema=pa.schema([f.with_nullable(True) for f in target])
        )


def _find(schema: pa.Schema | pa.StructType, arrays: list[pa.Array], name: str) -> pa.Array | None:
    names = [schema.field(i).name for i in range(len(arrays))]
    if name in names:
        return arrays[names.index(name)]
    lowered = [n.lower() for n in names]
    if name.lower() in lowered:
        return arrays[lowered.index(name.lower())]
    return None


def _align_array(array: pa.Array | None, field: pa.Field, rows: int, table: str) -> pa.Array:
    if array is None:
        return pa.nulls(rows, field.type)
    if pa.types.is_struct(field.type) and pa.types.is_struct(array.type):
        if array.type == field.type:
            return array
        children = [array.field(i) for i in range(array.type.num_fields)]
        parts = [
            _align_array(_find(array.type, children, sub.name), sub, rows, table)
            for sub in field.type
        ]
        return pa.StructArray.from_arrays(
            parts, fields=list(field.type), mask=array.is_null() if array.null_count else None
        )
    if array.type == field.type:
        return array
    try:
        return array.cast(field.type, safe=True)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise SchemaMismatchError(
            f"Table '{table}': field '{field.name}' of type {array.type} cannot be cast to the "
            f"merged schema's {field.type}: {e}"
        ) from None


def _incompatible(table: str, why: str) -> str:
    return (
        f"Table '{table}': Cannot write incompatible data for the table `{table}`, {why} "
        f"Set 'spark.paimon.{MERGE_SCHEMA}' = 'true' (or the hint "
        f"/*+ OPTIONS('{MERGE_SCHEMA}'='true') */) to merge the query's schema into the table's."
    )


def by_name_refusal(table: str, target: FileStoreTable, schema: StructType) -> str | None:
    """Why Java's PaimonAnalysis cannot match ``schema`` to the table by name (its words),
    or None when it can: more columns than the table, two columns for one, a NOT NULL column
    missing, an unknown column, or a nested ROW with a field the table's lacks."""
    columns = schema.fieldNames()
    fields = spark_schema(target).fields
    if len(columns) > len(fields):
        return _incompatible(
            table, "the number of data columns don't match with the table schema's."
        )
    matched: set[str] = set()
    given = {f.name: f for f in schema.fields}
    for field in fields:
        found = [c for c in columns if c.lower() == field.name.lower()]
        if len(found) > 1:
            return _incompatible(table, f"due to column name conflicts: {', '.join(found)}.")
        if not found:
            if not field.nullable:
                return _incompatible(
                    table,
                    f"due to non-nullable column `{field.name}` has no specified value.",
                )
            continue
        matched.add(found[0])
        extra = _extra_fields(given[found[0]].dataType, field.dataType)
        if extra:
            return _incompatible(table, f"nested struct has extra fields: {', '.join(extra)}.")
    unknown = [f"`{c}`" for c in columns if c not in matched]
    if unknown:
        return _incompatible(table, f"due to unknown column names: {', '.join(unknown)}.")
    return None


def _extra_fields(source: SparkType, target: SparkType) -> list[str]:
    """Nested ROW fields of ``source`` that ``target`` lacks (inside arrays too)."""
    if isinstance(source, ArrayType) and isinstance(target, ArrayType):
        return _extra_fields(source.elementType, target.elementType)
    if not (isinstance(source, StructType) and isinstance(target, StructType)):
        return []
    names = {n.lower(): f for n, f in zip(target.fieldNames(), target.fields, strict=True)}
    out = []
    for f in source.fields:
        match = names.get(f.name.lower())
        if match is None:
            out.append(f.name)
        else:
            out += [f"{f.name}.{e}" for e in _extra_fields(f.dataType, match.dataType)]
    return out
