"""Column types of ``CREATE TABLE`` as Paimon types, in Spark's and Flink's spellings.

Where the two disagree the statement's style decides: a plain ``TIMESTAMP`` is Spark's
``TIMESTAMP_LTZ`` in a Spark-style statement (``USING`` / ``TBLPROPERTIES``) and Flink's
``TIMESTAMP(6)`` (no time zone) otherwise; ``TIMESTAMP(p)`` with a precision exists only in
Flink and is always without time zone, as Paimon's Flink and Spark connectors map them.
"""

from __future__ import annotations

from sqlglot import exp

from paimon_pyspark.errors import UnsupportedTypeError
from paimon_pyspark.types.data_types import (
    MAX_LENGTH,
    ArrayType,
    AtomicType,
    BinaryType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    MapType,
    RowType,
    TimestampType,
    TimeType,
)

D = exp.DataType.Type

_ATOMIC = {
    D.BOOLEAN: "BOOLEAN",
    D.TINYINT: "TINYINT",
    D.SMALLINT: "SMALLINT",
    D.INT: "INT",
    D.BIGINT: "BIGINT",
    D.FLOAT: "FLOAT",
    D.DOUBLE: "DOUBLE",
    D.DATE: "DATE",
}


def _params(t: exp.DataType) -> list[int]:
    out = []
    for p in t.expressions:
        node = p.this if isinstance(p, exp.DataTypeParam) else p
        if not isinstance(node, exp.Literal) or node.is_string:
            raise UnsupportedTypeError(f"Type {t.sql()}: parameter {p.sql()} is not a number.")
        out.append(int(node.this))
    return out


def paimon_type(t: exp.DataType, column: str, spark_style: bool) -> DataType:
    """The Paimon type of ``column`` declared as ``t`` (nullable; NOT NULL is the column's)."""
    kind = t.this
    if kind in _ATOMIC and not t.expressions:
        return AtomicType(_ATOMIC[kind])
    if kind in (D.TEXT, D.NVARCHAR) and not t.expressions:
        return CharType(MAX_LENGTH, True)
    if kind in (D.VARCHAR, D.CHAR, D.NCHAR):
        args = _params(t)
        return CharType(args[0] if args else 1, kind == D.VARCHAR)
    if kind == D.VARBINARY:
        args = _params(t)
        return BinaryType(args[0] if args else MAX_LENGTH, True)
    if kind == D.BINARY:
        args = _params(t)
        return BinaryType(args[0], False) if args else BinaryType(MAX_LENGTH, True)
    if kind == D.DECIMAL:
        args = _params(t)
        return DecimalType(args[0] if args else 10, args[1] if len(args) > 1 else 0)
    if kind == D.TIME:
        args = _params(t)
        return TimeType(args[0] if args else 0)
    if kind in (D.TIMESTAMPTZ, D.TIMESTAMP):
        args = _params(t)
        if args:
            return TimestampType(args[0], False)
        return TimestampType(6, spark_style)
    if kind == D.TIMESTAMPNTZ:
        args = _params(t)
        return TimestampType(args[0] if args else 6, False)
    if kind == D.TIMESTAMPLTZ:
        args = _params(t)
        return TimestampType(args[0] if args else 6, True)
    if kind == D.ARRAY and len(t.expressions) == 1:
        return ArrayType(_nested(t.expressions[0], column, spark_style))
    if kind == D.MAP and len(t.expressions) == 2:
        return MapType(
            _nested(t.expressions[0], column, spark_style),
            _nested(t.expressions[1], column, spark_style),
        )
    if kind == D.STRUCT:
        fields = []
        for i, f in enumerate(t.expressions):
            if not isinstance(f, exp.ColumnDef) or not isinstance(f.kind, exp.DataType):
                raise UnsupportedTypeError(
                    f"Column '{column}': struct field {f.sql()} has no type."
                )
            ft = paimon_type(f.kind, f"{column}.{f.name}", spark_style)
            comment = None
            for c in f.constraints:
                if isinstance(c.kind, exp.NotNullColumnConstraint):
                    ft = ft.copy(False)
                elif isinstance(c.kind, exp.CommentColumnConstraint):
                    comment = c.kind.this.name
            fields.append(DataField(i, f.name, ft, comment))
        return RowType(tuple(fields))
    raise UnsupportedTypeError(
        f"Column '{column}': type {t.sql(dialect='spark')} has no Paimon type here."
    )


def _nested(node: exp.Expr, column: str, spark_style: bool) -> DataType:
    if not isinstance(node, exp.DataType):
        raise UnsupportedTypeError(f"Column '{column}': {node.sql()} is not a type.")
    t = paimon_type(node, column, spark_style)
    return t.copy(False) if node.args.get("nullable") is False else t
