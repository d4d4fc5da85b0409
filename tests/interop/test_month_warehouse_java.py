"""Issue 41, item 2, read by Java 1.4.2: the month of daily batch writes that
tests/integration/test_month_warehouse.py simulates (7 partitions and 5 tags left) reads the
same rows in Java, latest and at every tag, Java finds the same tags on the same snapshots,
and Java's own orphan cleaning finds no file the table does not use, whatever its age."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
from java_oracle import JavaOracle, canonical_rows, list_tags, remove_orphan_files, sorted_rows
from tests.integration.table_helpers import read_all
from tests.integration.test_month_warehouse import simulate_month

from paimon_pyspark import CatalogFactory


def _rows(table: pa.Table) -> list[list[object]]:
    return sorted_rows(canonical_rows(table))


def test_java_reads_the_simulated_month_as_we_do(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    month = simulate_month(catalog)
    table = month.table
    java = java_oracle.read_table(tmp_path, "db", "orders")
    assert sorted_rows(java.rows) == _rows(read_all(table))
    assert len(java.rows) == len(month.expected_rows)

    ours = {name: s.id for name, s in table.tag_manager.tags().items()}
    assert len(ours) == 5
    assert list_tags(java_oracle, tmp_path, "db", "orders").ids == ours
    for name in ours:
        tagged = read_all(table.copy({"scan.tag-name": name}))
        assert sorted_rows(java_oracle.read_tag(tmp_path, "db", "orders", name)) == _rows(tagged)

    far_future = 4_102_444_800_000  # 2100-01-01: every unused file would count, however new
    orphans = remove_orphan_files(java_oracle, tmp_path, "db", "orders", far_future, dry_run=True)
    assert orphans.count == 0, orphans.paths
