"""The ``paimon-pyspark`` command line: its commands and their arguments."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark.cli import _parser


def test_help_lists_the_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "paimon_pyspark.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    for command in (
        "demo",
        "load",
        "compact",
        "rescale",
        "expire-snapshots",
        "remove-orphan-files",
        "create-tag",
        "delete-tag",
        "rollback",
        "tables",
        "show",
        "snapshots",
        "sql",
    ):
        assert command in out


def test_load_arguments_parse_into_options() -> None:
    args = _parser().parse_args(
        [
            "load",
            "--input",
            "in.parquet",
            "--warehouse",
            "/w",
            "--table",
            "db.t",
            "--create",
            "--partition-keys",
            "dt",
            "--option",
            "bucket=2",
            "--option",
            "bucket-key=id",
            "--json",
        ]
    )
    assert (args.input, args.table, args.create, args.partition_keys, args.json) == (
        "in.parquet",
        "db.t",
        True,
        "dt",
        True,
    )
    assert args.option == [("bucket", "2"), ("bucket-key", "id")]
    assert (args.mode, args.verbose) == ("append", False)


def test_an_option_without_a_value_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _parser().parse_args(
            ["load", "--input", "x", "--warehouse", "/w", "--table", "db.t", "--option", "bucket"]
        )
    assert exit_info.value.code == 2
    assert "expected KEY=VALUE, got 'bucket'" in capsys.readouterr().err


@pytest.mark.slow
def test_load_job_lands_a_parquet_input_in_a_new_table(
    spark: object, tmp_path: object, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from paimon_pyspark import CatalogFactory
    from paimon_pyspark.spark import pipeline

    path = f"{tmp_path}/input.parquet"
    data = pa.table({"id": list(range(100)), "dt": ["a", "b"] * 50})
    pq.write_table(data, path)
    options = {"create": "true", "partition-keys": "dt", "bucket": "2", "bucket-key": "id"}
    pipeline.load(spark, path, "parquet", warehouse, "db.loaded", options, print)  # type: ignore[arg-type]
    table = CatalogFactory.create({"warehouse": warehouse}).get_table("db.loaded")
    rb = table.new_read_builder()
    got = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    assert sorted(got.column("id").to_pylist()) == list(range(100))
    assert table.partition_keys == ["dt"]
    assert "read back 100 rows" in capsys.readouterr().out


def test_json_values_are_plain_text_for_what_json_has_no_type_for() -> None:
    import datetime
    from decimal import Decimal

    from paimon_pyspark.cli.output import plain

    assert plain(
        {
            "t": datetime.datetime(2026, 11, 27, 1, 2, 3, 814000),
            "u": datetime.datetime(2026, 11, 27, 1, 2, 3, 5),
            "s": datetime.datetime(2026, 11, 27, 1, 2, 3),
            "d": datetime.date(2026, 11, 27),
            "n": Decimal("1.50"),
            "b": b"\x00\x01",
            "l": (1, None),
        }
    ) == {
        "t": "2026-11-27 01:02:03.814",
        "u": "2026-11-27 01:02:03.000005",
        "s": "2026-11-27 01:02:03",
        "d": "2026-11-27",
        "n": "1.50",
        "b": "AAE=",
        "l": [1, None],
    }
