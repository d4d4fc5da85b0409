"""Partition expiry between Java Paimon 1.4.2 and us: the same rows written on each side (Java's
batch commit, ours) reach the same snapshot kinds, partitions and rows, whether the table's
``partition.expiration-time`` expires partitions after the commit or the ``expire_partitions``
procedure does (Java's procedure API against ours). Each side reads the other's table."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows
from partition_expire_oracle import expire_partitions as java_expire
from partition_expire_oracle import extract_times

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.maintenance.partition_expire import PartitionTimeExtractor
from paimon_pyspark.procedures import expire_partitions

pytestmark = pytest.mark.java

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hr", pa.int32())])
FIELDS = {"id": "BIGINT", "dt": "STRING", "hr": "INT"}
KEYS = ["dt", "hr"]
# three partitions long past, two far ahead, one whose value is no date
FIRST = [
    [1, "20200103", 1],
    [2, "20200101", 5],
    [3, "20200101", 7],
    [4, "20200102", 0],
    [5, "29990101", 1],
    [6, "29990102", 2],
    [7, "later", 3],
]
SECOND = [[8, "29990103", 4]]
VALUES_OPTIONS = {
    "partition.expiration-time": "7 d",
    "partition.timestamp-formatter": "yyyyMMdd",
    "partition.timestamp-pattern": "$dt",
    "partition.expiration-max-num": "2",
}


def _ours(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, partition_keys=KEYS, options=options)
    )
    return catalog.get_table(f"db.{name}")


def _write(catalog: FileSystemCatalog, name: str, rows: list[list[Any]]) -> None:
    table = catalog.get_table(f"db.{name}")  # a new handle per job, as Java's batch commit
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        dicts = [dict(zip(SCHEMA.names, r, strict=True)) for r in rows]
        w.write_arrow(pa.Table.from_pylist(dicts, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _state(
    java: JavaOracle, warehouse: str, catalog: FileSystemCatalog, name: str
) -> tuple[list[str], list[list[Any]]]:
    """Snapshot kinds and rows as Java reads them, after checking we read the same rows."""
    kinds = [s["commitKind"] for s in java.snapshots(warehouse, "db", name)]
    theirs = sorted_rows(java.read_table(warehouse, "db", name).rows)
    table = catalog.get_table(f"db.{name}")
    rb = table.new_read_builder()
    ours = sorted_rows(
        [
            list(r.values())
            for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
        ]
    )
    assert ours == theirs, name
    return kinds, theirs


def test_expiry_at_commit_reaches_javas_state(java_oracle: JavaOracle, tmp_path: Path) -> None:
    warehouse = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    at_end = {**VALUES_OPTIONS, "end-input.check-partition-expire": "true"}
    for name, options in (("checked", at_end), ("unchecked", VALUES_OPTIONS)):
        java_oracle.create_table(
            warehouse, "db", f"j_{name}", FIELDS, partition_keys=KEYS, options=options
        )
        _ours(catalog, f"p_{name}", options)
        for rows in (FIRST, SECOND):
            java_oracle.write_rows(warehouse, "db", f"j_{name}", rows)
            _write(catalog, f"p_{name}", rows)

    java_kinds, java_rows = _state(java_oracle, warehouse, catalog, "j_checked")
    our_kinds, our_rows = _state(java_oracle, warehouse, catalog, "p_checked")
    # each batch commit expires at most 2 partitions, oldest first, in an OVERWRITE snapshot
    assert java_kinds == our_kinds == ["APPEND", "OVERWRITE", "APPEND", "OVERWRITE"]
    assert java_rows == our_rows
    assert sorted({r[1] for r in our_rows}) == ["29990101", "29990102", "29990103", "later"]

    # without end-input.check-partition-expire, a batch commit's check waits for the interval
    java_kinds, java_rows = _state(java_oracle, warehouse, catalog, "j_unchecked")
    our_kinds, our_rows = _state(java_oracle, warehouse, catalog, "p_unchecked")
    assert java_kinds == our_kinds == ["APPEND", "APPEND"]
    assert java_rows == our_rows and len(our_rows) == len(FIRST) + len(SECOND)


def test_expire_partitions_procedure_matches_javas(java_oracle: JavaOracle, tmp_path: Path) -> None:
    warehouse = str(tmp_path)
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    java_oracle.create_table(warehouse, "db", "j", FIELDS, partition_keys=KEYS)
    _ours(catalog, "p", {})
    java_oracle.write_rows(warehouse, "db", "j", FIRST)
    _write(catalog, "p", FIRST)

    args: dict[str, Any] = {
        "expiration_time": "7 d",
        "timestamp_formatter": "yyyyMMdd",
        "timestamp_pattern": "$dt",
        "expire_strategy": "values-time",
        "max_expires": 2,
        "options": "partition.expiration-batch-size=1",
    }
    theirs = java_expire(java_oracle, warehouse, "db", "j", **args)
    ours = expire_partitions(catalog, "db.p", **args)
    assert ours == theirs == ["dt=20200101, hr=5", "dt=20200101, hr=7"]
    args["max_expires"] = -1
    theirs = java_expire(java_oracle, warehouse, "db", "j", **args)
    ours = expire_partitions(catalog, "db.p", **{**args, "max_expires": None})
    assert ours == theirs == ["dt=20200102, hr=0", "dt=20200103, hr=1"]
    assert expire_partitions(catalog, "db.p", **{**args, "max_expires": None}) == [
        "No expired partitions."
    ]
    # update-time: every partition's files are older than a millisecond by now
    theirs = java_expire(java_oracle, warehouse, "db", "j", "1 ms", expire_strategy="update-time")
    ours = expire_partitions(catalog, "db.p", "1 ms", expire_strategy="update-time")
    assert ours == theirs == ["dt=29990101, hr=1", "dt=29990102, hr=2", "dt=later, hr=3"]

    java_kinds, java_rows = _state(java_oracle, warehouse, catalog, "j")
    our_kinds, our_rows = _state(java_oracle, warehouse, catalog, "p")
    assert java_kinds == our_kinds == ["APPEND"] + ["OVERWRITE"] * 5
    assert java_rows == our_rows == []


TIME_CASES: list[tuple[Any, ...]] = [
    (None, None, ["dt"], ["2024-01-31"]),
    (None, None, ["dt"], ["2024-1-5 1:2:3.5"]),
    (None, None, ["dt"], ["2024-13-01"]),
    (None, None, ["dt"], ["2024-02-30"]),
    (None, None, ["dt"], ["2024-01-31 10"]),
    (None, None, ["dt"], ["20240131"]),
    (None, "yyyyMMdd", ["dt"], ["20240131"]),
    (None, "yyyy-MM-dd", ["dt"], ["2024-02-30"]),
    (None, "yyyy-MM-dd", ["dt"], ["2024-2-3"]),
    (None, "yyyy-M-d", ["dt"], ["2024-2-3"]),
    (None, "yyyyMMddHH", ["dt"], ["2024013110"]),
    (None, "yyyyMM", ["dt"], ["202401"]),
    (None, "yy-MM-dd", ["dt"], ["24-01-31"]),
    (None, "yyyy/MM/dd HH", ["dt"], ["2024/01/31 25"]),
    (None, "yyyy-MM-dd'T'HH:mm", ["dt"], ["2024-01-31T10:11"]),
    (None, "yyyy-MM-dd HH:mm:ss.SSS", ["dt"], ["2024-01-31 10:11:12.345"]),
    ("$dt $hr:00:00", "yyyy-MM-dd HH:mm:ss", ["dt", "hr"], ["2024-01-31", "10"]),
    ("$dt $hr:00:00", "yyyy-MM-dd H:mm:ss", ["dt", "hr"], ["2024-01-31", "7"]),
    ("$y-$m-$d", None, ["y", "m", "d"], ["2024", "1", "5"]),
    ("$y$m", "yyyyMM", ["y", "m"], ["2024", "01"]),
]


def _java_text(value: dt.datetime | None) -> str:
    """LocalDateTime.toString: seconds only when not zero, fractions in groups of three."""
    if value is None:
        return "unparsed"
    text = value.strftime("%Y-%m-%dT%H:%M")
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        micros = f"{value.microsecond:06d}"
        text += "." + (micros[:3] if micros.endswith("000") else micros)
    return text


def test_partition_times_parse_as_javas(java_oracle: JavaOracle) -> None:
    theirs = extract_times(java_oracle, TIME_CASES)
    ours = [_java_text(PartitionTimeExtractor(p, f).extract(k, v)) for p, f, k, v in TIME_CASES]
    assert ours == theirs
    assert theirs.count("unparsed") >= 4
