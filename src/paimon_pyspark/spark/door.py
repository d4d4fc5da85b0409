"""One door for every statement: what names no Paimon table is Spark's, run by ``spark.sql``
unchanged, so ``paimon_pyspark.spark.sql`` can be a notebook's only SQL entry point.

A table reference is Paimon's when its catalog is ``paimon``, or, without a catalog, when the
warehouse has it (``db.t``, or ``t`` in the current database), as queries bind them
(spark/sql.py). A statement the door does not run goes to Spark when it names no Paimon table
(``CREATE TEMPORARY VIEW``, ``SHOW FUNCTIONS``, ``CACHE TABLE spark_tbl``, ``EXPLAIN`` over
Spark's tables); one that names a Paimon table keeps its UnsupportedStatementError, with the
table's name. A statement the door runs on a table that is Spark's own and not the
warehouse's (``INSERT INTO``, ``DROP TABLE``, ``DELETE`` on a temporary view or a
``spark_catalog`` table) goes to Spark as well, unless it also names a Paimon table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from sqlglot import exp

from paimon_pyspark.errors import PaimonError
from paimon_pyspark.sql.names import named_tables
from paimon_pyspark.sql.statements import CATALOG, CreateTable, TableName

Exists = Callable[[str], bool]
"""Whether the warehouse has the table ``db.t``."""


def identifier(exists: Exists, database: str, node: exp.Table) -> str | None:
    """``db.t`` of a reference to a Paimon table (``database``: the current one), or None
    when it is not one."""
    catalog = node.catalog
    if catalog and catalog.lower() != CATALOG:
        return None
    name = f"{node.db or database}.{node.name}"
    if catalog:
        return name
    try:
        found = exists(name)
    except PaimonError:  # no name a warehouse can hold (Spark's parquet.`/path`)
        return None
    return name if found else None


def paimon_tables(exists: Exists, database: str, text: str) -> list[str]:
    """The Paimon tables ``text`` names, in order, each once."""
    out: list[str] = []
    for node in named_tables(text):
        name = identifier(exists, database, node)
        if name is not None and name not in out:
            out.append(name)
    return out


def spark_target(spark: SparkSession, exists: Exists, database: str, stmt: Any) -> bool:
    """Whether ``stmt`` (a statement the door runs) is on a table that only Spark has."""
    name = getattr(stmt, "name", None)
    if not isinstance(name, TableName) or isinstance(stmt, CreateTable):
        return False
    if name.catalog is not None:
        return name.catalog.lower() != CATALOG
    if exists(f"{name.database or database}.{name.table}"):
        return False
    spark_name = f"{name.database}.{name.table}" if name.database else name.table
    return bool(spark.catalog.tableExists(spark_name))


def spark_command(spark: SparkSession, text: str) -> DataFrame | None:
    """Spark's result of ``text`` when Spark reads it as a command, which runs it (a statement
    sqlglot cannot read may still be one: ``RESET spark.sql.x``, ``DESCRIBE QUERY ...``);
    None when Spark reads a query, or fails on it. A query sqlglot cannot read is a typo,
    whatever Spark makes of it (``SELECT k, FROM WHERE`` is a valid projection to Spark).

    ``spark.sql`` runs a command at once and only binds a query; a command's DataFrame is its
    result, which Spark holds as a local relation (``isLocal``), while a query's is a plan over
    its sources. Asked that way, a classic session and a Spark Connect client, which has no
    parser of Spark's to call, answer alike. A command Spark fails on is refused as sqlglot's
    syntax error."""
    try:
        result = spark.sql(text)
        return result if result.isLocal() else None
    except Exception:  # Spark's ParseException or AnalysisException
        return None


def run_on_spark(spark: SparkSession, text: str) -> DataFrame:
    """``text`` run by Spark as it is written."""
    return spark.sql(text)


__all__ = ["Exists", "identifier", "paimon_tables", "run_on_spark", "spark_command", "spark_target"]
