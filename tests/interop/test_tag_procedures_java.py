"""The tag procedures by time and watermark against Java Paimon 1.4.2, both ways
(procedures/timestamp_calls.py; the Java side runs the core calls of Java's procedures,
tests/interop/java/TagProceduresOracle.java).

Each test copies one table into a twin warehouse; we run a procedure on the original, Java on
the twin; then the two answer the same row, hold the same snapshots and tags, and each side
reads the other's table equal to its own. Our four snapshot searches answer Java's for the same
values on a table we committed (times) and on one Java committed with watermarks. Java's
replaceTag and renameTag on our table leave tags we read as Java reads them.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pytest
import tag_procedures_oracle as jtags
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.procedures import (
    create_tag,
    create_tag_from_timestamp,
    create_tag_from_watermark,
    expire_snapshots,
    rollback_to_timestamp,
    rollback_to_watermark,
)
from paimon_pyspark.procedures.timestamp_calls import (
    earlier_or_equal_watermark,
    later_or_equal_time,
    later_or_equal_watermark,
)
from paimon_pyspark.read.incremental import earlier_or_equal
from paimon_pyspark.store.clock import ManualClock, injected

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
T0 = 1_700_000_000_000
STEP = 60_000


def at(i: int) -> int:
    return T0 + (i - 1) * STEP


def catalog_at(warehouse: Path) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    return catalog


def our_rows(table: FileStoreTable) -> list[list[object]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def our_searches(table: FileStoreTable, values: list[int]) -> dict[str, list[int | str | None]]:
    sm = table.snapshot_manager
    out: dict[str, list[int | str | None]] = {}
    searches = {
        "laterTime": later_or_equal_time,
        "earlierTime": earlier_or_equal,
        "laterWatermark": later_or_equal_watermark,
        "earlierWatermark": earlier_or_equal_watermark,
    }
    for kind, search in searches.items():
        ids: list[int | str | None] = []
        for v in values:
            try:
                found = search(sm, v)
            except Exception:  # Java's NullPointerException without a watermark
                ids.append("NullPointerException")
                continue
            ids.append(None if found is None else found.id)
        out[kind] = ids
    return out


def same_state(java_oracle: JavaOracle, ours: Path, twin: Path) -> None:
    """Same snapshots, same tags (ids, retention), and each side reads both tables equal."""
    assert java_oracle.snapshots(ours, "db", "t") == java_oracle.snapshots(twin, "db", "t")
    assert jtags.tags(java_oracle, ours, "db", "t") == jtags.tags(java_oracle, twin, "db", "t")
    java = sorted_rows(java_oracle.read_table(ours, "db", "t").rows)
    assert sorted_rows(java_oracle.read_table(twin, "db", "t").rows) == java
    assert our_rows(catalog_at(ours).get_table("db.t")) == java
    assert our_rows(catalog_at(twin).get_table("db.t")) == java


def test_by_commit_time_as_java(java_oracle: JavaOracle, tmp_path: Path) -> None:
    ours, twin = tmp_path / "ours", tmp_path / "twin"
    catalog = catalog_at(ours)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA))
    table = catalog.get_table("db.t")
    clock = ManualClock(T0)
    with injected(clock):
        for i in range(1, 7):
            builder = table.new_batch_write_builder()
            with builder.new_write() as write:
                write.write_arrow(pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))
                builder.new_commit().commit(write.prepare_commit())
            clock.advance(millis=STEP)
    create_tag(catalog, "db.t", "two", 2)
    expire_snapshots(catalog, "db.t", retain_max=3, retain_min=3, older_than="2999-01-01 00:00:00")
    assert table.snapshot_manager.list_ids() == [4, 5, 6]

    values = [0, at(1), at(2), at(2) + 1, at(4) - 1, at(4), at(5) + 7, at(6), at(6) + 1]
    java = jtags.searches(java_oracle, ours, "db", "t", values)
    assert {k: java[k] for k in ("laterTime", "earlierTime")} == {
        "laterTime": [4, 4, 4, 4, 4, 4, 6, 6, None],
        "earlierTime": [None, None, None, None, None, 4, 5, 6, 6],
    }
    assert our_searches(table, values) == java

    shutil.copytree(ours, twin)
    for tag, ts, retained in (("a", at(1), None), ("b", at(4) + 1, "12 h"), ("c", 0, "1 d")):
        got = create_tag_from_timestamp(catalog, "db.t", tag, ts, retained)
        want = jtags.create_tag_from_timestamp(java_oracle, twin, "db", "t", tag, ts, retained)
        assert got._asdict() == {
            "tag_name": want["tagName"],
            "snapshot": want["snapshot"],
            "commit_time": want["commit_time"],
            "watermark": want["watermark"],
        }
    assert jtags.tags(java_oracle, ours, "db", "t")["a"] == {"snapshot": 2, "retained": None}
    assert jtags.tags(java_oracle, twin, "db", "t")["b"] == {"snapshot": 5, "retained": "PT12H"}
    same_state(java_oracle, ours, twin)

    assert tuple(rollback_to_timestamp(catalog, "db.t", at(5) + 1)) == (6, 5)
    assert jtags.rollback_to_timestamp(java_oracle, twin, "db", "t", at(5) + 1) == (6, 5)
    same_state(java_oracle, ours, twin)

    # Java's replaceTag and renameTag on our table: we read their tags as Java does
    jtags.replace_tag(java_oracle, ours, "db", "t", "a", 4, "2 h")
    jtags.rename_tag(java_oracle, ours, "db", "t", "a", "four")
    mine = catalog_at(ours).get_table("db.t")
    assert mine.list_tags() == ["b", "c", "four", "two"]
    # Java's Tag has no uuid (ours keeps the snapshot's): all else is snapshot 4's
    assert mine.tag_manager.get("four") == replace(mine.snapshot_manager.snapshot(4), uuid=None)
    assert jtags.tags(java_oracle, ours, "db", "t")["four"] == {"snapshot": 4, "retained": "PT2H"}
    at_four = mine.copy({"scan.tag-name": "four"})
    assert our_rows(at_four) == sorted_rows(java_oracle.read_tag(ours, "db", "t", "four"))


def test_by_watermark_as_java(java_oracle: JavaOracle, tmp_path: Path) -> None:
    ours, twin = tmp_path / "ours", tmp_path / "twin"
    java_oracle.create_table(ours, "db", "t", [("id", "BIGINT"), ("v", "STRING")])
    marks = [None, None, 10, 10, 25, 40]
    batches = [{"rows": [[i, f"v{i}"]], "watermark": m} for i, m in enumerate(marks, 1)]
    assert jtags.commit_with_watermarks(java_oracle, ours, "db", "t", batches) == 6
    catalog = catalog_at(ours)
    table = catalog.get_table("db.t")
    assert [table.snapshot_manager.snapshot(i).watermark for i in range(1, 7)] == [
        None,
        None,
        10,
        10,
        25,
        40,
    ]

    values = [-5, 0, 10, 11, 25, 26, 40, 41]
    java = jtags.searches(java_oracle, ours, "db", "t", values)
    assert {k: java[k] for k in ("laterWatermark", "earlierWatermark")} == {
        "laterWatermark": [3, 3, 3, 5, 5, 6, 6, None],
        "earlierWatermark": [3, 3, 3, 4, 5, 5, 6, 6],
    }
    ours_found = our_searches(table, values)
    assert {k: ours_found[k] for k in ("laterWatermark", "earlierWatermark")} == {
        k: java[k] for k in ("laterWatermark", "earlierWatermark")
    }

    shutil.copytree(ours, twin)
    for tag, mark in (("w11", 11), ("w40", 40)):
        got = create_tag_from_watermark(catalog, "db.t", tag, mark)
        want = jtags.create_tag_from_watermark(java_oracle, twin, "db", "t", tag, mark)
        assert (got.tag_name, got.snapshot, got.commit_time, got.watermark) == (
            want["tagName"],
            want["snapshot"],
            want["commit_time"],
            want["watermark"],
        )
    assert table.tag_manager.get("w11") == table.snapshot_manager.snapshot(5)

    assert tuple(rollback_to_watermark(catalog, "db.t", 26)) == (6, 5)
    assert jtags.rollback_to_watermark(java_oracle, twin, "db", "t", 26) == (6, 5)
    same_state(java_oracle, ours, twin)
    assert tuple(rollback_to_watermark(catalog, "db.t", -5)) == (5, 3)  # Java's quirk: the first
    assert jtags.rollback_to_watermark(java_oracle, twin, "db", "t", -5) == (5, 3)
    same_state(java_oracle, ours, twin)
