"""``CREATE [OR REPLACE] [GLOBAL] TEMPORARY VIEW v [(a, b)] AS <query>``: a notebook's view over
Paimon tables, which Spark cannot read by name; the door binds the query's Paimon tables and
keeps the view as Spark's (spark/sql_views.py). A view over Spark's tables only is Spark's to
run (spark/door.py); a view that is not temporary would outlive the session's bindings and
stays refused."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp


@dataclass(frozen=True)
class CreateTempView:
    name: str
    query: exp.Expr
    text: str
    """The whole statement, where the query's ``/*+ OPTIONS */`` hints are read."""
    columns: list[str] | None = None
    replace: bool = False
    if_not_exists: bool = False
    global_view: bool = False


def parse_temp_view(node: exp.Create, text: str) -> CreateTempView | None:
    """The temporary view ``node`` creates as a query; None for anything else."""
    props = node.args.get("properties")
    kinds = {type(p) for p in (props.expressions if props else [])}
    if node.args.get("kind") != "VIEW" or exp.TemporaryProperty not in kinds:
        return None
    target = node.this
    columns = None
    if isinstance(target, exp.Schema):
        columns = [c.name for c in target.expressions]
        target = target.this
    query = node.expression
    if not isinstance(target, exp.Table) or target.db or not isinstance(query, exp.Query):
        return None  # Spark's other forms (``USING parquet OPTIONS (...)``)
    return CreateTempView(
        name=target.name,
        query=query,
        text=text,
        columns=columns,
        replace=bool(node.args.get("replace")),
        if_not_exists=bool(node.args.get("exists")),
        global_view=exp.GlobalProperty in kinds,
    )


__all__ = ["CreateTempView", "parse_temp_view"]
