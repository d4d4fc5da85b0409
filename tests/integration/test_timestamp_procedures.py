"""Tags and rollbacks by commit time (procedures/timestamp_calls.py: Java's
CreateTagFromTimestampProcedure and RollbackToTimestampProcedure), on snapshots committed under
an injected clock, and their CLI commands with the tag commands that had none."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from tests.cli.helpers import run_error, run_json
from tests.integration.table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, TagAlreadyExistError
from paimon_pyspark.procedures import (
    CreateTagResult,
    create_tag,
    create_tag_from_timestamp,
    create_tag_from_watermark,
    expire_snapshots,
    rollback_to_timestamp,
    rollback_to_watermark,
)
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
T0 = 1_700_000_000_000
STEP = 60_000
"""Snapshot ``i`` is committed at ``T0 + (i - 1) * STEP``."""


def five(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options={"write-only": "true"}))
    table = catalog.get_table("db.t")
    clock = ManualClock(T0)
    with injected(clock):
        for i in range(1, 6):
            write_commit(table, pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))
            clock.advance(millis=STEP)
    return table


def at(i: int) -> int:
    return T0 + (i - 1) * STEP


def tag_json(table: FileStoreTable, name: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(Path(table.path, "tag", f"tag-{name}").read_text())
    return data


def test_create_tag_from_timestamp_takes_the_first_snapshot_at_or_after(
    catalog: FileSystemCatalog,
) -> None:
    table = five(catalog)
    assert [s.time_millis for s in map(table.snapshot_manager.snapshot, range(1, 6))] == [
        at(i) for i in range(1, 6)
    ]
    got = create_tag_from_timestamp(catalog, "db.t", "exact", at(3))
    assert got == CreateTagResult("exact", 3, at(3), "null")
    assert create_tag_from_timestamp(catalog, "db.t", "between", at(3) + 1).snapshot == 4
    assert create_tag_from_timestamp(catalog, "db.t", "before", "1").snapshot == 1
    # Spark's optional timestamp, read as 0 when missing
    assert create_tag_from_timestamp(catalog, "db.t", "missing").snapshot == 1
    assert "tagTimeRetained" not in tag_json(table, "exact")  # no table default applied
    create_tag_from_timestamp(catalog, "db.t", "kept", str(at(5)), "1 d")
    assert tag_json(table, "kept")["tagTimeRetained"] == 86400.0
    with pytest.raises(InvalidArgumentError, match="Could not find any snapshot"):
        create_tag_from_timestamp(catalog, "db.t", "late", at(5) + 1)
    with pytest.raises(TagAlreadyExistError, match="'exact' already exists"):
        create_tag_from_timestamp(catalog, "db.t", "exact", at(2))
    with pytest.raises(InvalidArgumentError, match="BIGINT"):
        create_tag_from_timestamp(catalog, "db.t", "x", "yesterday")
    assert table.tag_manager.get("exact") == table.snapshot_manager.snapshot(3)


def test_a_tag_of_an_expired_snapshot_wins_when_committed_earlier(
    catalog: FileSystemCatalog,
) -> None:
    table = five(catalog)
    create_tag(catalog, "db.t", "two", 2)
    expire_snapshots(catalog, "db.t", retain_max=2, retain_min=2, older_than="2999-01-01 00:00:00")
    assert table.snapshot_manager.list_ids() == [4, 5]
    # snapshot 4 is the first live one at or after at(1); tag 'two' (snapshot 2) is earlier
    assert create_tag_from_timestamp(catalog, "db.t", "again", at(1)).snapshot == 2
    assert table.tag_manager.get("again") == table.tag_manager.get("two")
    # past the tag's commit time the live snapshot is found
    assert create_tag_from_timestamp(catalog, "db.t", "four", at(2) + 1).snapshot == 4


def test_rollback_to_timestamp_rolls_back_to_the_last_snapshot_at_or_before(
    catalog: FileSystemCatalog,
) -> None:
    table = five(catalog)
    three = sort_rows(read_all(table.copy({"scan.snapshot-id": "3"})))
    assert tuple(rollback_to_timestamp(catalog, "db.t", at(4) - 1)) == (5, 3)
    assert table.snapshot_manager.list_ids() == [1, 2, 3]
    assert sort_rows(read_all(table)) == three
    assert tuple(rollback_to_timestamp(catalog, "db.t", str(at(2)))) == (3, 2)
    with pytest.raises(InvalidArgumentError, match="Can not find snapshot earlier than"):
        rollback_to_timestamp(catalog, "db.t", at(1) - 1)
    assert table.snapshot_manager.latest_id() == 2


def test_empty_tables_and_missing_watermarks_raise(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.e", Schema.from_pyarrow_schema(SCHEMA))
    with pytest.raises(InvalidArgumentError, match="Latest snapshot is null"):
        rollback_to_timestamp(catalog, "db.e", T0)
    with pytest.raises(InvalidArgumentError, match="Could not find any snapshot"):
        create_tag_from_timestamp(catalog, "db.e", "x", T0)
    five(catalog)
    # our commits carry no watermark: Java would fail with a NullPointerException here
    with pytest.raises(InvalidArgumentError, match="has no watermark"):
        rollback_to_watermark(catalog, "db.t", 5)
    with pytest.raises(InvalidArgumentError, match="has no watermark"):
        create_tag_from_watermark(catalog, "db.t", "w", 5)
    with pytest.raises(InvalidArgumentError, match="'watermark' is required"):
        rollback_to_watermark(catalog, "db.t", " ")


def test_the_cli_commands(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = five(catalog)
    common = ["--warehouse", warehouse, "--table", "db.t"]
    code, doc, _ = run_json(
        ["create-tag-from-timestamp", *common, "--tag", "a", "--timestamp", str(at(2))], capsys
    )
    assert (code, doc["result"]) == (
        0,
        {"tagName": "a", "snapshot": 2, "commit_time": at(2), "watermark": "null"},
    )
    code, doc, _ = run_json(["replace-tag", *common, "--tag", "a", "--snapshot_id", "3"], capsys)
    assert (code, table.tag_manager.get("a")) == (0, table.snapshot_manager.snapshot(3))
    code, doc, _ = run_json(["rename-tag", *common, "--tag", "a", "--target-tag", "b"], capsys)
    assert (code, table.tag_manager.tag_names()) == (0, ["b"])
    code, doc, _ = run_json(["rollback-to-timestamp", *common, "--timestamp", str(at(4))], capsys)
    assert doc["result"] == {"previous_snapshot_id": 5, "current_snapshot_id": 4}
    code, doc, _ = run_json(["rollback-to", *common, "--tag", "b"], capsys)
    assert doc["result"] == {"previous_snapshot_id": 4, "current_snapshot_id": 3}
    assert table.snapshot_manager.latest_id() == 3
    code, _, line = run_error(["rollback-to-timestamp", *common, "--timestamp", "1"], capsys)
    assert (code, line) == (
        2,
        "error: rollback_to_timestamp: table 'db.t': Can not find snapshot earlier than 1.",
    )


def test_pypaimons_table_calls(catalog: FileSystemCatalog) -> None:
    table = five(catalog)
    table.create_tag("a", 2)
    table.replace_tag("a", 4, "1 h")
    table.rename_tag("a", "b")
    assert table.list_tags() == ["b"] and tag_json(table, "b")["tagTimeRetained"] == 3600.0
    table.rollback_to_timestamp(at(3) + 1)
    assert table.snapshot_manager.latest_id() == 3 and table.list_tags() == []
    with pytest.raises(InvalidArgumentError, match="at or before"):
        table.rollback_to_timestamp(at(1) - 1)
