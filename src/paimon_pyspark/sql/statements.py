"""SQL statements as typed values: what each statement asks, with nothing run yet.

``parse_statement`` reads one statement with the package's dialect (sql/dialect.py) and
returns one of the dataclasses below; queries keep sqlglot's tree, since Spark runs them.
A statement kind the door does not run raises UnsupportedStatementError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sqlglot import Token, TokenType, exp

from paimon_pyspark.errors import SqlError, SqlSyntaxError, UnsupportedStatementError
from paimon_pyspark.sql import table_ddl
from paimon_pyspark.sql.alter_columns import parse_alter_columns
from paimon_pyspark.sql.dialect import parse_expression, parse_one, table_hint, to_sql, tokenize
from paimon_pyspark.sql.explain import Explain, parse_explain
from paimon_pyspark.sql.merge import MergeInto, parse_merge
from paimon_pyspark.sql.show import ShowStatement, parse_describe, parse_show
from paimon_pyspark.sql.tags import TagStatement, parse_tag_statement
from paimon_pyspark.sql.types import paimon_type
from paimon_pyspark.sql.views import CreateTempView, parse_temp_view
from paimon_pyspark.store.schema_change import Move, SchemaChange
from paimon_pyspark.types.data_types import DataType

CATALOG = "paimon"


@dataclass(frozen=True)
class TableName:
    """A table as a statement names it: ``t``, ``db.t`` or ``paimon.db.t``."""

    table: str
    database: str | None = None
    catalog: str | None = None

    @staticmethod
    def of(node: exp.Table) -> TableName:
        if not node.name:
            raise SqlSyntaxError(f"Expected a table name, got {node.sql()!r}.")
        return TableName(node.name, node.db or None, node.catalog or None)

    def __str__(self) -> str:
        return ".".join(p for p in (self.catalog, self.database, self.table) if p)


@dataclass(frozen=True)
class Column:
    name: str
    type: DataType
    comment: str | None = None


@dataclass(frozen=True)
class CreateDatabase:
    name: str
    if_not_exists: bool


@dataclass(frozen=True)
class DropDatabase:
    name: str
    if_exists: bool
    cascade: bool


@dataclass(frozen=True)
class ShowDatabases:
    pass


@dataclass(frozen=True)
class ShowTables:
    database: str | None


@dataclass(frozen=True)
class Use:
    database: str


@dataclass(frozen=True)
class CreateTable:
    name: TableName
    columns: list[Column]
    primary_keys: list[str]
    partition_keys: list[str]
    options: dict[str, str]
    comment: str | None
    if_not_exists: bool
    query: exp.Expr | None = None


@dataclass(frozen=True)
class DropTable:
    name: TableName
    if_exists: bool


@dataclass(frozen=True)
class AlterTableOptions:
    name: TableName
    set: dict[str, str]
    unset: list[str]
    if_exists: bool = False


@dataclass(frozen=True)
class AlterTableColumns:
    """``ALTER TABLE t ADD COLUMNS / ADD COLUMN / DROP COLUMN / RENAME COLUMN / ALTER COLUMN``:
    the schema changes, in statement order, as Paimon's Spark catalog makes them (an
    ``ALTER COLUMN ... TYPE`` keeps the column's nullability)."""

    name: TableName
    changes: list[SchemaChange]
    if_exists: bool = False


@dataclass(frozen=True)
class RenameTable:
    """``ALTER TABLE t RENAME TO u``."""

    name: TableName
    new_name: TableName
    if_exists: bool = False


@dataclass(frozen=True)
class Insert:
    name: TableName
    query: exp.Expr
    overwrite: bool = False
    columns: list[str] | None = None
    static_partition: dict[str, Any] = field(default_factory=dict)
    partition_columns: list[str] = field(default_factory=list)
    hints: dict[str, str] = field(default_factory=dict)
    by_name: bool = False
    """``INSERT INTO t BY NAME``: the query's columns are matched to the table's by name."""


@dataclass(frozen=True)
class Delete:
    name: TableName
    condition: str | None


@dataclass(frozen=True)
class Update:
    name: TableName
    assignments: dict[str, str]
    condition: str | None


