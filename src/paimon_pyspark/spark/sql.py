"""``paimon_pyspark.spark.sql``: Paimon's SQL statements, in Spark's or Flink's spelling, run
on a SparkSession against the tables of a warehouse.

A Python data source cannot be a Spark catalog, so the statement is read here
(sql/statements.py) and each kind is run by what already does it: catalog statements by the
filesystem catalog, INSERT by ``spark.write`` (one snapshot, Java's shuffle), DELETE and UPDATE
by spark/dml.py, MERGE INTO by spark/merge.py, CALL by the Spark-job procedures. A query is
run by Spark: every table
reference that names a Paimon table is bound, for this statement only, to a fresh relation of
our data source under a temporary view that is dropped once Spark has analysed the query, so
no query sees a table it did not name and no later query reuses its reader. When a query reads
one Paimon table, the columns it uses and the conjuncts of its WHERE that translate exactly
become the relation's ``columns`` and ``filter`` options, so partitions, files and columns are
pruned without the user doing anything.
"""

from __future__ import annotations

import inspect
import re
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)
from sqlglot import TokenType, exp

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.errors import (
    CatalogError,
    DatabaseNotExistError,
    InvalidArgumentError,
    PaimonError,
    PredicateError,
    SqlError,
    SqlSyntaxError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedStatementError,
    describe,
)
from paimon_pyspark.procedures import (
    branch_calls,
    calls,
    file_calls,
    mark_done_calls,
    partition_calls,
    tag_auto_calls,
    timestamp_calls,
)
from paimon_pyspark.read.sql_predicate import parse_predicate
from paimon_pyspark.schema import Schema
from paimon_pyspark.spark import (
    dml,
    door,
    sql_explain,
    sql_hidden_columns,
    sql_show,
    sql_table_ddl,
    sql_table_functions,
    sql_tags,
    sql_views,
)
from paimon_pyspark.spark import merge as spark_merge
from paimon_pyspark.spark import procedures as spark_procedures
from paimon_pyspark.spark.merge_schema import (
    align_frame,
    by_name_refusal,
    pop_merge_options,
    table_names,
)
from paimon_pyspark.spark.read import frame
from paimon_pyspark.spark.reader_options import COLUMNS, FILTER, METADATA_COLUMNS
from paimon_pyspark.spark.schema import spark_arrow_schema, spark_schema
from paimon_pyspark.spark.tables import catalog_options, open_catalog, table_options
from paimon_pyspark.spark.write import write
from paimon_pyspark.sql.dialect import table_hint, to_sql, tokenize
from paimon_pyspark.sql.explain import Explain
from paimon_pyspark.sql.merge import MergeInto
from paimon_pyspark.sql.names import claims_paimon, tables_of
from paimon_pyspark.sql.procedure_args import SIGNATURES, Signature, bind
from paimon_pyspark.sql.statements import (
    CATALOG,
    AlterTableColumns,
    AlterTableOptions,
    Call,
    CreateDatabase,
    CreateTable,
    Delete,
    DropDatabase,
    DropTable,
    Insert,
    Query,
    RenameTable,
    SetOption,
    ShowDatabases,
    ShowTables,
    Statement,
    TableName,
    Update,
    Use,
    parse_statement,
)
from paimon_pyspark.sql.tags import CreateTag, DeleteTag, RenameTag
from paimon_pyspark.sql.views import CreateTempView
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.store.schema_merge import MERGE_SCHEMA
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.types.arrow import assign_field_ids
from paimon_pyspark.types.data_types import DataField

DEFAULT_DATABASE = "default"
"""The current database until ``USE``; created when a table is first created in it, as
Paimon's Flink catalog keeps one."""

VIEW_PREFIX = "__paimon_pyspark_"

SESSION_PREFIX = "spark.paimon."
"""Spark settings ``spark.paimon.<option>`` are dynamic options of every table a statement of
the session reads or writes, as in Java's Spark connector; a hint overrides them."""


@dataclass
class SqlContext:
    """What a session's statements share: the warehouse, its catalog's options (``metastore``,
    ``uri``, ..., the filesystem's), and the database ``USE`` chose."""

    warehouse: str | None = None
    options: dict[str, str] = field(default_factory=dict, repr=False)  # a token, a password
    database: str = DEFAULT_DATABASE


_CONTEXTS: weakref.WeakKeyDictionary[SparkSession, SqlContext] = weakref.WeakKeyDictionary()


def context(spark: SparkSession) -> SqlContext:
    """The SQL state of ``spark`` (created empty on first use)."""
    found = _CONTEXTS.get(spark)
    if found is None:
        found = _CONTEXTS[spark] = SqlContext()
    return found


def set_warehouse(
    spark: SparkSession, warehouse: str, options: Mapping[str, Any] | None = None
) -> None:
    """Make ``warehouse`` (with its catalog's ``options``) the default of ``spark``'s
    statements."""
    if not isinstance(warehouse, str) or not warehouse:
        raise InvalidArgumentError(
            f"register(warehouse=...) takes a warehouse path or URI, got {describe(warehouse)}."
        )
    ctx = context(spark)
    ctx.warehouse = warehouse
    ctx.options = {str(k): str(v) for k, v in (options or {}).items()}


