"""The statements that read a table's definition (sql/show.py), run for the SQL door: their
rows and columns are those of Spark 4 with Java's Spark connector.

- ``DESCRIBE [EXTENDED] t``: ``col_name, data_type, comment``; the columns, then ``# Partition
  Information``; EXTENDED adds ``# Metadata Columns`` (Java's hidden columns), ``# Detailed
  Table Information`` (catalog, database, table, type, comment, location, provider, properties)
  and Java's ``# Column Not Null``.
- ``SHOW CREATE TABLE t``: ``createtab_stmt``, in Spark's layout, with the primary key as the
  ``'primary-key'`` property as Java shows it. It is written to run again through the door:
  types Spark cannot spell (``TIMESTAMP(3)``, ``VARBINARY(n)``, ``TIME(p)``, a ``NOT NULL``
  array element or map key) take the Flink spelling the door reads, and the table's location
  (Java's ``LOCATION`` and ``'path'``) is left out, since a filesystem catalog places every
  table itself and refuses a given path, as Java's does.
- ``SHOW PARTITIONS t [PARTITION (...)]``: ``partition``, as ``k=v/k2=v2`` (values cast to
  string as Spark does, NULL as ``null``), sorted.
- ``SHOW TAGS t``: ``tag``, sorted (Java's ShowTagsCommand).
- ``SHOW COLUMNS``: ``column`` (Java's PaimonShowColumnsCommand).
- ``SHOW TBLPROPERTIES t [('key')]``: ``key, value`` (Java's table properties: the options,
  ``path`` and ``primary-key``), sorted.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import zoneinfo
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StringType, StructField, StructType

from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.errors import (
    DatabaseNotExistError,
    PartitionSpecError,
    TableNotExistError,
    UnsupportedOperationError,
    UnsupportedStatementError,
)
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.sql.dialect import Paimon
from paimon_pyspark.sql.show import (
    DescribeTable,
    PartitionSpec,
    ShowColumns,
    ShowCreateTable,
    ShowPartitions,
    ShowTags,
    ShowTblProperties,
)
from paimon_pyspark.sql.statements import CATALOG, TableName
from paimon_pyspark.store.paths import escape_path_name
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.data_types import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VectorType,
)

if TYPE_CHECKING:
    from paimon_pyspark.spark.sql import _Runner

PROVIDER = "paimon"

_DESCRIBE = StructType(
    [
        StructField("col_name", StringType(), False),
        StructField("data_type", StringType(), False),
        StructField("comment", StringType(), True),
    ]
)
_CREATE = StructType([StructField("createtab_stmt", StringType(), False)])
_PARTITIONS = StructType([StructField("partition", StringType(), False)])
_TAGS = StructType([StructField("tag", StringType(), False)])
_COLUMNS = StructType([StructField("column", StringType(), True)])
_PROPERTIES = StructType(
    [StructField("key", StringType(), False), StructField("value", StringType(), False)]
)

_REDACTED = "*********(redacted)"
_REDACT = re.compile(r"(?i)secret|password|token|access[.]?key|url")
"""Spark's ``spark.redaction.regex`` and ``spark.sql.redaction.options.regex`` defaults: a
property whose key or value matches is shown redacted, as Spark's redactOptions does."""


# --- names and literals -------------------------------------------------------------------------


def spark_quote(name: str) -> str:
    """``name`` as Spark's quoteIfNeeded writes it: backquoted unless it is letters, digits and
    underscores, not all digits."""
    plain = (
        name != ""
        and all(c.isascii() and (c.isalnum() or c == "_") for c in name)
        and not name.isdigit()
    )
    return name if plain else "`" + name.replace("`", "``") + "`"


def quote(name: str) -> str:
    """:func:`spark_quote`, and also backquoted when the dialect reads the name as a keyword
    (``date``), so that a statement parses back."""
    if name.upper() in Paimon.Tokenizer.KEYWORDS:
        return "`" + name.replace("`", "``") + "`"
    return spark_quote(name)


