"""Dictionary encoding only where it pays, as Java's Parquet writer ends up choosing: unique
keys, random doubles and hashes are stored plain (smaller, faster to read), repeated values
with a dictionary."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from paimon_pyspark.format.writers import FormatWriter, dictionary_columns
from paimon_pyspark.fs.local import LocalFileIO
from paimon_pyspark.types.data_types import DataField

N = 50_000


def _table() -> pa.Table:
    rng = np.random.default_rng(16)
    ids = np.arange(N, dtype=np.int64)
    return pa.table(
        {
            "id": ids,
            "v": rng.random(N),
            "hash": pa.array([f"{x:016x}" for x in rng.integers(0, 2**63, N)]),
            "day": pa.array([f"2026-11-{i % 30 + 1:02d}" for i in range(N)]),
            "small": pa.array(ids % 7),
            "flag": pa.array(ids % 2 == 0),
            "empty": pa.array([None] * N, pa.string()),
        }
    )


def test_dictionary_is_chosen_only_where_it_is_smaller() -> None:
    assert dictionary_columns(_table()) == ["day", "small", "empty"]
    assert dictionary_columns(_table().slice(0, 0)) == []


def test_written_file_uses_the_choice_and_is_smaller(tmp_path: str) -> None:
    table = _table()
    path = os.path.join(str(tmp_path), "data-0.parquet")
    fields = [DataField(i, f.name, None) for i, f in enumerate(table.schema)]  # type: ignore[arg-type]
    writer = FormatWriter(LocalFileIO(), path, table.schema, "parquet", "zstd", 1, fields)
    writer.write(table)
    size = writer.close()
    meta = pq.ParquetFile(path).metadata.row_group(0)
    encodings = {meta.column(i).path_in_schema: meta.column(i).encodings for i in range(7)}
    assert not any("DICTIONARY" in e for e in encodings["id"] + encodings["v"] + encodings["hash"])
    assert any("DICTIONARY" in e for e in encodings["day"])
    assert any("DICTIONARY" in e for e in encodings["small"])
    all_dict = os.path.join(str(tmp_path), "all-dict.parquet")
    pq.write_table(table, all_dict, compression="zstd", compression_level=1)
    assert size < os.path.getsize(all_dict)
    assert pq.read_table(path).equals(table)