@dataclass(frozen=True)
class Call:
    """``CALL sys.<procedure>(...)``; ``spark_quoted``: a double-quoted string is an argument,
    which only Spark SQL reads as a string (sql/procedure_args.py)."""

    procedure: str
    args: list[Any]
    kwargs: dict[str, Any]
    spark_quoted: bool = False


@dataclass(frozen=True)
class Query:
    tree: exp.Expr
    text: str


@dataclass(frozen=True)
class SetOption:
    key: str | None
    value: str | None


Statement = (
    CreateDatabase
    | DropDatabase
    | ShowDatabases
    | ShowTables
    | Use
    | CreateTable
    | DropTable
    | AlterTableOptions
    | AlterTableColumns
    | RenameTable
    | Insert
    | Delete
    | Update
    | Call
    | Query
    | SetOption
    | TagStatement
    | table_ddl.TruncateTable
    | table_ddl.ReplaceTable
    | table_ddl.AddPartitions
    | table_ddl.DropPartitions
    | MergeInto
    | ShowStatement
    | CreateTempView
    | Explain
)


def _unsupported(what: str, text: str) -> UnsupportedStatementError:
    flat = " ".join(text.split())
    return UnsupportedStatementError(
        f"{what} is not supported by paimon_pyspark's SQL door: {flat[:200]}"
    )


def _literal(node: exp.Expr, where: str) -> Any:
    """A literal's Python value (string, number, boolean or None)."""
    if isinstance(node, exp.Paren):
        return _literal(node.this, where)
    if isinstance(node, exp.Literal):
        if node.is_string:
            return str(node.this)
        text = str(node.this)
        try:
            return int(text)
        except ValueError:
            return float(text)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Neg):
        value = _literal(node.this, where)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value
    raise SqlSyntaxError(f"{where} takes a literal value, got {node.sql()}.")


def _property_options(
    props: exp.Properties | None,
) -> tuple[dict[str, str], str | None, list[str], list[exp.ColumnDef]]:
    """(table options, comment, partition keys, typed partition columns) of a CREATE TABLE's
    properties: Spark's ``PARTITIONED BY (dt STRING)`` declares the columns it names."""
    options: dict[str, str] = {}
    comment: str | None = None
    partitions: list[str] = []
    typed: list[exp.ColumnDef] = []
    for prop in props.expressions if props else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            comment = str(_literal(prop.this, "COMMENT"))
        elif isinstance(prop, exp.PartitionedByProperty):
            schema = prop.this
            for col in schema.expressions if isinstance(schema, exp.Schema) else [schema]:
                if isinstance(col, exp.ColumnDef):
                    typed.append(col)
                partitions.append(col.name)
            if typed and len(typed) != len(partitions):
                raise SqlSyntaxError(
                    "PARTITIONED BY: cannot mix partition columns with a type and partition "
                    f"columns without one, as Spark: {prop.sql(dialect='spark')}"
                )
        elif isinstance(prop, exp.FileFormatProperty):
            using = prop.name.lower()
            if using != "paimon":
                raise _unsupported(f"CREATE TABLE ... USING {prop.name}", prop.sql())
        elif isinstance(prop, exp.Property):
            key = prop.this
            name = str(key.this) if isinstance(key, exp.Literal) else key.sql()
            options[name] = _option_value(prop.args.get("value"), name)
        else:
            raise _unsupported(f"The table property {prop.sql(dialect='spark')}", prop.sql())
    return options, comment, partitions, typed


