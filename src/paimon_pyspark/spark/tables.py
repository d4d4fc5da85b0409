"""Finding, or creating, the table a Spark write or read names.

Options arrive as strings (Spark lowercases their keys). A few keys steer the job; every other
key is a table option: a dynamic option of this write, or a table option when the table is
created from the DataFrame's schema (``create = true``).
"""

from __future__ import annotations

from collections.abc import Mapping

from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from paimon_pyspark.catalog.filesystem_catalog import CatalogFactory, parse_identifier
from paimon_pyspark.errors import CatalogError, DatabaseNotExistError, TableNotExistError
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark.job import TableRef
from paimon_pyspark.table.file_store_table import FileStoreTable

JOB_KEYS = {
    "warehouse",
    "table",
    "path",
    "create",
    "partition-keys",
    "primary-keys",
    "snapshot-id",
    "overwrite-partition",
}


def _split(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def table_options(opts: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in opts.items() if k not in JOB_KEYS}


def ensure_table(
    warehouse: str, identifier: str, spark_schema: StructType, opts: Mapping[str, str]
) -> tuple[TableRef, FileStoreTable]:
    """The table to write, created from ``spark_schema`` when asked to and missing."""
    if not warehouse:
        raise CatalogError("The 'warehouse' option is required to write a Paimon table.")
    catalog = CatalogFactory.create({"warehouse": warehouse})
    extra = table_options(opts)
    try:
        table = catalog.get_table(identifier)
    except (TableNotExistError, DatabaseNotExistError):
        if opts.get("create", "false").lower() != "true":
            raise TableNotExistError(
                identifier,
                "Set option create=true (with partition-keys, primary-keys and table options) "
                "to create it from the DataFrame's schema.",
            ) from None
        db, _ = parse_identifier(identifier)
        catalog.create_database(db, ignore_if_exists=True)
        schema = Schema.from_pyarrow_schema(
            to_arrow_schema(spark_schema),
            partition_keys=_split(opts.get("partition-keys")),
            primary_keys=_split(opts.get("primary-keys")),
            options=extra,
        )
        catalog.create_table(identifier, schema, ignore_if_exists=True)
        return TableRef(warehouse, identifier), catalog.get_table(identifier)
    if extra:
        table = table.copy(extra)
    return TableRef(warehouse, identifier, extra), table
