"""``mark_partition_done``: Java's MarkPartitionDoneProcedure (Spark's and Flink's alike)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.maintenance.partition_mark_done import (
    mark_done_actions,
    mark_partitions_done,
    partition_paths_of_specs,
)
from paimon_pyspark.procedures.arguments import parse_partitions


def mark_partition_done(
    catalog: Catalog,
    table: str,
    partitions: str | Sequence[Mapping[str, Any]],
) -> list[str]:
    """Mark ``partitions`` of ``table`` done by the table's ``partition.mark-done-action``;
    returns the partition directories marked (``dt=2024-01-01``).

    Java's ``CALL sys.mark_partition_done(`table` => 'db.t', partitions => 'dt=1,hr=2;dt=2')``
    (the same two arguments in Spark and Flink): with ``success-file`` (the default) each
    partition directory gets Java's ``_SUCCESS`` file. The directory need not hold data yet,
    as in Java. ``partitions`` is Java's string (values used as written) or a list of
    dicts (values as Python values, written as the table writes its directories).
    """
    name = "mark_partition_done"
    if not isinstance(partitions, str | list | tuple):
        raise InvalidArgumentError(
            f"{name}: argument 'partitions' must be a string like 'dt=1,hr=2;dt=2' or a list "
            f"of dicts, got {describe(partitions)}."
        )
    specs: Sequence[Mapping[str, Any]] | None
    if isinstance(partitions, str):
        specs = parse_partitions(partitions)
    else:
        bad = [p for p in partitions if not isinstance(p, Mapping)]
        if bad:
            raise InvalidArgumentError(
                f"{name}: argument 'partitions' takes dicts of partition key to value, got "
                f"{describe(bad[0])}."
            )
        specs = [p for p in partitions if p]
    if not specs:
        raise InvalidArgumentError(f"{name}: must specify partitions.")
    store = catalog.get_table(table).store
    mark_done_actions(store)
    paths = partition_paths_of_specs(store, specs, name)
    mark_partitions_done(store, paths)
    return paths


__all__ = ["mark_partition_done"]