def _option_value(node: exp.Expr | None, key: str) -> str:
    if node is None:
        raise SqlSyntaxError(f"Option '{key}' has no value.")
    value = _literal(node, f"Option '{key}'")
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _create_table(node: exp.Create, text: str) -> CreateTable:
    props = node.args.get("properties")
    options, comment, partitions, typed = _property_options(props)
    spark_style = (
        any(isinstance(p, exp.FileFormatProperty) for p in (props.expressions if props else []))
        or "primary-key" in options
        or bool(typed)
    )
    target = node.this
    columns: list[Column] = []
    primary: list[str] = []
    if isinstance(target, exp.Schema):
        table_node = target.this
        for item in target.expressions:
            if isinstance(item, exp.ColumnDef):
                columns.append(_column(item, spark_style))
                for c in item.constraints:
                    if isinstance(c.kind, exp.PrimaryKeyColumnConstraint):
                        primary.append(item.name)
            elif isinstance(item, exp.PrimaryKey):
                primary.extend(i.name for i in item.expressions)
            else:
                raise _unsupported(f"The table element {item.sql()}", text)
    else:
        table_node = target
    if not isinstance(table_node, exp.Table):
        raise SqlSyntaxError(f"Expected a table name in: {text}")
    if primary and "primary-key" in options:
        raise SqlSyntaxError(
            f"Table {TableName.of(table_node)}: the primary key is given twice (PRIMARY KEY and "
            "the 'primary-key' option)."
        )
    if not primary and "primary-key" in options:
        primary = [k.strip() for k in options.pop("primary-key").split(",") if k.strip()]
    query = node.expression
    if typed and query is not None:
        raise SqlSyntaxError(
            f"Table {TableName.of(table_node)}: partition column types may not be given in "
            "CREATE TABLE AS SELECT, as in Spark."
        )
    for col in typed:  # Spark appends them to the schema, in PARTITIONED BY order
        if col.name.lower() in (c.name.lower() for c in columns):
            raise SqlError(
                f"Table {TableName.of(table_node)}: column '{col.name}' of PARTITIONED BY is "
                "declared in the column list already; give it once (PARTITIONED BY (name) "
                "names a column of the list)."
            )
        columns.append(_column(col, spark_style=True))
    if query is not None and columns:
        raise _unsupported("CREATE TABLE AS SELECT with a column list", text)
    if query is None and not columns:
        raise SqlSyntaxError(f"CREATE TABLE needs columns or AS SELECT: {text}")
    return CreateTable(
        name=TableName.of(table_node),
        columns=columns,
        primary_keys=primary,
        partition_keys=partitions,
        options=options,
        comment=comment,
        if_not_exists=bool(node.args.get("exists")),
        query=query,
    )


def _column(item: exp.ColumnDef, spark_style: bool) -> Column:
    kind = item.kind
    if not isinstance(kind, exp.DataType):
        raise SqlSyntaxError(f"Column '{item.name}' has no type.")
    t = paimon_type(kind, item.name, spark_style)
    comment = None
    for c in item.constraints:
        if isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null"):
            t = t.copy(False)
        elif isinstance(c.kind, exp.CommentColumnConstraint):
            comment = str(_literal(c.kind.this, f"The comment of column '{item.name}'"))
        elif isinstance(c.kind, exp.PrimaryKeyColumnConstraint):
            pass
        else:
            raise _unsupported(f"The column constraint {c.sql()}", item.sql())
    return Column(item.name, t, comment)


def _database_name(node: exp.Expr | None, text: str) -> str:
    """The database a CREATE/DROP/USE names: ``db`` or ``paimon.db``."""
    if not isinstance(node, exp.Table):
        raise SqlSyntaxError(f"Expected a database name in: {text}")
    parts = [p for p in (node.catalog, node.db, node.name) if p]
    if len(parts) == 2 and parts[0].lower() == CATALOG:
        return parts[1]
    if len(parts) != 1:
        raise SqlSyntaxError(f"Expected a database name, got {node.sql()!r} in: {text}")
    return parts[0]


def _insert(node: exp.Insert, text: str) -> Insert:
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [i.name for i in target.expressions]
        target = target.this
    if not isinstance(target, exp.Table):
        raise _unsupported("INSERT into something that is not a table", text)
    by_name = bool(node.args.get("by_name"))
    if by_name and columns is not None:
        raise SqlSyntaxError(f"INSERT takes a column list or BY NAME, not both: {text}")
    for unsupported in ("ignore", "exists", "where", "conflict", "returning"):
        if node.args.get(unsupported):
            raise _unsupported(f"INSERT with {unsupported.upper().replace('_', ' ')}", text)
    static: dict[str, Any] = {}
    dynamic: list[str] = []
    partition = target.args.get("partition")
    if partition is not None:
        for item in partition.expressions:
            if isinstance(item, exp.EQ):
                static[item.this.name] = _literal(item.expression, f"PARTITION ({item.sql()})")
            else:
                dynamic.append(item.name)
    hint = table_hint(text, target)
    query = node.expression
    if query is None:
        raise SqlSyntaxError(f"INSERT needs VALUES or a query: {text}")
    clean = target.copy()
    clean.set("partition", None)
    return Insert(
        name=TableName.of(clean),
        query=query,
        overwrite=bool(node.args.get("overwrite")),
        columns=columns,
        static_partition=static,
        partition_columns=dynamic,
        hints=hint.options if hint else {},
        by_name=by_name,
    )


