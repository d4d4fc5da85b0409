"""``CALL sys.compact``'s arguments (procedures/arguments.py): Flink's positional order in both
doors, blank strings as "not given", and Java's refusals of ``order_strategy``, ``order_by``
and ``partition_idle_time`` with Java's messages."""

from __future__ import annotations

import inspect

import pytest

from paimon_pyspark import procedures
from paimon_pyspark.compact.sort import SortOrder
from paimon_pyspark.errors import CompactArgumentError, InvalidArgumentError
from paimon_pyspark.procedures.arguments import (
    given,
    parse_idle_time,
    parse_options,
    parse_order,
    parse_partitions,
    parse_strategy,
)

JAVA_FLINK_ORDER = [
    "table",
    "partitions",
    "order_strategy",
    "order_by",
    "options",
    "where",
    "partition_idle_time",
    "compact_strategy",
]


def test_compact_takes_flinks_positional_order_then_buckets_and_progress() -> None:
    names = list(inspect.signature(procedures.compact).parameters)
    assert names == ["catalog", *JAVA_FLINK_ORDER, "buckets", "progress"]


def test_the_spark_twin_takes_the_same_order_after_its_own_leading_arguments() -> None:
    from paimon_pyspark.spark import procedures as spark_procedures

    names = list(inspect.signature(spark_procedures.compact).parameters)
    assert names == ["spark", "warehouse", *JAVA_FLINK_ORDER, "buckets", "progress"]


@pytest.mark.parametrize("blank", [None, "", " ", "\t\n"])
def test_blank_strings_are_not_given(blank: str | None) -> None:
    assert given("where", blank) is None
    assert parse_strategy(blank) is True  # Java's default: full
    assert parse_partitions(blank) is None
    assert parse_options(blank) == {}
    assert parse_order(blank, blank, blank) is None
    assert parse_idle_time(blank, "db.t") is None


def test_a_non_string_argument_is_a_typed_error_naming_it() -> None:
    with pytest.raises(InvalidArgumentError, match="'compact_strategy' must be a string, got int"):
        parse_strategy(1)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="'order_by'"):
        parse_order("order", 3, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("strategy", "order_by", "expected"),
    [
        ("order", "a", SortOrder("order", ("a",))),
        (" ZOrder ", "a, b", SortOrder("zorder", ("a", "b"))),
        ("hilbert", ["x", "y"], SortOrder("hilbert", ("x", "y"))),
        ("none", "", None),
        ("NONE", None, None),
    ],
)
def test_order_strategy_and_order_by(
    strategy: str, order_by: str | list[str] | None, expected: SortOrder | None
) -> None:
    assert parse_order(strategy, order_by, None) == expected


@pytest.mark.parametrize(
    ("strategy", "order_by", "idle", "message"),
    [
        ("order", "", None, "You must specify 'order strategy' and 'order by columns' both."),
        ("", "a", None, "You must specify 'order strategy' and 'order by columns' both."),
        (None, "a,b", None, "You must specify 'order strategy' and 'order by columns' both."),
        ("none", "a", None, 'order_strategy "none" cannot work with order_by columns.'),
        ("zorder", "a", "1 d", "sort compact do not support 'partition_idle_time'."),
        ("random", "a", None, "cannot match type: random for ordering"),
        ("order", "a,,b", None, "order column could not be empty"),
    ],
)
def test_java_refuses_these_orders_with_its_message(
    strategy: str | None, order_by: str, idle: str | None, message: str
) -> None:
    with pytest.raises(CompactArgumentError) as info:
        parse_order(strategy, order_by, idle)
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("1 d", 86_400_000),
        ("2h", 7_200_000),
        ("30 min", 1_800_000),
        ("10 s", 10_000),
        ("250", 250),
        ("3 days", 259_200_000),
    ],
)
def test_partition_idle_time_reads_as_javas_time_utils(text: str, ms: int) -> None:
    assert parse_idle_time(text, "db.t") == ms


@pytest.mark.parametrize("text", ["abc", "1 fortnight", "-1 d", "1.5 h"])
def test_a_bad_partition_idle_time_names_the_table_and_value(text: str) -> None:
    with pytest.raises(CompactArgumentError, match=f"Table 'db.t': partition_idle_time '{text}'"):
        parse_idle_time(text, "db.t")
