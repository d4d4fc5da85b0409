"""Automatic tags and tag expiry between Java Paimon 1.4.2 and us: the same snapshots give the
same tags (names, tagged snapshot ids, retention) whether Java's TagAutoManager or
TagBatchCreation makes them or our commit maintenance does; Java expires the tags we wrote and
we expire Java's; batch tags made alternately by each side end as one side's alone."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle
from tag_auto_oracle import (
    batch_create_tag,
    commit_with_watermarks,
    expire_tags,
    tags,
    trigger_auto_creation,
)

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.maintenance.tag_automatic import create_tags_after_commit
from paimon_pyspark.procedures import expire_tags as our_expire_tags
from paimon_pyspark.procedures import trigger_tag_automatic_creation
from paimon_pyspark.store.clock import ManualClock, injected

pytestmark = pytest.mark.java

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
START_MS = int(dt.datetime(2024, 1, 1, 20, 0, tzinfo=dt.UTC).timestamp() * 1000)
DAY_MS = 86_400_000


def _setup(tmp_path: Path) -> tuple[str, FileSystemCatalog]:
    warehouse = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    return warehouse, catalog


def _make(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, options=options))
    return catalog.get_table(f"db.{name}")


def _commit(table: FileStoreTable, i: int) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _ids(found: dict[str, dict[str, object]]) -> dict[str, object]:
    return {n: t["snapshot"] for n, t in found.items()}


def test_process_time_tags_are_javas_and_each_side_expires_the_others(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    warehouse, catalog = _setup(tmp_path)
    options = {
        "tag.automatic-creation": "process-time",
        "tag.num-retained-max": "3",
        "tag.default-time-retained": "5 d",
        "sink.process-time-zone": "UTC",
    }
    ours = _make(catalog, "ours", options)
    plain = _make(catalog, "java", {**options, "write-only": "true"})
    clock = ManualClock(START_MS)
    with injected(clock):
        for day in range(6):
            for t in (ours, plain):
                _commit(t, day)
                if day == 2:
                    _commit(t, 100 + day)
            clock.advance(days=1)
    javas = trigger_auto_creation(java_oracle, warehouse, "db", "java", None)
    assert _ids(javas) == {n: s.id for n, s in ours.store.tag_manager.tags().items()}
    assert _ids(javas) == {"2024-01-03": 5, "2024-01-04": 6, "2024-01-05": 7}
    ours_seen_by_java = tags(java_oracle, warehouse, "db", "ours")
    for name, tag in javas.items():
        assert tag["timeRetainedMillis"] == 5 * DAY_MS
        assert ours_seen_by_java[name]["timeRetainedMillis"] == 5 * DAY_MS
    # our tags were created on the 4th to the 6th of January by the injected clock
    assert ours_seen_by_java["2024-01-03"]["createTime"] == "2024-01-04T20:00"

    # Java's clock is real: our tags (created in January 2024, kept 5 days) are past their
    # retention there, and Java's (created now) are past it on our clock 6 days on
    assert sorted(expire_tags(java_oracle, warehouse, "db", "ours")) == sorted(javas)
    with injected(ManualClock(int(dt.datetime.now().timestamp() * 1000) + 6 * DAY_MS)):
        assert sorted(our_expire_tags(catalog, "db.java")) == sorted(javas)
    assert tags(java_oracle, warehouse, "db", "java") == {}


def test_watermark_tags_on_javas_snapshots_are_javas(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    warehouse, catalog = _setup(tmp_path)
    options = {"tag.automatic-creation": "watermark", "tag.creation-period": "two-hours"}
    _make(catalog, "wm", {**options, "write-only": "true"})
    hour = 3_600_000
    marks = [START_MS + m for m in (30 * 60_000, 2 * hour, 3 * hour + 5, 7 * hour)]
    commit_with_watermarks(
        java_oracle, warehouse, "db", "wm", [([[i, f"v{i}"]], w) for i, w in enumerate(marks)]
    )
    wm = Path(catalog.get_table("db.wm").path)
    shutil.copytree(wm, wm.parent / "mine")
    javas = trigger_auto_creation(java_oracle, warehouse, "db", "wm", None)
    trigger_tag_automatic_creation(catalog, "db.mine")
    mine = catalog.get_table("db.mine").store.tag_manager.tags()
    assert _ids(javas) == {n: s.id for n, s in mine.items()}
    assert _ids(javas) == {"2024-01-01 18": 1, "2024-01-01 20": 2, "2024-01-02 00": 4}


def test_batch_tags_made_by_either_side_are_one_sides(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Day by day, Java's TagBatchCreation and ours take turns on one table; another table
    gets the same commits with our maintenance alone; both end with the same tags. Names go
    by the snapshot's day in ``sink.process-time-zone`` (20:00 UTC is the next day there)."""
    warehouse, catalog = _setup(tmp_path)
    options = {
        "tag.automatic-creation": "batch",
        "tag.num-retained-max": "2",
        "sink.process-time-zone": "Asia/Shanghai",
    }
    ours = _make(catalog, "ours", options)
    mixed = _make(catalog, "mixed", {**options, "write-only": "true"})
    clock = ManualClock(START_MS)
    with injected(clock):
        for day in range(4):
            for t in (ours, mixed):
                _commit(t, day)
                if day == 1:
                    _commit(t, 10 + day)
            if day % 2:
                batch_create_tag(java_oracle, warehouse, "db", "mixed", None)
            else:
                create_tags_after_commit(mixed.store)
            clock.advance(days=1)
    expected = {"batch-write-2024-01-04": 4, "batch-write-2024-01-05": 5}
    assert {n: s.id for n, s in ours.store.tag_manager.tags().items()} == expected
    assert _ids(tags(java_oracle, warehouse, "db", "mixed")) == expected
    rows = java_oracle.read_tag(warehouse, "db", "ours", "batch-write-2024-01-04")
    assert sorted(r[0] for r in rows) == [0, 1, 2, 11]


@pytest.mark.parametrize(
    ("options", "step_hours", "commits"),
    [
        (
            {
                "tag.creation-period": "hourly",
                "tag.period-formatter": "without_dashes",
                "tag.creation-delay": "10 min",
            },
            7,
            8,
        ),
        (
            {"tag.creation-period": "two-hours", "tag.automatic-completion": "true"},
            5,
            8,
        ),
        ({"tag.creation-period": "daily", "tag.period-formatter": "without_dashes"}, 30, 6),
    ],
    ids=["hourly-delay-formatter", "two-hours-completion", "daily-formatter"],
)
def test_process_time_options_make_javas_tags(
    java_oracle: JavaOracle,
    tmp_path: Path,
    options: dict[str, str],
    step_hours: int,
    commits: int,
) -> None:
    """The period, formatter, delay and completion options: our commits' tags are the tags
    Java's TagAutoManager makes of the same snapshots."""
    warehouse, catalog = _setup(tmp_path)
    options = {
        **options,
        "tag.automatic-creation": "process-time",
        "sink.process-time-zone": "UTC",
    }
    ours = _make(catalog, "ours", options)
    plain = _make(catalog, "java", {**options, "write-only": "true"})
    clock = ManualClock(START_MS)
    with injected(clock):
        for i in range(commits):
            for t in (ours, plain):
                _commit(t, i)
            clock.advance(hours=step_hours)
    javas = trigger_auto_creation(java_oracle, warehouse, "db", "java", None)
    assert javas, "Java made no tag"
    assert _ids(javas) == {n: s.id for n, s in ours.store.tag_manager.tags().items()}