def string_literal(text: str) -> str:
    """Spark's escapeSingleQuotedString, quoted."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _full_name(identifier: str) -> str:
    db, table = identifier.split(".", 1)
    return ".".join(quote(p) for p in (CATALOG, db, table))


# --- types ------------------------------------------------------------------------------------

_SIMPLE = {
    "BOOLEAN": "boolean",
    "TINYINT": "tinyint",
    "SMALLINT": "smallint",
    "INT": "int",
    "BIGINT": "bigint",
    "FLOAT": "float",
    "DOUBLE": "double",
    "DATE": "date",
    "VARIANT": "variant",
    "BLOB": "binary",
}


def simple_string(t: DataType) -> str:
    """The Spark type Java's connector gives ``t``, as Spark's ``simpleString`` writes it."""
    if isinstance(t, AtomicType):
        return _SIMPLE.get(t.name, t.name.lower())
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, CharType):
        if t.variable:
            return "string" if t.length == MAX_LENGTH else f"varchar({t.length})"
        return f"char({t.length})"
    if isinstance(t, BinaryType):
        return "binary"
    if isinstance(t, TimeType):
        return "int"
    if isinstance(t, TimestampType):
        return "timestamp" if t.local_tz else "timestamp_ntz"
    if isinstance(t, (ArrayType, VectorType)):
        return f"array<{simple_string(t.element)}>"
    if isinstance(t, MultisetType):
        return f"map<{simple_string(t.element)},int>"
    if isinstance(t, MapType):
        return f"map<{simple_string(t.key)},{simple_string(t.value)}>"
    if isinstance(t, RowType):
        inner = ",".join(f"{f.name}:{simple_string(f.type)}" for f in t.fields)
        return f"struct<{inner}>"
    return t.sql().lower()


def _not_null(t: DataType) -> str:
    return "" if t.nullable else " NOT NULL"


def ddl_type(t: DataType) -> str:
    """``t`` in a column definition the door reads back to ``t``: Spark's spelling (``t.sql``)
    where Spark has the type, Flink's where it has not."""
    if isinstance(t, AtomicType):
        return "BINARY" if t.name == "BLOB" else t.name
    if isinstance(t, DecimalType):
        return f"DECIMAL({t.precision},{t.scale})"
    if isinstance(t, CharType):
        return t.sql()
    if isinstance(t, BinaryType):
        return "BINARY" if t.variable and t.length == MAX_LENGTH else t.sql()
    if isinstance(t, TimeType):
        return t.sql()
    if isinstance(t, TimestampType):
        if t.local_tz:
            return "TIMESTAMP" if t.precision == 6 else f"TIMESTAMP_LTZ({t.precision})"
        return "TIMESTAMP_NTZ" if t.precision == 6 else f"TIMESTAMP({t.precision})"
    if isinstance(t, (ArrayType, VectorType)):
        return f"ARRAY<{ddl_type(t.element)}{_not_null(t.element)}>"
    if isinstance(t, MultisetType):
        return f"MAP<{ddl_type(t.element)} NOT NULL, INT NOT NULL>"
    if isinstance(t, MapType):
        key = f"{ddl_type(t.key)}{_not_null(t.key)}"
        return f"MAP<{key}, {ddl_type(t.value)}{_not_null(t.value)}>"
    if isinstance(t, RowType):
        return "STRUCT<" + ", ".join(_ddl_field(f, ": ") for f in t.fields) + ">"
    return t.sql()


def _ddl_field(f: DataField, sep: str) -> str:
    comment = f" COMMENT {string_literal(f.description)}" if f.description is not None else ""
    return f"{quote(f.name)}{sep}{ddl_type(f.type)}{_not_null(f.type)}{comment}"


# --- loading ----------------------------------------------------------------------------------


def _table(runner: _Runner, name: TableName) -> tuple[str, FileStoreTable]:
    identifier = runner.identifier(name)
    if "$" in name.table and parse_table_identifier(identifier)[3] is not None:
        raise UnsupportedStatementError(
            f"Table '{identifier}': DESCRIBE and SHOW of a system table are not supported by "
            "paimon_pyspark's SQL door; SELECT from it instead."
        )
    try:
        return identifier, runner.catalog.get_table(identifier)
    except DatabaseNotExistError:
        raise TableNotExistError(identifier) from None


def table_properties(table: FileStoreTable) -> dict[str, str]:
    """Java's SparkTable properties without Spark's reserved ones: the table's options, its
    ``path`` and its ``primary-key``."""
    props = dict(table.table_schema.options)
    props["path"] = table.path
    if table.primary_keys:
        props["primary-key"] = ",".join(table.primary_keys)
    return props


def _redact(props: dict[str, str]) -> dict[str, str]:
    return {k: _REDACTED if _REDACT.search(k) or _REDACT.search(v) else v for k, v in props.items()}


# --- DESCRIBE ---------------------------------------------------------------------------------


def describe(runner: _Runner, stmt: DescribeTable) -> DataFrame:
    identifier, table = _table(runner, stmt.name)
    if stmt.partition is not None:
        _check_full_spec(identifier, table, stmt.partition)
        if stmt.extended:
            raise UnsupportedStatementError(
                f"DESCRIBE EXTENDED {identifier} PARTITION (...) is not supported by "
                "paimon_pyspark's SQL door; DESCRIBE EXTENDED without PARTITION and SHOW "
                "PARTITIONS are."
            )
    return runner.rows(_DESCRIBE, describe_rows(identifier, table, stmt.extended))


