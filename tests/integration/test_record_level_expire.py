"""``record-level.expire-time`` with ``record-level.time-field`` (mergetree/record_expire.py,
Java's RecordLevelExpire): compactions drop expired records, reads do not; every time-field
type Java takes; Java's checks when a write starts. Java holds us to it in
tests/interop/test_options_a_java.py."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, Schema, procedures
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import OptionError, UnsupportedOptionError

NOW = int(time.time())
OLD = NOW - 7 * 86_400
FRESH = NOW + 86_400


def _table(catalog: FileSystemCatalog, ts_type: pa.DataType, **extra: str) -> FileStoreTable:
    schema = pa.schema([("id", pa.int64()), ("ts", ts_type)])
    options = {
        "bucket": "1",
        "record-level.expire-time": "1 d",
        "record-level.time-field": "ts",
        **extra,
    }
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options=options)
    )
    return catalog.get_table("db.t")


def _write(table: FileStoreTable, rows: list[dict[str, Any]]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, table.arrow_schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def _ids(table: FileStoreTable) -> list[int]:
    rb = table.new_read_builder()
    return sorted(
        r["id"] for r in rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    )


def _ts(seconds: int, ts_type: pa.DataType) -> Any:
    if pa.types.is_timestamp(ts_type):
        value = datetime.fromtimestamp(seconds, UTC) + timedelta(milliseconds=250)
        return value if ts_type.tz else value.replace(tzinfo=None)
    if ts_type == pa.int64() and seconds == OLD:
        return seconds * 1000  # BIGINT milliseconds (from 10^12 on)
    return seconds


@pytest.mark.parametrize(
    "ts_type",
    [pa.int32(), pa.int64(), pa.timestamp("ms"), pa.timestamp("us", tz="UTC")],
    ids=["int", "bigint", "timestamp", "timestamp_ltz"],
)
def test_compaction_drops_expired_records_reads_do_not(
    catalog: FileSystemCatalog, ts_type: pa.DataType
) -> None:
    table = _table(catalog, ts_type)
    _write(
        table,
        [
            {"id": 1, "ts": _ts(OLD, ts_type)},
            {"id": 2, "ts": _ts(FRESH, ts_type)},
            {"id": 3, "ts": None},
            {"id": 4, "ts": _ts(FRESH, ts_type)},
        ],
    )
    # key 4's newer record is expired: dropped before the merge, the older one wins
    _write(table, [{"id": 4, "ts": _ts(OLD, ts_type)}, {"id": 5, "ts": _ts(OLD, ts_type)}])
    assert _ids(table) == [1, 2, 3, 4, 5]
    procedures.compact(catalog, "db.t")
    assert _ids(catalog.get_table("db.t")) == [2, 3, 4]


def test_a_big_file_with_expired_records_is_rewritten_not_upgraded(
    catalog: FileSystemCatalog,
) -> None:
    """One level-0 file at least ``compaction file size`` big would be moved to the top level
    as it is (MergeTreeCompactTask.upgrade) unless its smallest time has expired."""
    table = _table(catalog, pa.int32(), **{"target-file-size": "1 b", "write-only": "true"})
    _write(table, [{"id": 1, "ts": OLD}, {"id": 2, "ts": FRESH}])
    procedures.compact(catalog, "db.t")
    table = catalog.get_table("db.t")
    assert _ids(table) == [2]
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    assert [e.file.row_count for e in table.manifest_io.live_entries(snapshot)] == [1]


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"record-level.time-field": None}, OptionError, "record-level.time-field"),
        ({"record-level.time-field": "nope"}, OptionError, "can not find time field 'nope'"),
        ({"record-level.time-field": "s"}, OptionError, "INT, BIGINT, or TIMESTAMP"),
        ({"deletion-vectors.enabled": "true"}, UnsupportedOptionError, "deletion vectors"),
        ({"record-level.expire-time": "soon"}, OptionError, "record-level.expire-time"),
    ],
)
def test_checks_when_a_write_starts(
    catalog: FileSystemCatalog,
    options: dict[str, str | None],
    error: type[Exception],
    message: str,
) -> None:
    schema = pa.schema([("id", pa.int64()), ("ts", pa.int32()), ("s", pa.string())])
    merged: dict[str, str | None] = {
        "bucket": "1",
        "record-level.expire-time": "1 h",
        "record-level.time-field": "ts",
        **options,
    }
    final = {k: v for k, v in merged.items() if v is not None}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, primary_keys=["id"], options=final)
    )
    table = catalog.get_table("db.t")
    with pytest.raises(error, match=message):
        table.new_batch_write_builder().new_write()