def _call(text: str, body: str) -> Call:
    tree = parse_expression(body)
    path: list[str] = []
    node = tree
    while isinstance(node, exp.Dot):
        path.append(node.this.name)
        node = node.expression
    if not isinstance(node, exp.Anonymous):
        raise SqlSyntaxError(f"CALL needs a procedure call such as sys.compact(...): {text}")
    path.append(str(node.this))
    if len(path) == 3 and path[0].lower() == CATALOG:
        path = path[1:]
    if len(path) != 2 or path[0].lower() != "sys":
        raise _unsupported(f"The procedure {'.'.join(path)} (only sys.* exists)", text)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in node.expressions:
        if isinstance(arg, exp.Kwarg):
            name = arg.this.name
            if name in kwargs:
                raise SqlSyntaxError(f"CALL sys.{path[1]}: argument '{name}' is given twice.")
            kwargs[name] = _literal(arg.expression, f"CALL sys.{path[1]}: argument '{name}'")
        else:
            if kwargs:
                raise SqlSyntaxError(
                    f"CALL sys.{path[1]}: a positional argument follows a named one: {text}"
                )
            args.append(_literal(arg, f"CALL sys.{path[1]}: argument {len(args) + 1}"))
    quoted = any(t.token_type == TokenType.STRING and body[t.start] == '"' for t in tokenize(body))
    return Call(path[1], args, kwargs, quoted)


def _words(tokens: list[Token]) -> list[str]:
    return [t.text.upper() for t in tokens]


def _show(text: str, body: str) -> Statement:
    tokens = tokenize(body)
    words = _words(tokens)
    if words in (["DATABASES"], ["SCHEMAS"]):
        return ShowDatabases()
    if words and words[0] == "TABLES":
        rest = tokens[1:]
        if not rest:
            return ShowTables(None)
        if _words(rest[:1]) in (["FROM"], ["IN"]):
            names = [t.text for t in rest[1:] if t.token_type != TokenType.DOT]
            if len(names) == 2 and names[0].lower() == CATALOG:
                names = names[1:]
            if len(names) == 1:
                return ShowTables(names[0])
    return parse_show(text, body, tokens)


def _alter(text: str, body: str) -> Statement:
    """``ALTER TABLE t UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`` and Flink's ``ALTER
    TABLE t RESET ('k', ...)``, which sqlglot leaves as commands."""
    tokens = tokenize(body)
    words = _words(tokens)
    if not words or words[0] != "TABLE":
        raise _unsupported(f"ALTER {words[0] if words else ''}".strip(), text)
    i = 1
    names: list[str] = []
    while i < len(tokens) and (not names or tokens[i].token_type == TokenType.DOT):
        if tokens[i].token_type == TokenType.DOT:
            i += 1
        names.append(tokens[i].text)
        i += 1
    rest = words[i:]
    if rest[:2] == ["UNSET", "TBLPROPERTIES"]:
        i += 2
        if words[i : i + 2] == ["IF", "EXISTS"]:
            i += 2
    elif rest[:1] == ["RESET"]:
        i += 1
    else:
        raise _unsupported(f"ALTER TABLE ... {' '.join(rest[:2])}", text)
    keys = [
        t.text
        for t in tokens[i:]
        if t.token_type not in (TokenType.L_PAREN, TokenType.R_PAREN, TokenType.COMMA)
    ]
    if not keys or words[i] != "(" or words[-1] != ")":
        raise SqlSyntaxError(f"Expected ('key', ...) in: {text}")
    table = TableName(*reversed(names)) if 1 <= len(names) <= 3 else None
    if table is None:
        raise SqlSyntaxError(f"Expected a table name in: {text}")
    return AlterTableOptions(table, {}, keys)


