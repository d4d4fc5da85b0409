"""Our insert overwrites, read by Java Paimon 1.4.2 and pypaimon 2.1.

Each table kind (bucket-unaware and fixed-bucket append, primary-key, partitioned or not) gets a
dynamic overwrite, a partial static one, an empty static one and a whole-table one; after each,
Java reads the rows a plain-Python model says (also by time travel to the snapshot before), and
pypaimon reads the final rows. Java then writes upserts on top of our re-levelled primary-key
files (top-level files Java merges as one sorted run) and both sides still agree. Last, pypaimon
overwrites a table we wrote and we read its result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from pypaimon_oracle import PypaimonOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.pypaimon, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("dt", pa.string()), ("hr", pa.int32())])
Row = dict[str, Any]

CASES = [
    pytest.param({}, False, ("dt", "hr"), id="append-unaware"),
    pytest.param({"bucket": "2", "bucket-key": "id"}, False, ("dt", "hr"), id="append-fixed"),
    pytest.param({"bucket": "2"}, True, ("dt", "hr"), id="pk"),
    pytest.param({"bucket": "2", "file.format": "orc"}, True, (), id="pk-unpartitioned-orc"),
    pytest.param({}, False, (), id="append-unpartitioned"),
]


def rows_of(ids: range, v: int, dt: str, hr: int) -> list[Row]:
    return [{"id": i, "v": v, "dt": dt, "hr": hr} for i in ids]


class Model:
    def __init__(self, partition_keys: tuple[str, ...], primary_key: bool) -> None:
        self.keys = partition_keys
        self.pk = primary_key
        self.parts: dict[tuple[Any, ...], dict[Any, Row]] = {}
        self.n = 0

    def append(self, rows: list[Row]) -> None:
        for r in rows:
            self.n += 1
            part = tuple(r[k] for k in self.keys)
            self.parts.setdefault(part, {})[r["id"] if self.pk else self.n] = r

    def overwrite(self, rows: list[Row], static: dict[str, Any] | None, dynamic: bool) -> None:
        if static:
            doomed = [
                p for p in self.parts if all(p[self.keys.index(k)] == v for k, v in static.items())
            ]
        elif dynamic and self.keys:
            doomed = [tuple(r[k] for k in self.keys) for r in rows]
        else:
            doomed = list(self.parts)
        for p in set(doomed):
            self.parts.pop(p, None)
        self.append(rows)

    def rows(self) -> list[list[Any]]:
        return sorted_rows(
            [[r[n] for n in SCHEMA.names] for p in self.parts.values() for r in p.values()]
        )


def create(warehouse: Path, options: dict[str, str], pk: bool, keys: tuple[str, ...]) -> Any:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=list(keys),
            primary_keys=["id", *keys] if pk else [],
            options=options,
        ),
    )
    return catalog.get_table(f"{DB}.t")


def write(table: FileStoreTable, rows: list[Row], overwrite: dict[str, Any] | None = None) -> None:
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder.overwrite(overwrite)
    with builder.new_write() as w:
        if rows:
            w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
        builder.new_commit().commit(w.prepare_commit())


def ours(table: FileStoreTable) -> list[list[Any]]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted_rows([[r[n] for n in SCHEMA.names] for r in rows])


@pytest.mark.parametrize(("options", "pk", "keys"), CASES)
def test_java_and_pypaimon_read_our_overwrites(
    java_oracle: JavaOracle,
    pypaimon_oracle: PypaimonOracle,
    tmp_path: Path,
    options: dict[str, str],
    pk: bool,
    keys: tuple[str, ...],
) -> None:
    table = create(tmp_path, options, pk, keys)
    model = Model(keys, pk)
    for rows in (
        rows_of(range(0, 20), 1, "a", 1) + rows_of(range(20, 30), 1, "a", 2),
        rows_of(range(30, 40), 1, "b", 1) + rows_of(range(5, 10), 2, "a", 1),
    ):
        write(table, rows)
        model.append(rows)

    steps: list[tuple[list[Row], dict[str, Any] | None, bool]] = [
        (rows_of(range(100, 130), 3, "a", 1) + rows_of(range(200, 205), 3, "c", 4), None, True),
        (rows_of(range(300, 310), 4, "a", 9), {"dt": "a"} if keys else None, True),
        ([], {"dt": "c", "hr": 4} if keys else None, True),
        (rows_of(range(400, 420), 5, "d", 1), None, False),
    ]
    for rows, static, dynamic in steps:
        if not rows and not keys:
            continue  # an empty dynamic overwrite of an unpartitioned table commits nothing
        target = table if dynamic else table.copy({"dynamic-partition-overwrite": "false"})
        before = table.snapshot_manager.latest_id()
        expected_before = ours(table)
        write(target, rows, overwrite=static or {})
        model.overwrite(rows, static, dynamic)
        expected = model.rows()
        assert ours(table) == expected
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == expected
        old = java_oracle.read_table(tmp_path, DB, "t", before)
        assert sorted_rows(old.rows) == expected_before
    if pk:  # the last overwrite wrote one run per bucket: re-levelled to the top (6 - 1)
        latest = table.snapshot_manager.latest()
        assert {e.file.level for e in table.manifest_io.live_entries(latest)} == {5}
    kinds = [s["commitKind"] for s in java_oracle.snapshots(tmp_path, DB, "t")]
    assert kinds.count("OVERWRITE") == (4 if keys else 3)

    got = pypaimon_oracle.read(tmp_path, f"{DB}.t")
    assert sorted_rows([[r[n] for n in SCHEMA.names] for r in got.to_pylist()]) == model.rows()

    if pk:  # Java upserts on top of our re-levelled files and merges them as one sorted run
        more = rows_of(range(405, 415), 6, "d", 1) + rows_of(range(0, 3), 6, "e", 2)
        java_oracle.write_rows(tmp_path, DB, "t", [[r[n] for n in SCHEMA.names] for r in more])
        model.append(more)
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == model.rows()
        assert ours(table) == model.rows()


def test_we_read_pypaimons_overwrite_of_our_table(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    table = create(tmp_path, {"bucket": "2", "bucket-key": "id"}, False, ("dt", "hr"))
    model = Model(("dt", "hr"), False)
    seed = rows_of(range(0, 10), 1, "a", 1) + rows_of(range(10, 20), 1, "b", 2)
    write(table, seed)
    model.append(seed)
    new = rows_of(range(50, 55), 2, "a", 1)
    pypaimon_oracle.write(
        tmp_path, f"{DB}.t", pa.Table.from_pylist(new, schema=SCHEMA), overwrite=True
    )
    model.overwrite(new, None, dynamic=True)
    assert ours(table) == model.rows()
    assert table.snapshot_manager.latest().commit_kind == "OVERWRITE"  # type: ignore[union-attr]


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_our_overwrite_replaces_files_java_wrote(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool
) -> None:
    options = {"bucket": "2", "write-only": "true"}
    table = create(tmp_path, options if pk else {**options, "bucket-key": "id"}, pk, ("dt", "hr"))
    model = Model(("dt", "hr"), pk)
    java_rows = rows_of(range(0, 10), 1, "a", 1) + rows_of(range(10, 15), 1, "b", 2)
    java_oracle.write_rows(tmp_path, DB, "t", [[r[n] for n in SCHEMA.names] for r in java_rows])
    model.append(java_rows)

    new = rows_of(range(100, 104), 2, "a", 1)
    write(table, new, overwrite={})
    model.overwrite(new, None, dynamic=True)
    assert ours(table) == model.rows()
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == model.rows()

    write(table, [], overwrite={"dt": "b", "hr": "2"})
    model.overwrite([], {"dt": "b", "hr": 2}, dynamic=True)
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == model.rows()
