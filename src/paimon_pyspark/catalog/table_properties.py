"""The table properties a metastore catalog keeps beside the schema file: Java's
``CatalogUtils``/``collectTableProperties``, shared by the JDBC catalog's
``paimon_table_properties`` rows and the Hive Metastore's table parameters."""

from __future__ import annotations

from paimon_pyspark.spec.table_schema import TableSchema


def table_properties(schema: TableSchema) -> dict[str, str]:
    """What Java's ``collectTableProperties`` syncs: the options, plus ``primary-key``,
    ``partition`` and ``bucket-key`` (``bucket-key``, else the primary keys not in the
    partition) when there are any."""
    props = dict(schema.options)
    if schema.primary_keys:
        props["primary-key"] = ",".join(schema.primary_keys)
    if schema.partition_keys:
        props["partition"] = ",".join(schema.partition_keys)
    bucket_keys = [k.strip() for k in schema.options.get("bucket-key", "").split(",") if k.strip()]
    if not bucket_keys:
        bucket_keys = [k for k in schema.primary_keys if k not in schema.partition_keys]
    if bucket_keys:
        props["bucket-key"] = ",".join(bucket_keys)
    return props
