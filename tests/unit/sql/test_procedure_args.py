"""``CALL sys.*`` arguments in Spark's and Flink's spelling (sql/procedure_args.py): which
positional order a statement takes, and the package procedure's keyword arguments."""

from __future__ import annotations

from typing import Any

import pytest

from paimon_pyspark.errors import SqlError
from paimon_pyspark.sql import parse_statement
from paimon_pyspark.sql.procedure_args import FLINK, SIGNATURES, SPARK, bind
from paimon_pyspark.sql.statements import Call


def bound(statement: str) -> tuple[str, dict[str, Any]]:
    call = parse_statement(statement)
    assert isinstance(call, Call)
    signature = SIGNATURES[call.procedure]
    engine, _ = signature.order(call.args, call.kwargs, call.spark_quoted)
    return engine, bind(call.procedure, signature, call.args, call.kwargs, call.spark_quoted)


T = {"table": "db.t"}


@pytest.mark.parametrize(
    ("statement", "engine", "kwargs"),
    [
        # the issue's: Spark's order puts 'full' in compact_strategy
        (
            "CALL sys.compact('db.t', 'dt=1', 'full')",
            SPARK,
            {**T, "partitions": "dt=1", "compact_strategy": "full"},
        ),
        # the seed's: blanks read the same in both orders
        ("CALL sys.compact('db.t', '', '', '', '')", SPARK, T),
        # Flink's documentation: options in Flink's fifth slot (Spark's order_by needs a strategy)
        (
            "CALL sys.compact('db.t', '', '', '', 'sink.parallelism=4')",
            FLINK,
            {**T, "options": "sink.parallelism=4"},
        ),
        (
            "CALL sys.compact('db.t', 'p=0', 'zorder', 'a,b')",
            FLINK,
            {**T, "partitions": "p=0", "order_strategy": "zorder", "order_by": "a,b"},
        ),
        (
            "CALL sys.compact('db.t', '', '', 'zorder', 'a,b')",
            SPARK,
            {**T, "order_strategy": "zorder", "order_by": "a,b"},
        ),
        (
            "CALL sys.compact('db.t', '', '', '', '', '', '', 'minor')",
            FLINK,
            {**T, "compact_strategy": "minor"},
        ),
        (
            "CALL sys.compact('db.t', '', '', '', '', '', '1 d')",
            FLINK,
            {**T, "partition_idle_time": "1 d"},
        ),
        (
            "CALL sys.compact('db.t', '', '', '', '', '', 'k=v')",
            SPARK,
            {**T, "options": "k=v"},
        ),
        # neither order reads it: Spark's, whose check then names the value
        ("CALL sys.compact('db.t', '', 'fulll')", SPARK, {**T, "compact_strategy": "fulll"}),
        # a double-quoted string is Spark SQL
        (
            "CALL sys.compact('db.t', \"\", 'zorder', 'a,b')",
            SPARK,
            {**T, "compact_strategy": "zorder", "order_strategy": "a,b"},
        ),
        (
            "CALL sys.compact(`table` => 'db.t', compact_strategy => 'full')",
            SPARK,
            {**T, "compact_strategy": "full"},
        ),
        (
            "CALL sys.rescale('db.t', 2, 'dt=1;dt=2', \"dt > '1'\")",
            SPARK,
            {**T, "bucket_num": 2, "partition": "dt=1;dt=2", "where": "dt > '1'"},
        ),
        (
            "CALL sys.rescale('db.t', 2, 'dt=1', 4)",
            FLINK,
            {**T, "bucket_num": 2, "partition": "dt=1"},
        ),
        (
            "CALL sys.rescale('db.t', 2, 'dt=1', 4, 8)",
            FLINK,
            {**T, "bucket_num": 2, "partition": "dt=1"},
        ),
        (
            "CALL sys.rescale(table => 'db.t', partitions => 'dt=1', where => '')",
            SPARK,
            {**T, "partition": "dt=1"},
        ),
        (
            "CALL sys.rescale(`table` => 'db.t', `bucket_num` => 1, `partition` => 'd=1')",
            SPARK,
            {**T, "bucket_num": 1, "partition": "d=1"},
        ),
        ("CALL sys.create_tag('db.t', 'x', 3)", SPARK, {**T, "tag": "x", "snapshot": 3}),
        (
            "CALL sys.create_tag(`table` => 'db.t', tag => 'x', snapshot_id => 3)",
            SPARK,
            {**T, "tag": "x", "snapshot_id": 3},
        ),
        ("CALL sys.rollback_to('db.t', '', 5)", FLINK, {**T, "snapshot_id": 5}),
        (
            "CALL sys.rename_tag(`table` => 'db.t', tagName => 'a', targetTagName => 'b')",
            SPARK,
            {**T, "tagname": "a", "targettagname": "b"},
        ),
        ("CALL sys.rename_tag('db.t', 'a', 'b')", SPARK, {**T, "tag": "a", "target_tag": "b"}),
    ],
)
def test_positional_order_and_names(statement: str, engine: str, kwargs: dict[str, Any]) -> None:
    assert bound(statement) == (engine, kwargs)


def test_refusals_name_the_argument() -> None:
    with pytest.raises(SqlError, match="at most 8 arguments in Flink's order"):
        bound("CALL sys.compact('db.t', '', '', '', '', '', '', '', '', 'x')")
    with pytest.raises(SqlError, match="no argument 'bogus'"):
        bound("CALL sys.compact(`table` => 'db.t', bogus => 1)")
    with pytest.raises(SqlError, match="'partition' is given twice"):
        bound("CALL sys.rescale(`table` => 'db.t', partition => 'a=1', partitions => 'a=2')")
    with pytest.raises(SqlError, match="needs the argument 'table'"):
        bound("CALL sys.compact('')")
