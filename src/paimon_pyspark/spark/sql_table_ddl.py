"""Running the table statements of sql/table_ddl.py: TRUNCATE, REPLACE and partition DDL.

TRUNCATE TABLE and ``ALTER TABLE ... DROP PARTITION`` are Java's truncateTable and
truncatePartitions (commit/truncate.py: one OVERWRITE snapshot that adds no files), as Java's
Spark table (PaimonPartitionManagement, PaimonDropPartitionsExec) calls them.
``ADD PARTITION`` checks what Spark checks and creates nothing: a filesystem catalog keeps no
partition metadata, so a partition exists once it holds files, as in Java.

``[CREATE OR] REPLACE TABLE`` keeps the table's history, as Paimon's history-preserving replace
(Catalog.replaceTable, after 1.4.2) does: an OVERWRITE snapshot empties the table, then schema
``latest + 1`` is the new definition (fresh field ids, new keys and options), and ``AS SELECT``
writes its rows in one more OVERWRITE snapshot. Older snapshots keep their schema, so time
travel reads them as they were. Like Java it is not atomic: a failing ``AS SELECT`` leaves the
table empty under the new schema. A replace that changes the partition keys drops and creates
the table, as Java falls back to; its history is gone then.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from sqlglot import exp

from paimon_pyspark.commit.truncate import partitions_filter
from paimon_pyspark.errors import (
    CatalogError,
    DatabaseNotExistError,
    PartitionAlreadyExistError,
    PartitionNotExistError,
    PartitionSpecError,
    SqlError,
    TableNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark.schema import spark_arrow_schema
from paimon_pyspark.spark.write import write
from paimon_pyspark.sql.dialect import to_sql
from paimon_pyspark.sql.statements import CreateTable
from paimon_pyspark.sql.table_ddl import (
    AddPartitions,
    DropPartitions,
    PartitionSpec,
    ReplaceTable,
    TruncateTable,
)
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.arrow import assign_field_ids
from paimon_pyspark.types.data_types import DataField

if TYPE_CHECKING:
    from paimon_pyspark.spark.sql import _Runner


def truncate_table(runner: _Runner, stmt: TruncateTable) -> DataFrame:
    """``TRUNCATE TABLE t``: Java's truncateTable. ``PARTITION (...)`` with every key: that
    partition's truncatePartitions, committed even if it holds nothing; with some keys only
    (Spark's partial spec): the partitions under it, and no snapshot when none matches."""
    table = runner.catalog.get_table(runner.identifier(stmt.name))
    commit = table.new_batch_write_builder().new_commit()
    try:
        if stmt.partition is None:
            commit.truncate_table()
            return runner.empty()
        spec = _spec(table, stmt.partition, "TRUNCATE TABLE ... PARTITION")
        if len(spec) < len(table.partition_keys) and not _existing(table, [spec]):
            return runner.empty()
        commit.truncate_partitions([spec])
    finally:
        commit.close()
    return runner.empty()


def drop_partitions(runner: _Runner, stmt: DropPartitions) -> DataFrame:
    """Spark's DROP PARTITION on Java's table: a full spec must name an existing partition
    (unless IF EXISTS), a partial one a prefix of the partition keys; what is left goes in one
    truncatePartitions (one OVERWRITE snapshot), none when nothing is left."""
    table = runner.catalog.get_table(runner.identifier(stmt.name))
    what = "ALTER TABLE ... DROP PARTITION"
    if stmt.purge:
        raise UnsupportedOperationError(
            f"Table '{table.name}': {what} ... PURGE is not supported (Spark's default for a "
            "table without purge, as Java's)."
        )
    specs = [_spec(table, p, what) for p in stmt.partitions]
    keys = table.partition_keys
    for spec in specs:
        if list(spec) != keys[: len(spec)]:
            raise SqlError(
                f"Table '{table.name}': {what} ({_text(spec)}) must name the partition keys "
                f"{keys} or a prefix of them, as Java's Spark table requires."
            )
    full = [s for s in specs if len(s) == len(keys)]
    missing = [s for s in full if not _existing(table, [s])]
    if missing and not stmt.if_exists:
        raise PartitionNotExistError(table.name, [_text(s) for s in missing])
    dropped = [s for s in specs if s not in missing]
    if dropped:
        runner.catalog.drop_partitions(table.name, dropped)
    return runner.empty()


def add_partitions(runner: _Runner, stmt: AddPartitions) -> DataFrame:
    """Spark's ADD PARTITION on Java's table with a filesystem catalog: every spec names all
    partition keys; one that exists already is an error unless IF NOT EXISTS; nothing is
    created (Java's createPartitions writes metadata only to a metastore)."""
    table = runner.catalog.get_table(runner.identifier(stmt.name))
    what = "ALTER TABLE ... ADD PARTITION"
    specs = [_spec(table, p, what) for p in stmt.partitions]
    for spec in specs:
        if len(spec) != len(table.partition_keys):
            raise SqlError(
                f"Table '{table.name}': {what} ({_text(spec)}) must give every partition key "
                f"{table.partition_keys}, as Spark requires."
            )
    found = [s for s in specs if _existing(table, [s])]
    if found and not stmt.if_not_exists:
        raise PartitionAlreadyExistError(table.name, [_text(s) for s in found])
    runner.catalog.create_partitions(table.name, specs)
    return runner.empty()


def _spec(table: FileStoreTable, given: PartitionSpec, what: str) -> dict[str, str | None]:
    """``given`` with the table's partition key names (Spark resolves them ignoring case),
    in partition key order."""
    keys = table.partition_keys
    if not keys:
        raise UnsupportedOperationError(
            f"Table '{table.name}': {what} needs a partitioned table; this one has no "
            "partition keys."
        )
    by_lower = {k.lower(): k for k in keys}
    named: dict[str, str | None] = {}
    for key, value in given.items():
        found = by_lower.get(key.lower())
        if found is None:
            raise PartitionSpecError(
                f"Table '{table.name}': {what} names '{key}', which is not a partition key "
                f"(the partition keys are {keys})."
            )
        named[found] = value
    return {k: named[k] for k in keys if k in named}


def _existing(table: FileStoreTable, specs: list[dict[str, str | None]]) -> bool:
    """Whether a live partition of the latest snapshot matches any of ``specs``."""
    snapshot = table.store.snapshot_manager.latest()
    if snapshot is None:
        return False
    matches = partitions_filter(table.store, list(specs), "partition spec")
    partitions = {e.partition for e in table.store.manifest_io.live_entries(snapshot)}
    return any(matches(p) for p in partitions)


def _text(spec: Mapping[str, str | None]) -> str:
    return ", ".join(f"{k} = {'NULL' if v is None else repr(v)}" for k, v in spec.items())


# replace ----------------------------------------------------------------------------------


def replace_table(runner: _Runner, stmt: ReplaceTable) -> DataFrame:
    create = stmt.create
    identifier = runner.identifier(create.name)
    try:
        table = runner.catalog.get_table(identifier)
    except (TableNotExistError, DatabaseNotExistError):
        if not stmt.or_create:
            raise TableNotExistError(
                identifier,
                "REPLACE TABLE needs an existing table; CREATE OR REPLACE TABLE "
                "creates a missing one.",
            ) from None
        return runner.create_table(create)
    if "path" in create.options:
        raise CatalogError(f"Table '{identifier}': the 'path' option cannot be set by the user.")
    data = None
    if create.query is not None:
        query = _pinned(runner, create.query, identifier, table)
        data = runner.query(query, to_sql(query))
    schema = _schema(create, data)
    if _partition_keys(schema, identifier) != table.partition_keys:
        return _drop_and_create(runner, create, identifier, data)
    manager = table.schema_manager
    now = int(time.time() * 1000)
    # validated before anything is written, as Java's replaceTable does
    made = schema.to_table_schema(table.table_schema.id + 1, now, identifier)
    FileStoreTable(table.file_io.with_options(made.options), table.path, identifier, made)
    commit = table.new_batch_write_builder().new_commit()
    try:
        commit.truncate_table()
    finally:
        commit.close()
    latest = manager.latest_from(table.table_schema.id)
    while not manager.commit_new(dataclasses.replace(made, id=latest.id + 1)):
        latest = manager.latest_from(latest.id)
    if data is not None:
        _write(runner, data, identifier)
    return runner.empty()


def _schema(create: CreateTable, data: DataFrame | None) -> Schema:
    """The definition CREATE TABLE would give the table (columns, or the query's)."""
    if data is not None:
        return Schema.from_pyarrow_schema(
            spark_arrow_schema(data.schema),
            partition_keys=create.partition_keys,
            primary_keys=create.primary_keys,
            options=create.options,
            comment=create.comment,
        )
    fields, _ = assign_field_ids([(c.name, c.type) for c in create.columns])
    return Schema(
        fields=[
            DataField(f.id, f.name, f.type, c.comment)
            for f, c in zip(fields, create.columns, strict=True)
        ],
        partition_keys=create.partition_keys,
        primary_keys=create.primary_keys,
        options=create.options,
        comment=create.comment,
    )


def _partition_keys(schema: Schema, identifier: str) -> list[str]:
    return list(schema.to_table_schema(0, 0, identifier).partition_keys)


def _drop_and_create(
    runner: _Runner, create: CreateTable, identifier: str, data: DataFrame | None
) -> DataFrame:
    """Java's fallback when the partition keys change: the table is dropped and created."""
    if create.query is not None and _reads(runner, create.query, identifier):
        raise UnsupportedOperationError(
            f"Cannot replace table '{identifier}': the replacement query reads the same table "
            "and the new partition keys need a drop and create (as Java refuses). Write the "
            "query's rows to another table first, or keep the partition keys."
        )
    schema = _schema(create, data)
    schema.to_table_schema(0, 0, identifier)  # a refused definition drops nothing
    runner.catalog.drop_table(identifier)
    runner.catalog.create_table(identifier, schema)
    if data is not None:
        _write(runner, data, identifier)
    return runner.empty()


def _write(runner: _Runner, data: DataFrame, identifier: str) -> None:
    opts: dict[str, Any] = {**runner.options, **runner.dynamic_for(identifier)}
    opts["dynamic-partition-overwrite"] = "false"
    write(data, runner.warehouse, identifier, "overwrite", opts)


def _reads(runner: _Runner, query: exp.Expr, identifier: str) -> bool:
    return any(_names(runner, t) == identifier for t in query.find_all(exp.Table))


def _names(runner: _Runner, node: exp.Table) -> str | None:
    if not isinstance(node.this, exp.Identifier):
        return None
    if node.catalog and node.catalog.lower() != "paimon":
        return None
    return f"{node.db or runner.ctx.database}.{node.name}"


def _pinned(runner: _Runner, query: exp.Expr, identifier: str, table: FileStoreTable) -> exp.Expr:
    """``query`` reading the table it replaces at its current snapshot, as Java pins it, so the
    truncation before the write does not empty what the query reads."""
    snapshot = table.store.snapshot_manager.latest_id()
    if snapshot is None or not _reads(runner, query, identifier):
        return query
    query = query.copy()
    for node in query.find_all(exp.Table):
        if _names(runner, node) == identifier and node.args.get("version") is None:
            node.set(
                "version",
                exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(snapshot)),
            )
    return query


HANDLERS: dict[type[Any], Any] = {
    TruncateTable: truncate_table,
    ReplaceTable: replace_table,
    DropPartitions: drop_partitions,
    AddPartitions: add_partitions,
}