def _alter_set(node: exp.Alter, text: str) -> Statement:
    if node.args.get("kind") != "TABLE":
        raise _unsupported(f"ALTER {node.args.get('kind')}", text)
    table = node.this
    if not isinstance(table, exp.Table):
        raise SqlSyntaxError(f"Expected a table name in: {text}")
    actions = node.args.get("actions") or []
    if len(actions) == 1 and isinstance(actions[0], exp.AlterRename):
        target = actions[0].this
        if not isinstance(target, exp.Table):
            raise SqlSyntaxError(f"Expected the new table name in: {text}")
        return RenameTable(TableName.of(table), TableName.of(target), bool(node.args.get("exists")))
    if actions and not any(isinstance(a, exp.AlterSet) for a in actions):
        changes = [c for a in actions for c in _column_changes(a, text)]
        return AlterTableColumns(TableName.of(table), changes, bool(node.args.get("exists")))
    options: dict[str, str] = {}
    for action in node.args.get("actions") or []:
        if not isinstance(action, exp.AlterSet):
            raise _unsupported(f"ALTER TABLE ... {action.sql(dialect='spark')[:40]}", text)
        for item in action.expressions:
            props = item.expressions if isinstance(item, exp.Properties) else [item]
            for prop in props:
                if isinstance(prop, exp.Property):
                    key = prop.this
                    name = str(key.this) if isinstance(key, exp.Literal) else key.sql()
                    options[name] = _option_value(prop.args.get("value"), name)
                elif isinstance(prop, exp.EQ) and isinstance(prop.this, exp.Literal):
                    key_text = str(prop.this.this)
                    options[key_text] = _option_value(prop.expression, key_text)
                else:
                    raise _unsupported(f"ALTER TABLE ... SET {prop.sql()}", text)
    if not options:
        raise _unsupported("This ALTER TABLE", text)
    return AlterTableOptions(TableName.of(table), options, [], bool(node.args.get("exists")))


def _column_changes(action: exp.Expr, text: str) -> list[SchemaChange]:
    """The schema changes of one column action of an ALTER TABLE (Spark's syntax). A column is
    named by its path (``c``, ``s.f``, ``arr.element.f``), as Java's SparkCatalog passes it on;
    a new column's FIRST/AFTER places it among its siblings. ``ALTER|CHANGE COLUMN`` is read
    from tokens (sql/alter_columns.py)."""
    if isinstance(action, exp.Schema):
        return [c for item in action.expressions for c in _column_changes(item, text)]
    if isinstance(action, exp.ColumnDef):
        path = _column_path(action.this, text)
        plain = action.copy()
        plain.set("this", exp.to_identifier(path[-1]))
        column = _column(plain, spark_style=True)
        position = action.args.get("position")
        move = None
        if isinstance(position, exp.ColumnPosition):
            where = position.args.get("position")
            if where == "FIRST":
                move = Move.first(path[0])
            elif where == "AFTER" and isinstance(position.this, exp.Column):
                move = Move.after(path[0], position.this.name)
            else:
                raise _unsupported(f"ADD COLUMN ... {position.sql()}", text)
        return [SchemaChange.add_column(path, column.type, column.comment, move)]
    if isinstance(action, exp.Drop) and action.args.get("kind") in ("COLUMN", "COLUMNS"):
        paths: list[tuple[str, ...]] = []
        for item in action.args.get("tables") or []:
            parts = item.expressions if isinstance(item, exp.Schema) else [item]
            paths += [_column_path(p, text) for p in parts]
        return [SchemaChange.drop_column(p) for p in paths]
    if isinstance(action, exp.RenameColumn):
        old, new = action.this, action.args.get("to")
        if not isinstance(old, (exp.Column, exp.Dot)) or not isinstance(new, exp.Column):
            raise SqlSyntaxError(f"Expected RENAME COLUMN a TO b in: {text}")
        if new.table:
            raise SqlSyntaxError(f"RENAME COLUMN ... TO takes a name, not a path: {text}")
        return [SchemaChange.rename_column(_column_path(old, text), new.name)]
    if isinstance(action, exp.AlterColumn) and not action.args.get("rename_to"):
        path = _column_path(action.this, text)
        name = ".".join(path)
        dtype = action.args.get("dtype")
        comment = action.args.get("comment")
        allow_null = action.args.get("allow_null")
        if isinstance(dtype, exp.DataType):
            t = paimon_type(dtype, name, True)
            return [SchemaChange.update_column_type(path, t, keep_nullability=True)]
        if isinstance(comment, exp.Literal):
            return [SchemaChange.update_column_comment(path, str(comment.this))]
        if allow_null is not None:
            return [SchemaChange.update_column_nullability(path, bool(action.args.get("drop")))]
    raise _unsupported(f"ALTER TABLE ... {action.sql(dialect='spark')[:40]}", text)


