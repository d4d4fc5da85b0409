"""Issue 41, item 2: a month of a batch warehouse, simulated with an injected clock.

A table partitioned by day keeps its partitions 7 days (``partition.expiration-time``, checked
at the end of every batch write: ``end-input.check-partition-expire``), tags every batch write
(``tag.automatic-creation = batch``, one tag a day) and keeps 5 tags (``tag.num-retained-max``),
and keeps few snapshots. Thirty daily batch jobs, each opening the table afresh, write one day
each while a ManualClock moves one day per job (store/clock.py: no sleep). Afterwards: exactly
7 partitions and 5 tags, every file on disk is used by a snapshot or a tag and every file they
use is there, and orphan cleaning finds nothing. tests/interop/test_month_warehouse_java.py
reads the same month with Java.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass

import pyarrow as pa
from tests.integration.orphan_damage import age
from tests.integration.table_helpers import read_all, sort_rows, write_commit
from tests.integration.test_expire import referenced_files

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.catalog.partitions import list_partitions
from paimon_pyspark.procedures import remove_orphan_files
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("amount", pa.int64()), ("dt", pa.string())])
OPTIONS = {
    "partition.expiration-time": "7 d",
    "partition.timestamp-formatter": "yyyy-MM-dd",
    "end-input.check-partition-expire": "true",
    "tag.automatic-creation": "batch",
    "tag.creation-period": "daily",
    "tag.num-retained-max": "5",
    "snapshot.num-retained.min": "1",
    "snapshot.num-retained.max": "3",
}
FIRST_DAY = dt.date(2026, 10, 1)
DAYS = 30
ROWS_PER_DAY = 4
NAME = "db.orders"


@dataclass(frozen=True)
class Month:
    table: FileStoreTable
    kept_days: list[str]
    expected_rows: list[dict[str, object]]


def day_rows(i: int) -> pa.Table:
    day = (FIRST_DAY + dt.timedelta(days=i)).isoformat()
    ids = [i * 100 + j for j in range(ROWS_PER_DAY)]
    return pa.table(
        {"id": ids, "amount": [n * 7 for n in ids], "dt": [day] * ROWS_PER_DAY}, schema=SCHEMA
    )


def simulate_month(catalog: FileSystemCatalog) -> Month:
    """Create the table and run the thirty daily jobs; the clock is back to real time after."""
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(NAME, Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=OPTIONS))
    noon = dt.datetime.combine(FIRST_DAY, dt.time(12, 0))
    clock = ManualClock(int(noon.timestamp() * 1000))
    with injected(clock):
        for i in range(DAYS):
            write_commit(catalog.get_table(NAME), day_rows(i))  # a daily job: a fresh handle
            clock.advance(days=1)
    kept = [(FIRST_DAY + dt.timedelta(days=i)).isoformat() for i in range(DAYS - 7, DAYS)]
    expected = sort_rows(pa.concat_tables([day_rows(i) for i in range(DAYS - 7, DAYS)]))
    return Month(catalog.get_table(NAME), kept, expected)


def snapshots_and_tags(table: FileStoreTable) -> list[Snapshot]:
    sm = table.snapshot_manager
    return [*(sm.snapshot(i) for i in sm.list_ids()), *table.tag_manager.tags().values()]


def files_on_disk(table: FileStoreTable) -> set[str]:
    """Data, manifest and index files: what snapshots and tags reference (not their own
    metadata: snapshot, schema and tag files and hints)."""
    out = set()
    for root, _, names in os.walk(table.path):
        top = os.path.relpath(root, table.path).split(os.sep)[0]
        if top in ("snapshot", "schema", "tag", "consumer", "changelog", "branch"):
            continue
        out |= {os.path.join(root, n) for n in names if not n.startswith(".")}
    return out


def test_a_month_of_daily_batches_keeps_seven_partitions_five_tags_and_no_unused_file(
    catalog: FileSystemCatalog,
) -> None:
    month = simulate_month(catalog)
    table = month.table

    partitions = sorted({str(r["dt"]) for r in read_all(table).to_pylist()})
    assert partitions == month.kept_days
    listed = sorted(p.spec["dt"] for p in list_partitions(table.store))
    assert listed == month.kept_days
    assert sort_rows(read_all(table)) == month.expected_rows

    tags = table.tag_manager.tags()
    last_five = [(FIRST_DAY + dt.timedelta(days=i)).isoformat() for i in range(DAYS - 5, DAYS)]
    assert sorted(tags) == [f"batch-write-{d}" for d in last_five]
    for name, snapshot in tags.items():  # each tag holds its day's write and the 6 days before
        day = dt.date.fromisoformat(name.removeprefix("batch-write-"))
        got = {str(r["dt"]) for r in read_all(table.copy({"scan.tag-name": name})).to_pylist()}
        assert max(got) == day.isoformat() and len(got) == 7, name
        # Java's order: a batch write tags after its commit's maintenance, so the tag holds
        # the OVERWRITE snapshot that dropped the partition expiring that day
        assert snapshot.commit_kind == "OVERWRITE", name

    sm = table.snapshot_manager
    assert len(sm.list_ids()) <= 3
    used: set[str] = set()
    for s in snapshots_and_tags(table):
        used |= referenced_files(table, s)
    assert not [f for f in used if not os.path.exists(f)], "a snapshot or tag lost a file"
    unused = files_on_disk(table) - used
    assert not unused, f"{len(unused)} expired files left: {sorted(unused)[:5]}"

    age(table.path)  # old enough for orphan cleaning's default cutoff (a day before now)
    dry = remove_orphan_files(catalog, NAME, dry_run=True)
    assert dry.deleted_file_count == 0, dry.deleted_files
    assert remove_orphan_files(catalog, NAME).deleted_file_count == 0
    # expiry leaves expired partitions' directories empty, as Java's does by default
    # (snapshot.clean-empty-directories); orphan cleaning removes them
    used_dirs = {os.path.relpath(f, table.path).split(os.sep)[0] for f in used}
    assert {d for d in os.listdir(table.path) if d.startswith("dt=")} <= used_dirs
    assert sort_rows(read_all(catalog.get_table(NAME))) == month.expected_rows
