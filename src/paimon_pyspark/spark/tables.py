"""Finding, or creating, the table a Spark write or read names.

Options arrive as strings (Spark lowercases their keys). A few keys steer the job; the catalog's
keys, with Java's names (``metastore``, ``uri``, ``jdbc.*``, ``token``, ``lock.enabled``, the
filesystem's ``s3.*``: :func:`is_catalog_key`), open the catalog along with ``warehouse``; every
other key is a table option: a dynamic option of this write, or a table option when the table is
created from the DataFrame's schema (``create = true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyspark.sql.types import StructType

from paimon_pyspark.catalog import Catalog, CatalogFactory
from paimon_pyspark.catalog.identifiers import parse_identifier
from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.errors import (
    CatalogError,
    DatabaseNotExistError,
    OptionError,
    PartitionSpecError,
    TableNotExistError,
)
from paimon_pyspark.fs.options import is_fs_key
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark.job import TableRef, location_of
from paimon_pyspark.spark.schema import spark_arrow_schema
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
    "filter",
    "columns",
    "parallelism",
    "native-read",
    "skip-raw-splits",
    "metadata-columns",
}


CATALOG_KEYS = {
    "metastore",
    "uri",
    "catalog-key",
    "lock-key-max-length",
    "lock.enabled",
    "lock.type",
    "lock-check-max-sleep",
    "lock-acquire-timeout",
    "lock.check-max-sleep",
    "lock.acquire-timeout",
    "client-pool-size",
    "cache-enabled",
    "case-sensitive",
    "sync-all-properties",
    "token",
    "token.provider",
}
"""Java's catalog options (CatalogOptions, JdbcCatalogOptions, RESTCatalogOptions) a door
passes to the catalog: never table options."""
CATALOG_PREFIXES = ("jdbc.", "header.", "dlf.")
"""A JDBC connection's properties (``jdbc.user``, ``jdbc.password``), a REST client's headers
and its DLF auth."""


def is_catalog_key(key: str) -> bool:
    """Whether ``key`` opens the catalog (the filesystem's keys included), not a table."""
    return key in CATALOG_KEYS or key.startswith(CATALOG_PREFIXES) or is_fs_key(key)


def catalog_options(opts: Mapping[str, str]) -> dict[str, str]:
    """The catalog's options among a door's options, ``warehouse`` left out."""
    return {str(k): str(v) for k, v in opts.items() if is_catalog_key(str(k))}


def open_catalog(warehouse: str, opts: Mapping[str, str]) -> Catalog:
    """The catalog a door's ``warehouse`` and options name (``metastore``: filesystem by
    default, jdbc or rest)."""
    return CatalogFactory.create({**catalog_options(opts), "warehouse": warehouse})


def _split(text: str | None) -> list[str]:
    return [s.strip() for s in (text or "").split(",") if s.strip()]


def table_options(opts: Mapping[str, str]) -> dict[str, str]:
    """The table options among a job's options: neither job keys nor catalog keys (those
    open the catalog and the warehouse, and are never stored in a schema)."""
    return {k: v for k, v in opts.items() if k not in JOB_KEYS and not is_catalog_key(k)}


def ensure_table(
    warehouse: str, identifier: str, spark_schema: StructType, opts: Mapping[str, str]
) -> tuple[TableRef, FileStoreTable]:
    """The table to write, created from ``spark_schema`` when asked to and missing."""
    if not warehouse:
        raise CatalogError("The 'warehouse' option is required to write a Paimon table.")
    store_options = catalog_options(opts)
    catalog = open_catalog(warehouse, opts)
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
            spark_arrow_schema(spark_schema),
            partition_keys=_split(opts.get("partition-keys")),
            primary_keys=_split(opts.get("primary-keys")),
            options=extra,
        )
        catalog.create_table(identifier, schema, ignore_if_exists=True)
        table = catalog.get_table(identifier)
        return TableRef(warehouse, identifier, {}, store_options, location_of(table)), table
    ref = TableRef(warehouse, identifier, extra, store_options, location_of(table))
    return ref, table.copy(extra) if extra else table


OVERWRITE_PARTITION = "overwrite-partition"


def plan_overwrite(table: FileStoreTable, spec: str | Mapping[str, Any] | None) -> Overwrite:
    """The Overwrite of a Spark job, planned on the driver against the latest snapshot.

    ``spec`` is the ``overwrite-partition`` option: ``"dt=2026-06-26,hr=10"`` or a mapping;
    empty or None is a dynamic (or whole-table) overwrite. Spark lowercases option keys but not
    values, so a key that is no partition key is matched to one case-insensitively.
    """
    if isinstance(spec, Mapping):
        pairs = {str(k): v for k, v in spec.items()}
    else:
        pairs = {}
        for item in (spec or "").split(","):
            if not item.strip():
                continue
            key, sep, value = item.partition("=")
            if not sep:
                raise OptionError(
                    f"Table '{table.name}': option '{OVERWRITE_PARTITION}' must look like "
                    f"'dt=2026-06-26,hr=10', got {spec!r}."
                )
            pairs[key.strip()] = value.strip()
    keys = table.partition_keys
    by_lower = {k.lower(): k for k in keys}
    named = {(k if k in keys else by_lower.get(k.lower(), k)): v for k, v in pairs.items()}
    if len(named) != len(pairs):
        raise PartitionSpecError(
            f"Table '{table.name}': option '{OVERWRITE_PARTITION}' names a partition key twice: "
            f"{spec!r}."
        )
    builder = table.new_batch_write_builder().overwrite(named)
    assert builder.overwrite_spec is not None
    return builder.overwrite_spec
