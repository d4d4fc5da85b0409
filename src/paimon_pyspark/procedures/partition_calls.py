"""``CALL sys.expire_partitions``: Java's ExpirePartitionsProcedure (Spark's and Flink's, the
same arguments in the same order).

    CALL sys.expire_partitions(`table` => 'db.t', expiration_time => '7 d',
                               timestamp_formatter => 'yyyy-MM-dd')
    expire_partitions(catalog, "db.t", "7 d", "yyyy-MM-dd")

The arguments become dynamic options of the table (ProcedureUtils.fillInPartitionOptions:
``options`` first, then each given argument, and ``partition.expiration-check-interval = 0``),
then the table's partitions expire once as after a batch commit (maintenance/partition_expire.py),
with Java's commit user of the procedure, ``""``. The result is one row per expired partition,
``k=v, k2=v2``, or Java's one row ``No expired partitions.``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.maintenance import partition_expire as pe
from paimon_pyspark.procedures.arguments import parse_options
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.store import clock


def expire_partitions(
    catalog: Catalog,
    table: str,
    expiration_time: str | None = None,
    timestamp_formatter: str | None = None,
    timestamp_pattern: str | None = None,
    expire_strategy: str | None = None,
    max_expires: int | None = None,
    options: str | Mapping[str, Any] | None = None,
) -> list[str]:
    """Drop the partitions of ``table`` that expired (one OVERWRITE snapshot, or one per
    ``partition.expiration-batch-size``); returns them as Java's result rows.

    Each argument left out takes the table's option: ``expiration_time``
    (``partition.expiration-time``; the procedure fails when neither is set, or the table has
    no partition keys, as Java's), ``timestamp_formatter``, ``timestamp_pattern``,
    ``expire_strategy`` (``values-time`` or ``update-time``) and ``max_expires``
    (``partition.expiration-max-num``); ``options`` (``'k1=v1,k2=v2'`` or a dict) sets any
    other table option for this call.
    """
    name = "expire_partitions"
    if options is not None and not isinstance(options, str | Mapping):
        raise InvalidArgumentError(
            f"{name}: argument 'options' must be a string 'k1=v1,k2=v2' or a dict, got "
            f"{describe(options)}."
        )
    dynamic = parse_options(options)
    for key, value in (
        (pe.PARTITION_EXPIRATION_STRATEGY, expire_strategy),
        (pe.PARTITION_TIMESTAMP_FORMATTER, timestamp_formatter),
        (pe.PARTITION_TIMESTAMP_PATTERN, timestamp_pattern),
        (pe.PARTITION_EXPIRATION_TIME, expiration_time),
    ):
        if value is not None and not isinstance(value, str):
            raise InvalidArgumentError(
                f"{name}: argument for '{key}' must be a string, got {describe(value)}."
            )
        if value is not None and value.strip():
            dynamic[key] = value
    dynamic[pe.PARTITION_EXPIRATION_CHECK_INTERVAL] = "0"
    if max_expires is not None:
        if isinstance(max_expires, bool) or not isinstance(max_expires, int | str):
            raise InvalidArgumentError(
                f"{name}: argument 'max_expires' must be an int, got {describe(max_expires)}."
            )
        dynamic[pe.PARTITION_EXPIRATION_MAX_NUM] = str(max_expires).strip()
    loaded = catalog.get_table(table).copy(dynamic)
    store = loaded.store
    config = pe.PartitionExpireConfig.of(store)
    if config is None:
        raise InvalidArgumentError(
            f"{name}: table '{table}' needs both a partition expiration time (argument "
            f"'expiration_time' or option '{pe.PARTITION_EXPIRATION_TIME}') and partition "
            "keys; Java's procedure refuses it too."
        )
    expired = pe.PartitionExpire(store, config, "").expire(
        clock.now_local(), BATCH_COMMIT_IDENTIFIER
    )
    return pe.expired_partition_texts(expired)


__all__ = ["expire_partitions"]
