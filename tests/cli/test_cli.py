"""The ``paimon-pyspark`` command line."""

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
    assert "demo" in out
    assert "load" in out


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
        ]
    )
    assert (args.input, args.table, args.create, args.partition_keys) == (
        "in.parquet",
        "db.t",
        True,
        "dt",
    )
    assert args.option == ["bucket=2", "bucket-key=id"]


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