def sql(
    spark: SparkSession,
    statement: str,
    warehouse: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> DataFrame:
    """Run one SQL ``statement`` against the Paimon tables of ``warehouse`` (default: the one
    given to ``register(spark, warehouse=...)``); returns the query's rows, or a command's
    result rows (``CALL``: the columns Java's procedure returns; DDL and DML: none).

    ``options`` are the catalog's options, Java's names: ``metastore`` (``filesystem``,
    ``jdbc``, ``rest``), ``uri``, ``jdbc.*``, ``token.provider``, ``token``, ...; and the
    warehouse's filesystem options (``s3.endpoint``, ...). Statements,
    in Spark's or Flink's spelling: ``CREATE/DROP DATABASE``, ``SHOW DATABASES/TABLES``,
    ``USE``, ``CREATE TABLE [AS SELECT]``, ``DROP TABLE``, ``ALTER TABLE SET/UNSET
    TBLPROPERTIES``, ``INSERT INTO/OVERWRITE [PARTITION (...)]`` with ``/*+ OPTIONS(...) */``
    hints, ``DELETE``, ``UPDATE``, ``MERGE INTO``, ``CALL sys.*`` (positions in Spark's or
    Flink's order, as
    the statement is spelled: sql/procedure_args.py), ``SET``, and queries (``VERSION AS OF
    n``) mixing Paimon tables with Spark's own. A statement that names no Paimon table is
    Spark's and runs as ``spark.sql`` runs it (spark/door.py); one that names a Paimon table
    and is not supported raises UnsupportedStatementError naming the table. See docs/sql.md.
    """
    if not isinstance(statement, str):
        raise InvalidArgumentError(
            f"paimon_pyspark.spark.sql(statement=...) takes SQL text, got {describe(statement)}."
        )
    ctx = context(spark)
    where = warehouse or ctx.warehouse
    if not where:
        raise CatalogError(
            "No warehouse for SQL: pass warehouse=... or call "
            "paimon_pyspark.spark.register(spark, warehouse=...) first."
        )
    store = {**ctx.options, **{str(k): str(v) for k, v in (options or {}).items()}}
    runner = _Runner(spark, ctx, where, store)
    first = tokenize(statement)[:1]
    if first and first[0].text.upper() == "RESET":
        # Spark's RESET takes its key as raw text (``spark.paimon.db.t.scan.snapshot-id``)
        return door.run_on_spark(spark, statement)
    try:
        stmt = parse_statement(statement)
    except UnsupportedStatementError as e:
        named = door.paimon_tables(runner._exists, ctx.database, statement)
        if named or claims_paimon(statement):
            if named:
                raise UnsupportedStatementError(
                    f"{e} (it names the Paimon table {', '.join(named)})"
                ) from None
            raise
        return door.run_on_spark(spark, statement)
    except SqlSyntaxError:
        if door.paimon_tables(runner._exists, ctx.database, statement) or claims_paimon(statement):
            raise
        ran = door.spark_command(spark, statement)
        if ran is None:
            raise
        return ran
    if _is_spark_statement(runner, stmt, statement):
        return door.run_on_spark(spark, statement)
    return runner.run(stmt)


def _is_spark_statement(runner: _Runner, stmt: Statement, text: str) -> bool:
    """Whether a statement the door reads is Spark's to run as written: a ``SET`` in Spark's
    spelling (an unquoted key) of a key that is neither ``spark.*`` nor Flink's runtime mode
    (``SET`` alone lists Spark's; Flink's ``SET 'k' = 'v'`` of another key stays refused); a
    query that names only Spark's tables; a write, drop or change of a table that only Spark
    has (docs/sql.md, "One door")."""
    if isinstance(stmt, SetOption):
        key = stmt.key
        if key is None:
            return True
        quoted = [t.token_type for t in tokenize(text)[1:2]] == [TokenType.STRING]
        return not quoted and key != "execution.runtime-mode" and not key.startswith("spark.")
    database = runner.ctx.database
    if isinstance(stmt, (CreateTempView, Explain)):
        return not any(door.identifier(runner._exists, database, n) for n in tables_of(stmt.query))
    if isinstance(stmt, Query):
        if any(sql_table_functions.is_table_function(t) for t in stmt.tree.find_all(exp.Table)):
            return False
        nodes = tables_of(stmt.tree)
        if any(door.identifier(runner._exists, database, n) for n in nodes):
            return False
        return all(
            runner.spark.catalog.tableExists(".".join(p for p in (n.catalog, n.db, n.name) if p))
            for n in nodes
        )
    if not door.spark_target(runner.spark, runner._exists, database, stmt):
        return False
    named = door.paimon_tables(runner._exists, database, text)
    if named:
        raise UnsupportedStatementError(
            f"A statement on Spark's table {getattr(stmt, 'name', '')} that also names the "
            f"Paimon table {', '.join(named)} is not supported by paimon_pyspark's SQL door: "
            f"{' '.join(text.split())[:200]}"
        )
    return True


def session_options(spark: SparkSession) -> dict[str, str]:
    """The session's ``spark.paimon.*`` settings, without their prefix.

    Spark's settings are read as one string in one call: ``conf.getAll`` walks them with a
    round trip each, a fifth of a second per statement."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        pairs = [[k, v] for k, v in spark.conf.getAll.items() if v is not None]
    else:
        sep = "\u0001"
        text = str(jsession.conf().getAll().mkString(sep))
        pairs = [item.split(" -> ", 1) for item in text.split(sep) if " -> " in item]
    return {k[len(SESSION_PREFIX) :]: v for k, v in pairs if k.startswith(SESSION_PREFIX)}


def table_session_options(session: Mapping[str, str], identifier: str) -> dict[str, str]:
    """The dynamic options of table ``identifier`` among the session's ``spark.paimon.*``
    settings (``session``, without the prefix), as Java's connector reads them
    (OptionUtils): ``<catalog>.<db>.<table>.<key>`` (each of the three may be ``*``; the
    catalog is ``paimon``) is ``<key>`` for that table only and overrides a plain ``<key>``;
    a more specific setting overrides a wildcard one. Names match case-insensitively."""
    database, _, name = identifier.lower().partition(".")
    plain: dict[str, str] = {}
    scoped: list[tuple[int, str, str]] = []
    for key, value in session.items():
        parts = key.split(".", 3)
        if len(parts) < 4 or parts[0].lower() not in (CATALOG, "*"):
            plain[key] = value
            continue
        catalog, db, table = (p.lower() for p in parts[:3])
        if db not in (database, "*") or table not in (name, "*"):
            continue  # another table's
        rank = (catalog != "*") + (db != "*") + (table != "*")
        option = parts[3]
        scoped.append((rank, option, value))
    for _, option, value in sorted(scoped, key=lambda s: s[0]):
        plain[option] = value
    return plain


_EMPTY = StructType([])


class _Runner:
    def __init__(
        self, spark: SparkSession, ctx: SqlContext, warehouse: str, options: dict[str, str]
    ) -> None:
        self.spark = spark
        self.ctx = ctx
        self.warehouse = warehouse
        self.options = catalog_options(options)
        self.catalog: Catalog = open_catalog(warehouse, self.options)
        self.dynamic = session_options(spark)

    def run(self, stmt: Statement) -> DataFrame:
        handler = _HANDLERS.get(type(stmt))
        if handler is None:  # pragma: no cover - every Statement kind has a handler
            raise UnsupportedStatementError(f"{type(stmt).__name__} is not supported.")
        return handler(self, stmt)

    def empty(self) -> DataFrame:
        return self.spark.createDataFrame([], _EMPTY)

    def rows(self, schema: StructType, rows: list[tuple[Any, ...]]) -> DataFrame:
        return self.spark.createDataFrame(rows, schema)

    # names -------------------------------------------------------------------------------

    def identifier(self, name: TableName) -> str:
        if name.catalog is not None and name.catalog.lower() != CATALOG:
            raise SqlError(
                f"Table {name}: catalog '{name.catalog}' is not Paimon's; the SQL door's "
                f"catalog is '{CATALOG}'."
            )
        return f"{name.database or self.ctx.database}.{name.table}"

    def ensure_database(self, database: str) -> None:
        if database == DEFAULT_DATABASE:
            self.catalog.create_database(database, ignore_if_exists=True)

    # catalog statements ------------------------------------------------------------------

    def create_database(self, stmt: CreateDatabase) -> DataFrame:
        self.catalog.create_database(stmt.name, ignore_if_exists=stmt.if_not_exists)
        return self.empty()

    def drop_database(self, stmt: DropDatabase) -> DataFrame:
        self.catalog.drop_database(
            stmt.name, ignore_if_not_exists=stmt.if_exists, cascade=stmt.cascade
        )
        if self.ctx.database == stmt.name:
            self.ctx.database = DEFAULT_DATABASE
        return self.empty()

    def show_databases(self, stmt: ShowDatabases) -> DataFrame:
        schema = StructType([StructField("namespace", StringType(), False)])
        return self.rows(schema, [(d,) for d in sorted(self.catalog.list_databases())])

    def show_tables(self, stmt: ShowTables) -> DataFrame:
        database = stmt.database or self.ctx.database
        try:
            names = self.catalog.list_tables(database)
        except DatabaseNotExistError:
            if database != DEFAULT_DATABASE:
                raise
            names = []
        schema = StructType(
            [
                StructField("namespace", StringType(), False),
                StructField("tableName", StringType(), False),
                StructField("isTemporary", BooleanType(), False),
            ]
        )
        return self.rows(schema, [(database, n, False) for n in sorted(names)])

    def use(self, stmt: Use) -> DataFrame:
        if stmt.database != DEFAULT_DATABASE:
            self.catalog.get_database(stmt.database)
        self.ctx.database = stmt.database
        return self.empty()

    def create_table(self, stmt: CreateTable) -> DataFrame:
        identifier = self.identifier(stmt.name)
        exists = self._exists(identifier)
        if exists and stmt.if_not_exists:
            return self.empty()
        if exists:
            raise TableAlreadyExistError(identifier)
        self.ensure_database(identifier.split(".", 1)[0])
        if stmt.query is None:
            fields, _ = assign_field_ids([(c.name, c.type) for c in stmt.columns])
            fields = [
                DataField(f.id, f.name, f.type, c.comment)
                for f, c in zip(fields, stmt.columns, strict=True)
            ]
            schema = Schema(
                fields=fields,
                partition_keys=stmt.partition_keys,
                primary_keys=stmt.primary_keys,
                options=stmt.options,
                comment=stmt.comment,
            )
            self.catalog.create_table(identifier, schema)
            return self.empty()
        data = self.query(stmt.query, to_sql(stmt.query))
        schema = Schema.from_pyarrow_schema(
            spark_arrow_schema(data.schema),
            partition_keys=stmt.partition_keys,
            primary_keys=stmt.primary_keys,
            options=stmt.options,
            comment=stmt.comment,
        )
        self.catalog.create_table(identifier, schema)
        try:
            opts = {**self.options, **self.dynamic_for(identifier)}
            write(data, self.warehouse, identifier, "append", opts)
        except BaseException:
            self.catalog.drop_table(identifier, ignore_if_not_exists=True)
            raise
        return self.empty()

    def _exists(self, identifier: str) -> bool:
        try:
            self.catalog.get_table(identifier)
        except (TableNotExistError, DatabaseNotExistError):
            return False
        return True

    def drop_table(self, stmt: DropTable) -> DataFrame:
        self.catalog.drop_table(self.identifier(stmt.name), ignore_if_not_exists=stmt.if_exists)
        return self.empty()

    def alter_table(self, stmt: AlterTableOptions) -> DataFrame:
        changes: list[SchemaChange] = [SchemaChange.set_option(k, v) for k, v in stmt.set.items()]
        changes += [SchemaChange.remove_option(k) for k in stmt.unset]
        self.catalog.alter_table(
            self.identifier(stmt.name), changes, ignore_if_not_exists=stmt.if_exists
        )
        return self.empty()

    def alter_table_columns(self, stmt: AlterTableColumns) -> DataFrame:
        self.catalog.alter_table(
            self.identifier(stmt.name), stmt.changes, ignore_if_not_exists=stmt.if_exists
        )
        return self.empty()

    def rename_table(self, stmt: RenameTable) -> DataFrame:
        """A new name without a database stays in the source table's database."""
        source = self.identifier(stmt.name)
        new = stmt.new_name
        if new.database is None:
            new = TableName(new.table, source.split(".", 1)[0], new.catalog)
        self.catalog.rename_table(source, self.identifier(new), ignore_if_not_exists=stmt.if_exists)
        return self.empty()

    def set_option(self, stmt: SetOption) -> DataFrame:
        key, value = stmt.key, stmt.value
        if key == "execution.runtime-mode":
            if (value or "").lower() != "batch":
                raise UnsupportedStatementError(
                    f"SET 'execution.runtime-mode' = '{value}': the SQL door runs batch "
                    "statements only."
                )
            return self.empty()
        if key is not None and key.startswith("spark.") and value is not None:
            self.spark.conf.set(key, value)
            return self.empty()
        raise UnsupportedStatementError(
            f"SET {key!r}: the SQL door sets 'execution.runtime-mode' (batch) and Spark's "
            "'spark.*' settings only; table options go in /*+ OPTIONS(...) */ hints or "
            "ALTER TABLE ... SET TBLPROPERTIES."
        )

    # data --------------------------------------------------------------------------------

    def insert(self, stmt: Insert) -> DataFrame:
        identifier = self.identifier(stmt.name)
        table = self.catalog.get_table(identifier)
        fields = table.fields
        by_lower = {f.name.lower(): f.name for f in fields}

        def resolve(name: str, what: str) -> str:
            found = by_lower.get(name.lower())
            if found is None:
                raise SqlError(
                    f"Table '{identifier}': {what} names column '{name}', which the table does "
                    f"not have (columns: {', '.join(f.name for f in fields)})."
                )
            return found

        static = {resolve(k, "PARTITION (...)"): v for k, v in stmt.static_partition.items()}
        for key in static:
            if key not in table.partition_keys:
                raise SqlError(
                    f"Table '{identifier}': PARTITION ({key} = ...) names a column that is not a "
                    f"partition key (partition keys: {', '.join(table.partition_keys) or 'none'})."
                )
        opts: dict[str, Any] = {**self.options, **self.dynamic_for(identifier), **stmt.hints}
        if stmt.by_name:
            shaped = self._insert_by_name(stmt, identifier, table, static, opts)
            return self._write_insert(stmt, identifier, shaped, static, opts)
        # by position, the query is cast to the table's types: nothing to merge (as Java)
        opts[MERGE_SCHEMA] = "false"
        if stmt.columns is not None:
            targets = [resolve(c, "the INSERT column list") for c in stmt.columns]
            if len(set(targets)) != len(targets):
                raise SqlError(f"Table '{identifier}': the INSERT column list repeats a column.")
        else:
            targets = [f.name for f in fields if f.name not in static]
        data = self.query(stmt.query, to_sql(stmt.query))
        if len(data.columns) != len(targets):
            raise SqlError(
                f"Table '{identifier}': the INSERT gives {len(data.columns)} column(s) but "
                f"{len(targets)} are expected ({', '.join(targets)})."
            )
        types = {f.name: f.dataType for f in spark_schema(table).fields}
        given = dict(zip(targets, data.columns, strict=True))
        columns = []
        for f in fields:
            if f.name in static:
                value = F.lit(static[f.name])
            elif f.name in given:
                value = F.col(f"`{given[f.name]}`")
            else:
                value = F.lit(None)
            columns.append(value.cast(types[f.name]).alias(f.name))
        return self._write_insert(stmt, identifier, data.select(*columns), static, opts)

    def _insert_by_name(
        self,
        stmt: Insert,
        identifier: str,
        table: FileStoreTable,
        static: dict[str, Any],
        opts: dict[str, Any],
    ) -> DataFrame:
        """``INSERT ... BY NAME`` as Java's PaimonAnalysis resolves it: columns matched by name
        (a missing nullable one is null) and cast to the table's types; when that fails
        (unknown columns, more columns than the table, new nested fields) and
        ``write.merge-schema`` is on, the query goes to the write as it is, which merges its
        schema into the table's; else the failure is the error."""
        data = self.query(stmt.query, to_sql(stmt.query))
        for key, value in static.items():
            data = data.withColumn(key, F.lit(value))
        refusal = by_name_refusal(identifier, table, data.schema)
        if refusal is None:
            opts[MERGE_SCHEMA] = "false"
            names = table_names(table, data.columns)
            return align_frame(data, names, spark_schema(table))
        if not pop_merge_options(dict(opts), self.dynamic_for(identifier))[0]:
            raise SqlError(refusal)
        return data

    def _write_insert(
        self,
        stmt: Insert,
        identifier: str,
        shaped: DataFrame,
        static: dict[str, Any],
        opts: dict[str, Any],
    ) -> DataFrame:
        if isinstance(stmt.query, exp.Values):
            # literals typed into the statement: one task writes them, one file per bucket
            shaped = shaped.coalesce(1)
        mode = "append"
        if stmt.overwrite:
            mode = "overwrite"
            if static:
                opts["overwrite-partition"] = {k: str(v) for k, v in static.items()}
            elif not self._dynamic_overwrite(stmt):
                opts["dynamic-partition-overwrite"] = "false"
        write(shaped, self.warehouse, identifier, mode, opts)
        return self.empty()

    def _dynamic_overwrite(self, stmt: Insert) -> bool:
        """INSERT OVERWRITE without a static partition replaces the whole table, as Spark's
        default ``partitionOverwriteMode=static`` does; only the partitions written with
        ``dynamic`` (Spark's setting, or the ``dynamic-partition-overwrite`` hint)."""
        hinted = stmt.hints.get("dynamic-partition-overwrite")
        if hinted is not None:
            return hinted.lower() == "true"
        mode = self.spark.conf.get("spark.sql.sources.partitionOverwriteMode", "static")
        return (mode or "static").lower() == "dynamic"

    def delete(self, stmt: Delete) -> DataFrame:
        dml.delete(
            self.spark,
            self.warehouse,
            self.identifier(stmt.name),
            stmt.condition,
            {**self.options, **self.dynamic_for(self.identifier(stmt.name))},
        )
        return self.empty()

    def update(self, stmt: Update) -> DataFrame:
        dml.update(
            self.spark,
            self.warehouse,
            self.identifier(stmt.name),
            stmt.assignments,
            stmt.condition,
            {**self.options, **self.dynamic_for(self.identifier(stmt.name))},
        )
        return self.empty()

    def call(self, stmt: Call) -> DataFrame:
        spec = _PROCEDURES.get(stmt.procedure.lower())
        if spec is None:
            raise UnsupportedStatementError(
                f"CALL sys.{stmt.procedure}: no such procedure here (there are "
                f"{', '.join('sys.' + p for p in sorted(_PROCEDURES))})."
            )
        kwargs = spec.bind(stmt)
        table = kwargs.get("table")
        if isinstance(table, str) and table.strip() and "." not in table:
            kwargs["table"] = f"{self.ctx.database}.{table.strip()}"
        result = spec.run(self, kwargs)
        return self.rows(spec.output, result if isinstance(result, list) else [result])

    # queries -----------------------------------------------------------------------------

    def query_statement(self, stmt: Query) -> DataFrame:
        return self.query(stmt.tree, stmt.text)

    def query(self, tree: exp.Expr, text: str) -> DataFrame:
        """``tree`` run by Spark, its Paimon table references bound for this query only: each
        is a DataFrame argument of ``spark.sql`` (a temporary view while a classic session
        binds the query, a relation inside the query's plan on Spark Connect, which binds it
        only when it runs)."""
        tree = tree.copy()
        ctes = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
        refs = [t for t in tree.find_all(exp.Table) if self._is_ours(t, ctes)]
        single = len(refs) == 1 and sum(1 for _ in tree.find_all(exp.Table)) == 1
        relations: dict[str, Any] = {}  # DataFrames, as spark.sql takes them by keyword
        for node in refs:
            view = f"{VIEW_PREFIX}{uuid.uuid4().hex}"
            relation, hidden = self._relation(node, text, tree if single else None, tree)
            relations[view] = relation
            alias = node.args.get("alias")
            name = self._target(node)[1]
            bound = exp.Table(this=exp.to_identifier(view))
            bound.set("alias", alias or exp.TableAlias(this=exp.to_identifier(name)))
            node.replace(bound)
            if hidden:
                columns = relation.columns[: len(relation.columns) - len(hidden)]
                sql_hidden_columns.spell_out_stars(bound, columns)
        query = to_sql(tree)
        if not relations:
            return self.spark.sql(query)
        query = query.replace("{", "{{").replace("}", "}}")  # spark.sql formats its kwargs
        for view in relations:
            query = re.sub(f"`?{view}`?", f"{{{view}}}", query)
        return self.spark.sql(query, **relations)

    def _is_ours(self, node: exp.Table, ctes: set[str]) -> bool:
        if sql_table_functions.is_table_function(node):
            self.catalog.get_table(self._target(node)[0])  # a missing table raises, named
            return True
        if not isinstance(node.this, exp.Identifier):
            return False
        catalog = node.catalog
        if catalog:
            if catalog.lower() != CATALOG:
                return False
            identifier = f"{node.db or self.ctx.database}.{node.name}"
            self.catalog.get_table(identifier)  # a missing table raises here, named
            return True
        if not node.db and node.name.lower() in ctes:
            return False
        identifier = f"{node.db or self.ctx.database}.{node.name}"
        if self._exists(identifier):
            return True
        spark_name = f"{node.db}.{node.name}" if node.db else node.name
        if self.spark.catalog.tableExists(spark_name):
            return False
        if not node.db or self._database_exists(node.db):
            raise TableNotExistError(identifier)  # neither ours nor Spark's: named as ours
        return False

    def _database_exists(self, database: str) -> bool:
        try:
            self.catalog.get_database(database)
        except DatabaseNotExistError:
            return False
        return True

    def _target(self, node: exp.Table) -> tuple[str, str]:
        """(``db.table``, the table's name) that ``node`` reads: a table, or the table a
        Paimon table function names."""
        if sql_table_functions.is_table_function(node):
            function = sql_table_functions.table_function(node)
            if function.catalog is not None and function.catalog.lower() != CATALOG:
                raise SqlError(
                    f"Table function {function.function}(...): catalog '{function.catalog}' "
                    f"is not Paimon's; the SQL door's catalog is '{CATALOG}'."
                )
            database = function.database or self.ctx.database
            return f"{database}.{function.table}", function.table
        return f"{node.db or self.ctx.database}.{node.name}", node.name

    def dynamic_for(self, identifier: str) -> dict[str, str]:
        """The session's dynamic options of table ``identifier`` (``spark.paimon.*``)."""
        return table_session_options(self.dynamic, identifier)

    def _relation(
        self, node: exp.Table, text: str, single: exp.Expr | None, tree: exp.Expr
    ) -> tuple[DataFrame, list[str]]:
        """The relation ``node`` reads, and the hidden columns it ends with (those ``tree``
        names)."""
        identifier, name = self._target(node)
        opts: dict[str, str] = {
            **self.options,
            **self.dynamic_for(identifier),
            "warehouse": self.warehouse,
            "table": identifier,
        }
        function = sql_table_functions.is_table_function(node)
        if function:
            called = sql_table_functions.table_function(node)
            opts.update(called.options)
            if called.function == sql_table_functions.INCREMENTAL_QUERY:
                table = self.catalog.get_table(identifier)
                pair = sql_table_functions.snapshots_to_compare(table, table_options(opts))
                if pair is not None:
                    rest = {k: v for k, v in opts.items() if k not in called.options}
                    end = frame(self.spark, {**rest, "snapshot-id": str(pair[1])})
                    start = frame(self.spark, {**rest, "snapshot-id": str(pair[0])})
                    return end.subtract(start), []
        hint = None if function else table_hint(text, node)
        if hint is not None:
            opts.update(hint.options)
        version = node.args.get("version")
        if version is not None:
            opts.update(_time_travel(version, self.catalog.get_table(identifier), self.spark))
        if single is not None:
            table = self.catalog.get_table(identifier)
            columns = _used_columns(single, table)
            if columns is not None:
                opts[COLUMNS] = ",".join(columns)
            condition = None if function else _pushable_filter(single, table)
            if condition is not None:
                opts[FILTER] = condition
        qualifiers = {name.lower(), node.alias_or_name.lower()}
        system = "$" in name and parse_table_identifier(identifier)[3] is not None
        hidden = [] if system else sql_hidden_columns.named(tree, qualifiers)
        if hidden:
            opts[METADATA_COLUMNS] = ",".join(hidden)
        return frame(self.spark, opts), hidden


def _time_travel(version: exp.Expr, table: FileStoreTable, spark: SparkSession) -> dict[str, str]:
    """Time travel as Java's Spark connector reads it (SparkCatalog.loadTable and
    TimeTravelUtil): ``VERSION AS OF v``, ``1`` or ``'1'`` alike, is the tag ``v`` when the
    table has one, else snapshot ``v`` when ``v`` is digits, else the tag; ``TIMESTAMP AS OF
    x`` is Spark's ``CAST(x AS TIMESTAMP)`` in the session's time zone (a number: epoch
    seconds), the latest snapshot committed at or before that millisecond."""
    identifier = table.name
    kind = str(version.this).upper()
    value = version.expression
    if kind == "TIMESTAMP":
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            return {"scan.timestamp-millis": str(int(value.this) * 1000)}
        if value.find(exp.Column, exp.Select) is not None:
            raise UnsupportedStatementError(
                f"Table '{identifier}': TIMESTAMP AS OF takes a constant, got {to_sql(value)}."
            )
        micros = spark.sql(f"SELECT unix_micros(CAST({to_sql(value)} AS TIMESTAMP))").first()
        if micros is None or micros[0] is None:
            raise SqlError(
                f"Table '{identifier}': TIMESTAMP AS OF {to_sql(value)} is not a timestamp."
            )
        return {"scan.timestamp-millis": str(int(micros[0]) // 1000)}
    while isinstance(value, (exp.Cast, exp.TryCast)):
        value = value.this
    if not isinstance(value, exp.Literal):
        raise UnsupportedStatementError(
            f"Table '{identifier}': {kind} AS OF takes a literal, got {value.sql()}."
        )
    text = str(value.this).strip()
    if kind == "VERSION":
        if table.tag_manager.tag_exists(text):
            return {"scan.tag-name": text}
        if text.startswith("watermark-"):
            raise UnsupportedStatementError(
                f"Table '{identifier}': VERSION AS OF '{text}' (time travel by watermark) is "
                "not supported; use a snapshot id, a tag or TIMESTAMP AS OF."
            )
        if text.isdigit():
            return {"snapshot-id": str(int(text))}
        return {"scan.tag-name": text}
    raise UnsupportedStatementError(f"Table '{identifier}': {kind} AS OF is not supported.")


def _used_columns(tree: exp.Expr, table: FileStoreTable) -> list[str] | None:
    """The table columns a one-table query uses, or None if it may use all (``*``)."""
    if any(not isinstance(s.parent, exp.Count) for s in tree.find_all(exp.Star)):
        return None
    by_lower = {f.name.lower(): f.name for f in table.fields}
    used: list[str] = []
    for column in tree.find_all(exp.Column):
        if isinstance(column.this, exp.Star):
            return None
        # `course.grade`, `t.course.grade`: a qualifier may be a table or a struct column, so
        # every part that names a column keeps it (one too many is read, never one too few)
        for part in column.parts:
            name = by_lower.get(part.name.lower())
            if name is not None and name not in used:
                used.append(name)
    if not used:
        return [table.fields[0].name]
    return [f.name for f in table.fields if f.name in used]


def _conjuncts(node: exp.Expr) -> Iterator[exp.Expr]:
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    elif isinstance(node, exp.Paren):
        yield from _conjuncts(node.this)
    else:
        yield node


def _pushable_filter(tree: exp.Expr, table: FileStoreTable) -> str | None:
    """The conjuncts of a one-table SELECT's WHERE that translate exactly into a Predicate
    (read/sql_predicate.py), as one filter; Spark still applies the whole WHERE."""
    if not isinstance(tree, exp.Select):
        return None
    where = tree.args.get("where")
    if where is None:
        return None
    kept: list[str] = []
    for conjunct in _conjuncts(where.this):
        if conjunct.find(exp.Subquery, exp.Select, exp.AggFunc, exp.Window) is not None:
            continue
        text = to_sql(conjunct)
        try:
            parse_predicate(text, table.fields, table.name)
        except PredicateError:
            continue
        kept.append(f"({text})")
    return " AND ".join(kept) if kept else None


@dataclass(frozen=True)
class _Procedure:
    """A ``CALL sys.<name>``: the package procedure's arguments (``params``), how it runs,
    and Java's result columns. Positions and names follow Java's Spark or Flink procedure,
    as the statement is spelled (sql/procedure_args.py); a procedure without a signature
    there takes ``params`` in both spellings."""

    params: tuple[str, ...]
    output: StructType
    run: Callable[[_Runner, dict[str, Any]], tuple[Any, ...] | list[tuple[Any, ...]]]
    """One result row, or a list of rows (expire_partitions' one row per partition)."""

    def bind(self, stmt: Call) -> dict[str, Any]:
        signature = SIGNATURES.get(stmt.procedure.lower()) or Signature.same(self.params)
        return bind(stmt.procedure, signature, stmt.args, stmt.kwargs, stmt.spark_quoted)


def _compact(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    spark_procedures.compact(runner.spark, runner.catalog, **kwargs)
    return (True,)


def _rescale(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    bucket_num = kwargs.get("bucket_num")
    if isinstance(bucket_num, str):
        bucket_num = int(bucket_num) if bucket_num.strip() else None
    spark_procedures.rescale(runner.spark, runner.catalog, **{**kwargs, "bucket_num": bucket_num})
    return (True,)


def _expire(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return (calls.expire_snapshots(runner.catalog, **kwargs),)


def _expire_changelogs(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return (calls.expire_changelogs(runner.catalog, **kwargs),)


def _orphans(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    result = spark_procedures.remove_orphan_files(runner.spark, runner.catalog, **kwargs)
    return (result.deleted_file_count, result.deleted_file_total_len_in_bytes)


def _rewrite_file_index(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    result = spark_procedures.rewrite_file_index(runner.spark, runner.catalog, **kwargs)
    return (result.written_partitions, result.written_indexes)


def _params(procedure: Callable[..., Any]) -> tuple[str, ...]:
    """A procedure's SQL arguments: its own after the runner (or catalog), in its order."""
    skip = {"runner", "catalog", "progress"}
    return tuple(p for p in inspect.signature(procedure).parameters if p not in skip)


def _purge_files(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return (file_calls.purge_files(runner.catalog, **kwargs),)


def _remove_unexisting_files(runner: _Runner, kwargs: dict[str, Any]) -> list[tuple[Any, ...]]:
    found = spark_procedures.remove_unexisting_files(runner.spark, runner.catalog, **kwargs)
    return [(p,) for p in found]


def _compact_database(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return (spark_procedures.compact_database(runner.spark, runner.catalog, **kwargs),)


def _expire_partitions(runner: _Runner, kwargs: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(p,) for p in partition_calls.expire_partitions(runner.catalog, **kwargs)]


def _expire_tags(runner: _Runner, kwargs: dict[str, Any]) -> list[tuple[Any, ...]]:
    expired = tag_auto_calls.expire_tags(runner.catalog, **kwargs)
    return [(n,) for n in expired] or [(tag_auto_calls.NO_EXPIRED_TAGS,)]


def _trigger_tag_automatic_creation(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return (tag_auto_calls.trigger_tag_automatic_creation(runner.catalog, **kwargs),)


def _true_row(procedure: Callable[..., Any]) -> Callable[[_Runner, dict[str, Any]], Any]:
    """The handler of a catalog procedure whose Java result is one ``result`` row, true."""

    def handler(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
        procedure(runner.catalog, **kwargs)
        return (True,)

    return handler


def _true_procedure(procedure: Callable[..., Any]) -> _Procedure:
    """A ``CALL`` of a catalog procedure answering Java's one ``result`` row, true."""
    return _Procedure(_params(procedure), _RESULT, _true_row(procedure))


def _rollback(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(calls.rollback(runner.catalog, **kwargs))


def _rollback_to(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(calls.rollback_to(runner.catalog, **kwargs))


def _row_of(
    procedure: Callable[..., tuple[Any, ...]],
) -> Callable[[_Runner, dict[str, Any]], tuple[Any, ...]]:
    """The handler of a catalog procedure whose result is Java's row as a tuple."""

    def run(runner: _Runner, kwargs: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(procedure(runner.catalog, **kwargs))

    return run


_RESULT = StructType([StructField("result", BooleanType(), True)])
_TEXT_RESULT = StructType([StructField("result", StringType(), True)])
_ROLLBACK = StructType(
    [
        StructField("previous_snapshot_id", LongType(), False),
        StructField("current_snapshot_id", LongType(), False),
    ]
)
_TAG_ROW = StructType(
    [
        StructField("tagName", StringType(), True),
        StructField("snapshot", LongType(), True),
        StructField("commit_time", LongType(), True),
        StructField("watermark", StringType(), True),
    ]
)
_PROCEDURES = {
    "compact": _Procedure(_params(calls.compact), _RESULT, _compact),
    "rescale": _Procedure(_params(calls.rescale), _RESULT, _rescale),
    "expire_snapshots": _Procedure(
        _params(calls.expire_snapshots),
        StructType([StructField("deleted_snapshots_count", IntegerType(), False)]),
        _expire,
    ),
    "expire_changelogs": _Procedure(
        _params(calls.expire_changelogs),
        StructType([StructField("result", StringType(), True)]),
        _expire_changelogs,
    ),
    "remove_orphan_files": _Procedure(
        _params(calls.remove_orphan_files),
        StructType(
            [
                StructField("deletedFileCount", LongType(), True),
                StructField("deletedFileTotalLenInBytes", LongType(), True),
            ]
        ),
        _orphans,
    ),
    "rewrite_file_index": _Procedure(
        _params(calls.rewrite_file_index),
        StructType(
            [
                StructField("written_partitions", IntegerType(), False),
                StructField("written_indexes", IntegerType(), False),
            ]
        ),
        _rewrite_file_index,
    ),
    "create_tag": _true_procedure(calls.create_tag),
    "delete_tag": _true_procedure(calls.delete_tag),
    "replace_tag": _true_procedure(calls.replace_tag),
    "rename_tag": _true_procedure(calls.rename_tag),
    "expire_tags": _Procedure(
        _params(tag_auto_calls.expire_tags),
        StructType([StructField("expired_tags", StringType(), False)]),
        _expire_tags,
    ),
    "trigger_tag_automatic_creation": _Procedure(
        _params(tag_auto_calls.trigger_tag_automatic_creation),
        _RESULT,
        _trigger_tag_automatic_creation,
    ),
    "rollback": _Procedure(_params(calls.rollback), _ROLLBACK, _rollback),
    "rollback_to": _Procedure(_params(calls.rollback_to), _ROLLBACK, _rollback_to),
    "create_tag_from_timestamp": _Procedure(
        _params(timestamp_calls.create_tag_from_timestamp),
        _TAG_ROW,
        _row_of(timestamp_calls.create_tag_from_timestamp),
    ),
    "create_tag_from_watermark": _Procedure(
        _params(timestamp_calls.create_tag_from_watermark),
        _TAG_ROW,
        _row_of(timestamp_calls.create_tag_from_watermark),
    ),
    "rollback_to_timestamp": _Procedure(
        _params(timestamp_calls.rollback_to_timestamp),
        _ROLLBACK,
        _row_of(timestamp_calls.rollback_to_timestamp),
    ),
    "rollback_to_watermark": _Procedure(
        _params(timestamp_calls.rollback_to_watermark),
        _ROLLBACK,
        _row_of(timestamp_calls.rollback_to_watermark),
    ),
    "reset_consumer": _true_procedure(calls.reset_consumer),
    "clear_consumers": _true_procedure(calls.clear_consumers),
    "expire_partitions": _Procedure(
        _params(partition_calls.expire_partitions),
        StructType([StructField("expired_partitions", StringType(), True)]),
        _expire_partitions,
    ),
    "mark_partition_done": _true_procedure(mark_done_calls.mark_partition_done),
    **{
        name: _true_procedure(f)
        for name, f in (
            ("create_branch", branch_calls.create_branch),
            ("delete_branch", branch_calls.delete_branch),
            ("rename_branch", branch_calls.rename_branch),
            ("fast_forward", branch_calls.fast_forward),
        )
    },
    "purge_files": _Procedure(_params(file_calls.purge_files), _TEXT_RESULT, _purge_files),
    "remove_unexisting_files": _Procedure(
        _params(file_calls.remove_unexisting_files),
        StructType([StructField("fileName", StringType(), False)]),
        _remove_unexisting_files,
    ),
    "compact_manifest": _true_procedure(file_calls.compact_manifest),
    "compact_database": _Procedure(
        _params(file_calls.compact_database), _TEXT_RESULT, _compact_database
    ),
}

_HANDLERS: dict[type[Any], Callable[[_Runner, Any], DataFrame]] = {
    CreateDatabase: _Runner.create_database,
    DropDatabase: _Runner.drop_database,
    ShowDatabases: _Runner.show_databases,
    ShowTables: _Runner.show_tables,
    Use: _Runner.use,
    CreateTable: _Runner.create_table,
    DropTable: _Runner.drop_table,
    AlterTableOptions: _Runner.alter_table,
    AlterTableColumns: _Runner.alter_table_columns,
    RenameTable: _Runner.rename_table,
    SetOption: _Runner.set_option,
    Insert: _Runner.insert,
    Delete: _Runner.delete,
    Update: _Runner.update,
    Call: _Runner.call,
    Query: _Runner.query_statement,
    MergeInto: spark_merge.run_statement,
    **sql_table_ddl.HANDLERS,
    **sql_show.HANDLERS,
    **sql_views.HANDLERS,
    **sql_explain.HANDLERS,
    CreateTag: sql_tags.create_tag,
    DeleteTag: sql_tags.delete_tag,
    RenameTag: sql_tags.rename_tag,
}

__all__ = ["PaimonError", "context", "set_warehouse", "sql"]