def describe_rows(identifier: str, table: FileStoreTable, extended: bool) -> list[tuple[Any, ...]]:
    """The rows of ``DESCRIBE [EXTENDED]`` of ``table`` (``db.t``)."""
    fields = table.fields
    rows: list[tuple[Any, ...]] = [(f.name, simple_string(f.type), f.description) for f in fields]
    if table.partition_keys:
        rows.append(("# Partition Information", "", ""))
        rows.append(("# col_name", "data_type", "comment"))
        by_name = {f.name: f for f in fields}
        for key in table.partition_keys:
            f = by_name[key]
            rows.append((spark_quote(key), simple_string(f.type), f.description))
    if extended:
        rows += _metadata_columns(table)
        rows += _details(identifier, table)
        not_null = [f for f in fields if not f.type.nullable]
        if not_null:
            rows.append(("# Column Not Null", "", ""))
            rows += [(f.name, simple_string(f.type), "NOT NULL") for f in not_null]
    return rows


def _check_full_spec(identifier: str, table: FileStoreTable, spec: PartitionSpec) -> None:
    keys = table.partition_keys
    if sorted(k.lower() for k in spec) != sorted(k.lower() for k in keys):
        raise PartitionSpecError(
            f"Table '{identifier}': DESCRIBE partition must specify all the correct partition "
            f"columns ({', '.join(keys) or 'none: the table is not partitioned'}), got "
            f"PARTITION ({', '.join(spec)})."
        )


def _metadata_columns(table: FileStoreTable) -> list[tuple[Any, ...]]:
    by_name = {f.name: f for f in table.fields}
    partition = ",".join(f"{k}:{simple_string(by_name[k].type)}" for k in table.partition_keys)
    rows: list[tuple[Any, ...]] = [("", "", ""), ("# Metadata Columns", "", "")]
    if table.options.options.get("row-tracking.enabled", "false").lower() == "true":
        rows += [("_ROW_ID", "bigint", ""), ("_SEQUENCE_NUMBER", "bigint", "")]
    rows += [
        ("__paimon_file_path", "string", ""),
        ("__paimon_row_index", "bigint", ""),
        ("__paimon_partition", f"struct<{partition}>", ""),
        ("__paimon_bucket", "int", ""),
    ]
    return rows


def _details(identifier: str, table: FileStoreTable) -> list[tuple[Any, ...]]:
    db, name = identifier.split(".", 1)
    rows: list[tuple[Any, ...]] = [
        ("", "", ""),
        ("# Detailed Table Information", "", ""),
        ("Catalog", CATALOG, ""),
        ("Database", db, ""),
        ("Table", name, ""),
        ("Type", "MANAGED", ""),
    ]
    if table.table_schema.comment is not None:
        rows.append(("Comment", table.table_schema.comment, ""))
    rows.append(("Location", table.path, ""))
    rows.append(("Provider", PROVIDER, ""))
    props = _redact(table_properties(table))
    text = ",".join(f"{k}={v}" for k, v in sorted(props.items()))
    rows.append(("Table Properties", f"[{text}]", ""))
    return rows


# --- SHOW CREATE TABLE ------------------------------------------------------------------------


def create_statement(identifier: str, table: FileStoreTable) -> str:
    """The CREATE TABLE statement of ``table``, in Spark's layout (ShowCreateTableExec)."""
    schema = table.table_schema
    columns = ",\n  ".join(_ddl_field(f, " ") for f in schema.fields)
    out = [f"CREATE TABLE {_full_name(identifier)} (\n  {columns})\n", f"USING {PROVIDER}\n"]
    if schema.partition_keys:
        out.append(f"PARTITIONED BY ({', '.join(quote(k) for k in schema.partition_keys)})\n")
    if schema.comment is not None:
        out.append(f"COMMENT {string_literal(schema.comment)}\n")
    props = dict(schema.options)
    if schema.primary_keys:
        props["primary-key"] = ",".join(schema.primary_keys)
    if props:
        items = ",\n  ".join(
            f"{string_literal(k)} = {string_literal(v)}" for k, v in sorted(props.items())
        )
        out.append(f"TBLPROPERTIES (\n  {items})\n")
    return "".join(out)


def show_create_table(runner: _Runner, stmt: ShowCreateTable) -> DataFrame:
    identifier, table = _table(runner, stmt.name)
    return runner.rows(_CREATE, [(create_statement(identifier, table),)])


# --- SHOW PARTITIONS --------------------------------------------------------------------------