def _column_path(node: exp.Expr | None, text: str) -> tuple[str, ...]:
    """A column's name parts as sqlglot reads ``s.f.g``: an identifier, a column (up to four
    parts) or dots over them."""
    if isinstance(node, exp.Dot):
        return _column_path(node.this, text) + _column_path(node.expression, text)
    if isinstance(node, exp.Column):
        return tuple(p.name for p in node.parts)
    if isinstance(node, exp.Identifier) and node.name:
        return (node.name,)
    raise SqlSyntaxError(f"Expected a column name, got {node.sql() if node else 'nothing'}: {text}")


def _set_tokens(text: str, tokens: list[Token]) -> SetOption:
    """``SET 'k' = 'v'`` (Flink) and ``SET spark.some.key = v`` (Spark: the key is the raw text
    before ``=``, any number of dotted parts)."""
    rest = tokens[1:]
    if not rest:
        return SetOption(None, None)
    eq = next((i for i, t in enumerate(rest) if t.token_type == TokenType.EQ), None)
    if eq is None or eq == 0 or eq == len(rest) - 1:
        raise _unsupported("This SET", text)

    def side(part: list[Token]) -> str:
        if len(part) == 1 and part[0].token_type == TokenType.STRING:
            return part[0].text
        return text[part[0].start : part[-1].end + 1].strip()

    return SetOption(side(rest[:eq]), side(rest[eq + 1 :]))


def _set(node: exp.Set, text: str) -> SetOption:
    items = node.expressions
    if not items:
        return SetOption(None, None)
    if len(items) != 1 or not isinstance(items[0], exp.SetItem):
        raise _unsupported("This SET", text)
    eq = items[0].this
    if not isinstance(eq, exp.EQ):
        raise _unsupported("This SET", text)
    key = str(eq.this.this) if isinstance(eq.this, exp.Literal) else eq.this.sql()
    value = eq.expression
    return SetOption(key, str(_literal(value, f"SET {key}")) if value is not None else None)


_QUERIES = (exp.Query, exp.Values)


_KIND_NAMES: dict[type[exp.Expr], str] = {
    exp.Cache: "CACHE TABLE",
    exp.Uncache: "UNCACHE TABLE",
}


