"""pypaimon 2.1 reads the branches we make: ``db.t$branch_b`` (its own snapshots, the shared
data files) as we read it, before and after a fast-forward publishes it onto main."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from pypaimon_oracle import PypaimonOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


def _write(table: FileStoreTable, ids: list[int]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _ids(table: pa.Table) -> list[int]:
    return sorted(table.column("id").to_pylist())


def test_pypaimon_reads_our_branch_and_its_fast_forward(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db")
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    main = catalog.get_table("db.t")
    _write(main, [1])
    main.create_tag("v1")
    _write(main, [2])
    catalog.create_branch("db.t", "b", "v1")
    _write(catalog.get_table("db.t$branch_b"), [10])
    assert _ids(pypaimon_oracle.read(tmp_path, "db.t$branch_b")) == [1, 10]
    assert _ids(pypaimon_oracle.read(tmp_path, "db.t")) == [1, 2]
    catalog.fast_forward("db.t", "b")
    assert _ids(pypaimon_oracle.read(tmp_path, "db.t")) == [1, 10]
