"""``paimon_pyspark.spark.read``: a table as a DataFrame, pruned where it is loaded.

Spark does not hand a Python reader the columns a query needs, and filters it pushes into a
Python data source are unsafe to use (spark/datasource.py), so the rows and columns to read are
given here and bound to the relation: ``where`` prunes partitions and files by the manifests'
stats and filters rows exactly, ``columns`` reads only those columns. Queries on the DataFrame
may filter further. The files that need no merge are read by Spark's own Parquet reader
(spark/native.py), which also prunes columns and row groups for each query on the DataFrame;
the rest by :func:`payload_read`, a ``mapInArrow`` job over the splits planned here, encoded as
versioned bytes (spark/relation.py, the code ``format("paimon")`` reads with too). It needs no
Data Source API and no SparkContext, so the same path runs on pyspark 3.5, 4.x and a Spark
Connect client. The relation is planned when the DataFrame is made: it reads that snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.spark.cluster import default_parallelism, task_rows
from paimon_pyspark.spark.native import native_frame
from paimon_pyspark.spark.reader_options import COLUMNS, FILTER, PARALLELISM
from paimon_pyspark.spark.relation import PAYLOADS, Relation, RelationRead, payload_task


def read(
    spark: SparkSession,
    warehouse: str,
    table: str,
    where: str | None = None,
    columns: Sequence[str] | str | None = None,
    snapshot_id: int | None = None,
    options: Mapping[str, Any] | None = None,
) -> DataFrame:
    """The rows of ``table`` that satisfy ``where`` (a SQL boolean expression over its columns,
    e.g. ``"dt = '2026-11-01' AND amount > 10"``), with only ``columns`` (a list of names, or
    one comma-separated string; default all), as of snapshot ``snapshot_id`` (default the
    latest). ``options``: filesystem options (``s3.endpoint``, ...) and dynamic table options.
    """
    where_ = f"Table '{table}': paimon_pyspark.spark.read"
    if where is not None and not isinstance(where, str):
        raise InvalidArgumentError(
            f"{where_}(where=...) takes a SQL boolean expression as a string, got "
            f"{describe(where)}."
        )
    if isinstance(columns, str):
        names = [c.strip() for c in columns.split(",")]
    elif columns is None:
        names = None
    elif isinstance(columns, Sequence) and all(isinstance(c, str) for c in columns):
        names = list(columns)
    else:
        raise InvalidArgumentError(
            f"{where_}(columns=...) takes a list of column names, got {describe(columns)}."
        )
    if snapshot_id is not None and (
        isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int) or snapshot_id < 1
    ):
        raise InvalidArgumentError(
            f"{where_}(snapshot_id=...) takes a snapshot id (an int >= 1), got "
            f"{describe(snapshot_id)}."
        )
    opts = {str(k): str(v) for k, v in (options or {}).items()}
    opts.update({"warehouse": warehouse, "table": table})
    if where is not None:
        opts[FILTER] = where
    if names is not None:
        opts[COLUMNS] = ",".join(names)
    if snapshot_id is not None:
        opts["snapshot-id"] = str(snapshot_id)
    return frame(spark, opts)


def frame(spark: SparkSession, opts: dict[str, str]) -> DataFrame:
    """The relation of the reader options ``opts``: read by Spark's Parquet reader where the
    files allow it (spark/native.py), by :func:`payload_read` otherwise."""
    opts.setdefault(PARALLELISM, str(default_parallelism(spark)))
    # the relation's checks, here, so a bad table, filter or column raises its typed error
    relation = Relation(opts)
    schema = relation.schema()
    native = None
    if parse_table_identifier(relation.identifier)[3] is None:  # t$branch_b too
        native = native_frame(
            spark, relation.table(), opts, lambda o: payload_read(spark, Relation(o))
        )
    return native if native is not None else payload_read(spark, relation, schema)


def payload_read(
    spark: SparkSession, relation: Relation, schema: StructType | None = None
) -> DataFrame:
    """The rows of ``relation`` as a ``mapInArrow`` job: planned here, one payload (versioned
    bytes) per task, each read on an executor (spark/relation.py)."""
    schema = relation.schema() if schema is None else schema
    read = relation.read_for(schema, RelationRead)
    payloads = read.plan()
    rows = task_rows(spark, list(enumerate(payloads)), PAYLOADS, max(1, len(payloads)))
    return rows.mapInArrow(payload_task(read), schema)
