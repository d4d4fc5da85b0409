"""Java Paimon 1.4.2 reads a table our sort compaction rewrote, row for row, sees the COMPACT
snapshot, and its own scan skips the files a filter on the sort column cannot match."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("x", pa.int32()),
        ("name", pa.string()),
        ("dt", pa.string()),
    ]
)


def ours(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


@pytest.mark.parametrize("strategy", ["order", "zorder", "hilbert"])
def test_java_reads_a_sort_compacted_table(
    java_oracle: JavaOracle, tmp_path: Path, strategy: str
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database(DB, ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], options={"target-file-size": "4 kb"}
    )
    catalog.create_table(f"{DB}.t", schema)
    table = catalog.get_table(f"{DB}.t")
    rng = np.random.default_rng(5)
    for dt in ("a", "b"):
        for part in np.array_split(rng.permutation(2000), 3):
            ids = part.astype(np.int64)
            data = pa.table(
                {
                    "id": ids,
                    "x": (ids % 50).astype(np.int32),
                    "name": [None if i % 97 == 0 else f"n{i}" for i in ids],
                    "dt": [dt] * len(ids),
                },
                schema=SCHEMA,
            )
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(data)
                messages = write.prepare_commit()
            builder.new_commit().commit(messages)
    before = java_oracle.plan_files(tmp_path, DB, "t", "id", "equal", 777)

    sid = compact(catalog, f"{DB}.t", "", strategy, "id,x" if strategy != "order" else "id")
    assert sid is not None

    java = java_oracle.read_table(tmp_path, DB, "t")
    assert sorted_rows(java.rows) == ours(table)
    assert len(java.rows) == 4000
    kinds = [s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, "t")]
    assert kinds[-1] == "COMPACT"
    after = java_oracle.plan_files(tmp_path, DB, "t", "id", "equal", 777)
    print(f"{strategy}: Java's scan for id = 777 keeps {len(before)} -> {len(after)} file(s)")
    assert len(after) < len(before)
    if strategy == "order":
        assert len(after) == 2  # one file in each partition holds id 777
