"""``%%paimon_sql``: a notebook cell of SQL statements run through ``paimon_pyspark.spark.sql``.

``register(spark, warehouse=...)`` installs it on the running IPython shell, if any. The cell
is cut with ``sql.split_statements`` and its statements run in order, on the session given to
``register``; the cell's value is the last statement's DataFrame (shown as the cell's output;
none for a command without result columns). ``%%paimon_sql name`` also stores it in the
notebook variable ``name``. A failing statement stops the cell; its error carries a note naming
the statement.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark.errors import InvalidArgumentError
from paimon_pyspark.sql import split_statements

MAGIC = "paimon_sql"


def run_cell(spark: SparkSession, cell: str) -> DataFrame | None:
    """The statements of ``cell`` run in order; the last one's DataFrame (None for a cell of
    comments only)."""
    from paimon_pyspark.spark.sql import sql

    statements = split_statements(cell)
    result: DataFrame | None = None
    for i, statement in enumerate(statements, start=1):
        try:
            result = sql(spark, statement)
        except Exception as e:
            flat = " ".join(statement.split())
            e.add_note(f"%%{MAGIC}: statement {i} of {len(statements)}: {flat[:200]}")
            raise
    return result


def install(spark: SparkSession) -> bool:
    """Install ``%%paimon_sql`` for ``spark`` on the running IPython shell; False when
    IPython is not installed or no shell runs."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    if shell is None:
        return False

    def paimon_sql(line: str, cell: str) -> DataFrame | None:
        name = line.strip()
        if name and not name.isidentifier():
            raise InvalidArgumentError(
                f"%%{MAGIC} takes an optional variable name for the result, got {name!r}."
            )
        result = run_cell(spark, cell)
        if name:
            user: dict[str, Any] = shell.user_ns
            user[name] = result
        return result if result is not None and result.columns else None

    shell.register_magic_function(paimon_sql, magic_kind="cell", magic_name=MAGIC)
    return True


__all__ = ["MAGIC", "install", "run_cell"]