def _partition_text(value: Any, t: DataType, zone: dt.tzinfo = dt.UTC) -> str:
    """A partition value cast to STRING as Spark casts it (an instant in the session's time
    ``zone``); NULL is ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dt.datetime):
        local = value.astimezone(zone).replace(tzinfo=None) if value.tzinfo else value
        text = local.strftime("%Y-%m-%d %H:%M:%S")
        if local.microsecond:
            text += "." + f"{local.microsecond:06d}".rstrip("0")
        return text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _spec_text(text: str, t: DataType) -> str:
    """A spec's value cast to the partition column's type and back to text, as Spark compares
    them (``hh = '01'`` is ``hh=1``); a value that does not cast matches nothing."""
    value: Any = text
    try:
        if isinstance(t, AtomicType) and t.name in ("TINYINT", "SMALLINT", "INT", "BIGINT"):
            value = int(text.strip())
        elif isinstance(t, AtomicType) and t.name in ("FLOAT", "DOUBLE"):
            value = float(text.strip())
        elif isinstance(t, AtomicType) and t.name == "BOOLEAN":
            value = {"true": True, "false": False}[text.strip().lower()]
        elif isinstance(t, AtomicType) and t.name == "DATE":
            value = dt.date.fromisoformat(text.strip())
        elif isinstance(t, DecimalType):
            value = decimal.Decimal(text.strip()).quantize(decimal.Decimal(1).scaleb(-t.scale))
        elif isinstance(t, TimestampType):
            value = dt.datetime.fromisoformat(text.strip())
    except (ValueError, KeyError, decimal.InvalidOperation):
        return "\u0000"  # no partition value has this text
    return _partition_text(value, t)


def _session_zone(runner: _Runner) -> dt.tzinfo:
    name = runner.spark.conf.get("spark.sql.session.timeZone") or "UTC"
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def show_partitions(runner: _Runner, stmt: ShowPartitions) -> DataFrame:
    identifier, table = _table(runner, stmt.name)
    keys = table.partition_keys
    if not keys:
        sql_id = ".".join(
            "`" + p.replace("`", "``") + "`" for p in (CATALOG, *identifier.split(".", 1))
        )
        raise UnsupportedOperationError(
            f"[INVALID_PARTITION_OPERATION.PARTITION_SCHEMA_IS_EMPTY] The partition command is "
            f"invalid. Table {sql_id} is not partitioned: SHOW PARTITIONS needs "
            "a partitioned table."
        )
    wanted: dict[str, str] = {}
    for key, value in (stmt.partition or {}).items():
        found = next((k for k in keys if k.lower() == key.lower()), None)
        if found is None:
            raise PartitionSpecError(
                f"Table '{identifier}': PARTITION ({key} = ...) names a column that is not a "
                f"partition key (partition keys: {', '.join(keys)})."
            )
        typed = table.partition_types[keys.index(found)]
        wanted[found] = "null" if value is None else _spec_text(value, typed)
    types = table.partition_types
    zone = _session_zone(runner)
    snapshot = table.snapshot_manager.latest()
    binaries = (
        {e.partition for e in table.manifest_io.live_entries(snapshot)} if snapshot else set()
    )
    names: set[str] = set()
    for binary in binaries:
        values = deserialize_with_arity(binary, types)
        texts = {
            k: _partition_text(v, t, zone) for k, v, t in zip(keys, values, types, strict=True)
        }
        if all(texts[k] == v for k, v in wanted.items()):
            names.add("/".join(f"{escape_path_name(k)}={escape_path_name(texts[k])}" for k in keys))
    return runner.rows(_PARTITIONS, [(n,) for n in sorted(names)])


# --- SHOW TAGS, COLUMNS, TBLPROPERTIES --------------------------------------------------------


def show_tags(runner: _Runner, stmt: ShowTags) -> DataFrame:
    _, table = _table(runner, stmt.name)
    return runner.rows(_TAGS, [(t,) for t in sorted(table.tag_manager.tag_names())])


def show_columns(runner: _Runner, stmt: ShowColumns) -> DataFrame:
    """``FROM db`` names the database of an unqualified table; a qualified name keeps its own,
    as Java's PaimonShowColumnsCommand does (Spark checks the two only for its own tables)."""
    name = stmt.name
    if stmt.database is not None and name.database is None:
        name = TableName(name.table, stmt.database, name.catalog)
    _, table = _table(runner, name)
    return runner.rows(_COLUMNS, [(f.name,) for f in table.fields])


def show_tblproperties(runner: _Runner, stmt: ShowTblProperties) -> DataFrame:
    identifier, table = _table(runner, stmt.name)
    props = _redact(table_properties(table))
    if stmt.key is not None:
        value = props.get(
            stmt.key, f"Table {_full_name(identifier)} does not have property: {stmt.key}"
        )
        return runner.rows(_PROPERTIES, [(stmt.key, value)])
    return runner.rows(_PROPERTIES, sorted(props.items()))


HANDLERS: dict[type[Any], Callable[[_Runner, Any], DataFrame]] = {
    DescribeTable: describe,
    ShowCreateTable: show_create_table,
    ShowPartitions: show_partitions,
    ShowTags: show_tags,
    ShowColumns: show_columns,
    ShowTblProperties: show_tblproperties,
}
"""The handlers, for spark/sql.py's ``_HANDLERS``."""
