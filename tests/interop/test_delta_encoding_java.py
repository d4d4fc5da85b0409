"""Integer, date and timestamp columns we write DELTA_BINARY_PACKED (format/writers.py's
``_encodings``) read back equal in Java Paimon 1.4.2 and pypaimon: every integer width, dates and
timestamps, nulls, and steps that wrap a long (the extremes come after the rows that chose the
encoding, so the file holds them delta-encoded). Key-value files are never delta-encoded: their
sizes steer universal compaction, whose picks must stay Java's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from pypaimon_oracle import PypaimonOracle

import paimon_pyspark
from paimon_pyspark.format.writers import _DICTIONARY_SAMPLE

pytestmark = [pytest.mark.java, pytest.mark.slow]

HALF = _DICTIONARY_SAMPLE + 5_000
"""Rows per partition (one file each): the encoding is chosen on the first _DICTIONARY_SAMPLE."""
EARLIEST_MICROS = -62_135_596_800_000_000 + 86_400_000_000  # 0001-01-02
LATEST_MICROS = 253_402_214_400_000_000 - 86_400_000_000  # 9999-12-31
DELTA = ["id", "big", "i32", "i16", "day", "ts3", "ts6", "tz"]  # i8 keeps a dictionary


def _data() -> pa.Table:
    rng = np.random.default_rng(11)
    n = 2 * HALF
    ids = np.arange(n, dtype=np.int64)
    tail = ids % HALF >= _DICTIONARY_SAMPLE  # after the rows that choose the file's encoding

    def wild(values: np.ndarray, low: int, high: int) -> np.ndarray:
        out = values.copy()
        out[tail & (ids % 7 == 0)] = low
        out[tail & (ids % 7 == 3)] = high
        return out

    big = wild(ids * 1_000 + rng.integers(0, 50, n), -(2**63), 2**63 - 1)
    i32 = wild((ids * 3).astype(np.int64), -(2**31), 2**31 - 1).astype(np.int32)
    i16 = wild(ids % 30_000, -(2**15), 2**15 - 1).astype(np.int16)
    i8 = wild(ids % 100, -128, 127).astype(np.int8)
    days = ids % 40_000 - 20_000
    micros = 1_700_000_000_000_000 + ids * 1_000_003
    return pa.table(
        {
            "id": pa.array(ids),
            "big": pa.array(big, mask=tail & (ids % 11 == 0)),
            "i32": pa.array(i32, mask=ids % 13 == 5),
            "i16": pa.array(i16),
            "i8": pa.array(i8),
            "day": pa.array(days.astype(np.int32), pa.date32()),
            "ts3": pa.array(micros // 1_000, pa.timestamp("ms")),
            "ts6": pa.array(wild(micros, EARLIEST_MICROS, LATEST_MICROS), pa.timestamp("us")),
            "tz": pa.array(micros, pa.timestamp("us", tz="UTC")),
            "p": pa.array(np.where(ids < HALF, "a", "b")),
        }
    )


def _write(warehouse: Path, primary_key: bool) -> pa.Table:
    data = _data()
    catalog = paimon_pyspark.CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", False)
    schema = paimon_pyspark.Schema.from_pyarrow_schema(
        data.schema,
        partition_keys=["p"],
        primary_keys=["id", "p"] if primary_key else None,
        options={"bucket": "1"} if primary_key else None,
    )
    if primary_key:
        data = data.set_column(0, pa.field("id", pa.int64(), nullable=False), data.column("id"))
        data = data.set_column(9, pa.field("p", pa.string(), nullable=False), data.column("p"))
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())
    return data


def _delta_columns(warehouse: Path) -> set[str]:
    files = sorted((warehouse / "db.db" / "t").glob("p=*/bucket-*/*.parquet"))
    assert files
    delta: set[str] = set()
    for f in files:
        meta = pq.ParquetFile(f).metadata
        for i in range(meta.num_columns):
            column = meta.row_group(0).column(i)
            if "DELTA_BINARY_PACKED" in column.encodings:
                delta.add(column.path_in_schema)
    return delta


def test_java_and_pypaimon_read_our_delta_encoded_columns(
    java_oracle: JavaOracle, pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    data = _write(tmp_path, primary_key=False)
    assert set(DELTA) <= _delta_columns(tmp_path)
    expected = sorted_rows(canonical_rows(data))
    java = java_oracle.read_table(tmp_path, "db", "t")
    assert java.fields == data.column_names
    assert sorted_rows(java.rows) == expected
    ours = pypaimon_oracle.read(tmp_path, "db.t").select(data.column_names)
    assert sorted_rows(canonical_rows(ours)) == expected


def test_key_value_files_are_not_delta_encoded(tmp_path: Path) -> None:
    _write(tmp_path, primary_key=True)
    assert _delta_columns(tmp_path) == set()
