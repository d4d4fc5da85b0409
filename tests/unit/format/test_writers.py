"""Parquet data files keep a dictionary only where it pays (parquet-mr's rule, which Java's and
Spark's files follow) and carry no ARROW:schema footer entry."""

from __future__ import annotations

import gc
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.local import LocalFileIO

ROWS = 50_000


def _table() -> pa.Table:
    rng = np.random.default_rng(7)
    ids = np.arange(ROWS, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "k": pa.array(ids % 10, pa.int32()),
            "v": rng.random(ROWS),
            "s": [f"s-{i}" for i in ids],
            "t": [f"t-{i % 7}" for i in ids],
            "b": ids % 2 == 0,
            "n": pa.nulls(ROWS, pa.string()),
        }
    )


def _write(path: Path, table: pa.Table, chunks: int = 1) -> int:
    writer = FormatWriter(LocalFileIO(), str(path), table.schema, "parquet", "zstd", 1, [])
    step = -(-table.num_rows // chunks)
    for start in range(0, table.num_rows, step):
        writer.write(table.slice(start, step))
    return writer.close()


def _dictionary_encoded(path: Path) -> dict[str, bool]:
    row_group = pq.ParquetFile(path).metadata.row_group(0)
    return {
        row_group.column(i).path_in_schema: row_group.column(i).has_dictionary_page
        for i in range(row_group.num_columns)
    }


def test_distinct_columns_are_plain_and_repeated_ones_keep_their_dictionary(
    tmp_path: Path,
) -> None:
    table = _table()
    size = _write(tmp_path / "f.parquet", table, chunks=3)
    encoded = _dictionary_encoded(tmp_path / "f.parquet")
    assert {c for c, d in encoded.items() if d} == {"k", "t", "n"}
    assert pq.read_table(tmp_path / "f.parquet").equals(table)
    pq.write_table(table, tmp_path / "default.parquet", compression="zstd", compression_level=1)
    assert size < 0.85 * (tmp_path / "default.parquet").stat().st_size


def test_no_arrow_schema_in_the_footer(tmp_path: Path) -> None:
    _write(tmp_path / "f.parquet", _table())
    metadata = pq.ParquetFile(tmp_path / "f.parquet").metadata.metadata or {}
    assert b"ARROW:schema" not in metadata


def test_nested_columns_keep_pyarrows_dictionary(tmp_path: Path) -> None:
    ids = np.arange(ROWS, dtype=np.int64)
    table = pa.table({"id": ids, "tags": [[f"x-{i % 3}"] for i in ids]})
    _write(tmp_path / "f.parquet", table)
    assert all(_dictionary_encoded(tmp_path / "f.parquet").values())
    assert pq.read_table(tmp_path / "f.parquet").equals(table)


def test_an_empty_file_is_still_a_parquet_file(tmp_path: Path) -> None:
    schema = _table().schema
    writer = FormatWriter(
        LocalFileIO(), str(tmp_path / "f.parquet"), schema, "parquet", "zstd", 1, []
    )
    assert writer.close() == (tmp_path / "f.parquet").stat().st_size
    assert pq.read_table(tmp_path / "f.parquet").num_rows == 0


def test_an_aborted_file_is_gone_and_its_buffered_bytes_go_nowhere(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Arrow's buffered sink still holds the aborted file's last bytes; they must not reach the
    closed stream (Arrow would log the failed write when it drops the sink)."""
    path = tmp_path / "f.parquet"
    table = _table()
    writer = FormatWriter(LocalFileIO(), str(path), table.schema, "parquet", "zstd", 1, [])
    writer.write(table)
    writer.abort()
    del writer
    gc.collect()
    assert not path.exists()
    assert "Error ignored" not in capfd.readouterr().err
