"""Java 1.4.2's incremental reads and ours return the same rows, on tables we wrote and on
tables Java wrote: between snapshot ids, tags and times, across COMPACT and OVERWRITE commits,
in the delta and diff scan modes; and both refuse the same bad bounds."""

from __future__ import annotations

import datetime
import time
from pathlib import Path

import pyarrow as pa
import pytest
from incremental_oracle import read_incremental, sorted_rows
from java_oracle import JavaOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

APPEND = pa.schema([("p", pa.int32()), ("id", pa.int64()), ("v", pa.string())])
PK = pa.schema(
    [
        pa.field("p", pa.int32(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
    ]
)
FIELDS = ["p", "id", "v"]


def write(table: FileStoreTable, rows: list[tuple[int, int, str]], overwrite: bool = False) -> None:
    schema = PK if table.primary_keys else APPEND
    data = pa.table(
        {"p": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
        schema=schema,
    )
    builder = table.new_batch_write_builder()
    if overwrite:
        builder = builder.overwrite()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    time.sleep(0.005)  # distinct commit times for the timestamp bounds


def delete(table: FileStoreTable, rows: list[tuple[int, int, str]]) -> None:
    data = pa.table(
        {"p": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
        schema=PK,
    )
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.delete_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    time.sleep(0.005)


def ours(table: FileStoreTable, options: dict[str, str]) -> list[tuple[object, ...]]:
    rb = table.copy(options).new_read_builder()
    return sorted_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist(), FIELDS)


def times(table: FileStoreTable) -> dict[int, int]:
    sm = table.snapshot_manager
    return {i: sm.snapshot(i).time_millis for i in sm.list_ids()}


def history(catalog_path: Path, name: str, primary_key: bool) -> FileStoreTable:
    """APPEND 1-3 (3 deletes a key of a PK table), COMPACT 4, APPEND 5, OVERWRITE 6, APPEND 7,
    tags t1, t2, t3, t5 and t7."""
    catalog = CatalogFactory.create({"warehouse": str(catalog_path)})
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "2", "write-only": "true"} if primary_key else {"write-only": "true"}
    schema = Schema.from_pyarrow_schema(
        PK if primary_key else APPEND,
        partition_keys=["p"],
        primary_keys=["p", "id"] if primary_key else [],
        options=options,
    )
    catalog.create_table(f"db.{name}", schema)
    table = catalog.get_table(f"db.{name}")
    write(table, [(1, 1, "a1"), (1, 2, "a2"), (2, 3, "a3")])
    write(table, [(1, 2, "b2"), (2, 4, "b4"), (1, 5, "b5")])
    if primary_key:
        delete(table, [(1, 1, "a1")])
    else:
        write(table, [(2, 6, "c6")])
    assert compact(catalog, f"db.{name}", options={"compaction.min.file-num": "2"}) == 4
    write(table, [(1, 7, "d7"), (2, 3, "d3")])
    write(table, [(1, 8, "e8"), (2, 9, "e9")], overwrite=True)
    write(table, [(1, 10, "f10"), (2, 9, "f9")])
    kinds = [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, 8)]
    assert kinds == ["APPEND"] * 3 + ["COMPACT", "APPEND", "OVERWRITE", "APPEND"]
    for tag in (1, 2, 3, 5, 7):
        table.create_tag(f"t{tag}", tag)
    return table


def option_sets(table: FileStoreTable) -> list[dict[str, str]]:
    at = times(table)
    ids = ["0,1", "1,3", "2,5", "3,7", "1,7", "5,5", "4,6"]
    tags = ["t1,t3", "t2,t5", "t3,t7", "t1,t7", "t5,t5"]
    local = [
        datetime.datetime.fromtimestamp(at[i] / 1000).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        for i in (2, 5)
    ]
    stamps = [
        f"{at[1]},{at[4]}",
        f"{at[1] - 1000},{at[3]}",
        f"{at[2]},{at[7] + 1000}",
        ",".join(local),
    ]
    return [
        *({"incremental-between": b} for b in ids + tags),
        *({"incremental-between": b, "incremental-between-scan-mode": "diff"} for b in ids[1:]),
        *({"incremental-between": b, "incremental-between-scan-mode": "delta"} for b in ids),
        {"incremental-between": "t1,t7", "incremental-between-tag-to-snapshot": "true"},
        *({"incremental-between-timestamp": s} for s in stamps),
        *(
            {"incremental-between-timestamp": s, "incremental-between-scan-mode": "diff"}
            for s in stamps
        ),
    ]


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_java_reads_our_table_incrementally_as_we_do(
    java_oracle: JavaOracle, tmp_path: Path, primary_key: bool
) -> None:
    table = history(tmp_path, "t", primary_key)
    nonempty = 0
    for options in option_sets(table):
        java = read_incremental(java_oracle, tmp_path, "db", "t", options)
        assert java.error is None, (options, java.error)
        rows = ours(table, options)
        assert rows == java.added(), options
        nonempty += bool(rows)
    assert nonempty >= 20


def test_java_keeps_the_deletes_a_batch_read_drops(java_oracle: JavaOracle, tmp_path: Path) -> None:
    table = history(tmp_path, "t", primary_key=True)
    java = read_incremental(java_oracle, tmp_path, "db", "t", {"incremental-between": "2,3"})
    assert java.rows == [["-D", 1, 1, "a1"]]
    assert ours(table, {"incremental-between": "2,3"}) == []


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_we_read_a_java_table_incrementally_as_java_does(
    java_oracle: JavaOracle, tmp_path: Path, primary_key: bool
) -> None:
    fields = [("p", "INT NOT NULL"), ("id", "BIGINT NOT NULL"), ("v", "STRING")]
    options = {"bucket": "2"} if primary_key else {"bucket": "2", "bucket-key": "id"}
    options.update({"write-only": "true", "compaction.min.file-num": "2"})
    java_oracle.create_table(
        tmp_path,
        "db",
        "j",
        fields,
        partition_keys=["p"],
        primary_keys=["p", "id"] if primary_key else [],
        options=options,
    )
    java_oracle.write_rows(tmp_path, "db", "j", [[1, 1, "a1"], [1, 2, "a2"], [2, 3, "a3"]])
    java_oracle.write_rows(tmp_path, "db", "j", [[1, 2, "b2"], [2, 4, "b4"]])
    compacted = java_oracle.compact(tmp_path, "db", "j")
    assert compacted == 3
    java_oracle.write_rows(tmp_path, "db", "j", [[1, 5, "c5"], [2, 3, "c3"]])
    java_oracle.create_tag(tmp_path, "db", "j", "one", 1)
    java_oracle.create_tag(tmp_path, "db", "j", "four", 4)
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.j")
    for bounds in ("0,1", "1,2", "1,4", "2,4", "one,four"):
        for mode in ("auto", "diff"):
            if mode == "diff" and bounds.startswith("0"):
                continue
            opts = {"incremental-between": bounds, "incremental-between-scan-mode": mode}
            java = read_incremental(java_oracle, tmp_path, "db", "j", opts)
            assert java.error is None, (opts, java.error)
            assert ours(table, opts) == java.added(), opts


def test_both_refuse_the_same_bounds(java_oracle: JavaOracle, tmp_path: Path) -> None:
    table = history(tmp_path, "t", primary_key=False)
    refused = [
        {"incremental-between": "3,1"},
        {"incremental-between": "1,99"},
        {"incremental-between": "a,b"},
        {"incremental-between": "t1,3"},
        {"incremental-between": "1"},
        {"incremental-between": "t3,t1"},
        {"incremental-between-timestamp": "5,1"},
        {"incremental-between": "1,3", "scan.snapshot-id": "2"},
        {"incremental-between": "1,3", "incremental-between-timestamp": "1,3"},
    ]
    for options in refused:
        java = read_incremental(java_oracle, tmp_path, "db", "t", options)
        assert java.error is not None, options
        with pytest.raises(OptionError):
            ours(table, options)