def parse_statement(text: str) -> Statement:
    """One SQL statement, typed.

    ``CALL``, ``SHOW``, ``ALTER TABLE ... UNSET/RESET``, tag DDL (sql/tags.py) and ``ALTER|CHANGE
    COLUMN`` (sql/alter_columns.py) are read from the dialect's tokens (sqlglot has no tree for
    them); everything else from sqlglot's tree."""
    tokens = tokenize(text)
    if not tokens:
        raise SqlSyntaxError("Empty SQL statement.")
    first = tokens[0].text.upper()
    # the tokenizer reads the rest of a command (CALL, SHOW) as one string token
    body = text[tokens[0].end + 1 :]
    if first == "CALL":
        return _call(text, body)
    if first == "SHOW":
        return _show(text, body)
    if first == "EXPLAIN" and (explain := parse_explain(body)) is not None:
        return explain
    if tokens[0].token_type == TokenType.COMMAND:
        raise _unsupported(first, text)
    if first == "SET":
        return _set_tokens(text, tokens)
    if first == "ALTER" and {"UNSET", "RESET"} & set(_words(tokens[:8])):
        return _alter(text, body)
    if first == "ALTER" and table_ddl.is_partition_ddl(tokens):
        return table_ddl.alter_partitions(text, tokens)
    if table_ddl.is_replace(tokens):
        return table_ddl.replace_table(
            parse_one(table_ddl.replace_text(text, tokens)), text, or_create=False
        )
    if first == "ALTER":
        tag = parse_tag_statement(text, tokens)
        if tag is not None:
            return tag
        altered = parse_alter_columns(text, tokens)
        if altered is not None:
            return AlterTableColumns(TableName(*reversed(altered[0])), altered[2], altered[1])
    node = parse_one(text)
    if isinstance(node, _QUERIES):
        return Query(node, text)
    if isinstance(node, exp.Create):
        kind = node.args.get("kind")
        if kind in ("DATABASE", "SCHEMA"):
            return CreateDatabase(_database_name(node.this, text), bool(node.args.get("exists")))
        if kind == "TABLE" and not node.args.get("replace"):
            return _create_table(node, text)
        if kind == "TABLE":
            return table_ddl.replace_table(node, text, or_create=True)
        if kind == "VIEW" and (view := parse_temp_view(node, text)) is not None:
            return view
        raise _unsupported(
            f"CREATE {'OR REPLACE ' if node.args.get('replace') else ''}{kind}", text
        )
    if isinstance(node, exp.Drop):
        kind = node.args.get("kind")
        tables = node.args.get("tables") or []
        if kind in ("DATABASE", "SCHEMA") and len(tables) == 1:
            name = _database_name(_as_database(tables[0]), text)
            return DropDatabase(name, bool(node.args.get("exists")), bool(node.args.get("cascade")))
        if kind == "TABLE" and len(tables) == 1 and not node.args.get("temporary"):
            return DropTable(TableName.of(tables[0]), bool(node.args.get("exists")))
        raise _unsupported(f"DROP {kind}", text)
    if isinstance(node, exp.Use):
        if node.args.get("kind") is not None:
            raise _unsupported(f"USE {node.args.get('kind')}", text)
        return Use(_database_name(_as_database(node.this), text))
    if isinstance(node, exp.Insert):
        return _insert(node, text)
    if isinstance(node, exp.TruncateTable):
        return table_ddl.truncate_table(node, text)
    if isinstance(node, exp.Delete):
        return _delete(node, text)
    if isinstance(node, exp.Update):
        return _update(node, text)
    if isinstance(node, exp.Merge):
        return parse_merge(node, text)
    if isinstance(node, exp.Describe):
        return parse_describe(node, text)
    if isinstance(node, exp.Alter):
        return _alter_set(node, text)
    if isinstance(node, exp.Set):
        return _set(node, text)
    if isinstance(node, exp.Command):
        raise _unsupported(str(node.this).upper(), text)
    raise _unsupported(_KIND_NAMES.get(type(node), type(node).__name__.upper()), text)


def _as_database(node: exp.Expr | None) -> exp.Expr | None:
    """``DROP SCHEMA d`` reads ``d`` as a table's database; ``USE paimon.d`` as db.table."""
    if isinstance(node, exp.Table) and not node.name and node.db:
        return replace_table(node, node.db, node.catalog)
    return node


def replace_table(node: exp.Table, name: str, db: str | None) -> exp.Table:
    return exp.Table(this=exp.to_identifier(name), db=exp.to_identifier(db) if db else None)


def _where(node: exp.Expr) -> str | None:
    where = node.args.get("where")
    return to_sql(where.this) if where is not None else None


def _delete(node: exp.Delete, text: str) -> Delete:
    target = node.this
    if not isinstance(target, exp.Table) or node.args.get("using") or node.args.get("limit"):
        raise _unsupported("This DELETE form", text)
    if target.alias:
        raise _unsupported("DELETE with a table alias", text)
    return Delete(TableName.of(target), _where(node))


def _update(node: exp.Update, text: str) -> Update:
    target = node.this
    if not isinstance(target, exp.Table) or node.args.get("from_") or node.args.get("from"):
        raise _unsupported("This UPDATE form", text)
    if target.alias:
        raise _unsupported("UPDATE with a table alias", text)
    assignments: dict[str, str] = {}
    for eq in node.expressions:
        if not isinstance(eq, exp.EQ) or not isinstance(eq.this, exp.Column):
            raise SqlSyntaxError(f"UPDATE ... SET takes column = expression, got {eq.sql()}.")
        name = eq.this.name
        if name in assignments:
            raise SqlSyntaxError(f"UPDATE assigns column '{name}' twice: {text}")
        assignments[name] = to_sql(eq.expression)
    return Update(TableName.of(target), assignments, _where(node))


__all__ = [
    "AlterTableColumns",
    "AlterTableOptions",
    "Call",
    "Column",
    "CreateDatabase",
    "CreateTable",
    "Delete",
    "DropDatabase",
    "DropTable",
    "Insert",
    "Query",
    "RenameTable",
    "SetOption",
    "ShowDatabases",
    "ShowTables",
    "Statement",
    "TableName",
    "Update",
    "Use",
    "parse_statement",
    "replace",
]
