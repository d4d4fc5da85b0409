"""Partition mark-done both ways with Java 1.4.2: the same ``_SUCCESS`` files, byte for byte,
each side reading and updating the other's, and the same refusal of ``done-partition`` on a
filesystem catalog."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle
from mark_done_oracle import mark_done, read_success_file

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.maintenance import partition_mark_done as ours
from paimon_pyspark.procedures import mark_partition_done
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("hr", pa.int32())])


def test_success_files_both_ways(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db")
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt", "hr"]))
    table = catalog.get_table("db.t")

    spec = "dt=2026-11-01,hr=1;dt=2026-11-02"
    java = mark_done(java_oracle, tmp_path, "db", "t", spec)
    # Java's paths end with '/'; ours are the same directories
    assert [p.rstrip("/") for p in java["paths"]] == ["dt=2026-11-01/hr=1", "dt=2026-11-02"]
    java_file = ours.read_success_file(table.store, "dt=2026-11-02")
    assert java_file is not None and java_file.creation_time == java_file.modification_time
    with open(os.path.join(table.path, "dt=2026-11-02", "_SUCCESS")) as f:
        assert f.read() == java_file.to_json()  # Jackson's pretty print, byte for byte

    clock = ManualClock(java_file.creation_time - 60_000)  # Java marks by the real clock
    with injected(clock):
        assert mark_partition_done(catalog, "db.t", "dt=2026-11-02;dt=2026-11-03,hr=7") == [
            "dt=2026-11-02",
            "dt=2026-11-03/hr=7",
        ]
    # we kept Java's creation time; Java reads both of ours
    assert read_success_file(java_oracle, tmp_path, "db", "t", "dt=2026-11-02") == (
        java_file.creation_time,
        clock.millis,
    )
    assert read_success_file(java_oracle, tmp_path, "db", "t", "dt=2026-11-03/hr=7") == (
        clock.millis,
        clock.millis,
    )
    mark_done(java_oracle, tmp_path, "db", "t", "dt=2026-11-03,hr=7")
    again = ours.read_success_file(table.store, "dt=2026-11-03/hr=7")
    assert again is not None and again.creation_time == clock.millis  # Java kept ours
    assert again.modification_time > clock.millis


@pytest.mark.parametrize(
    ("action", "in_metastore", "java_error"),
    [
        ("done-partition", "true", "without metastore"),
        ("mark-event", "false", "should enable metastore.partitioned-table"),
        ("mark-event", "true", None),  # accepted, and ignored by a filesystem catalog
    ],
)
def test_metastore_actions_on_a_filesystem_catalog_as_java_takes_them(
    java_oracle: JavaOracle, tmp_path: Path, action: str, in_metastore: str, java_error: str | None
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db")
    options = {
        "partition.mark-done-action": f"success-file,{action}",
        "metastore.partitioned-table": in_metastore,
    }
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, ["dt"], options=options))
    java = mark_done(java_oracle, tmp_path, "db", "t", "dt=a")
    if java_error is not None:
        assert java_error in java["error"]
        with pytest.raises(UnsupportedOptionError, match=f"'{action}' is refused"):
            mark_partition_done(catalog, "db.t", "dt=b")
        assert not os.path.exists(os.path.join(tmp_path, "db.db", "t", "dt=b"))
    else:
        assert "error" not in java
        assert mark_partition_done(catalog, "db.t", "dt=b") == ["dt=b"]
        for partition in ("dt=a", "dt=b"):  # the success file only, by both
            assert read_success_file(java_oracle, tmp_path, "db", "t", partition) is not None
