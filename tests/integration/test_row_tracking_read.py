"""Row-tracking tables (``row-tracking.enabled``): Java's rules for where the option may be set,
and ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` as Java derives them from a
file's first row id, positions, sequence number and stored columns (read/row_tracking.py).
Reading Java's own row-tracking tables: tests/interop/test_options_b_java.py; writing them:
tests/integration/test_row_tracking_write.py, tests/interop/test_row_tracking_java.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import (
    CorruptTableError,
    OptionError,
    PredicateError,
)
from paimon_pyspark.read.row_tracking import ROW_ID, SEQUENCE_NUMBER, with_tracking
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, DataFileMeta

SCHEMA = pa.schema([pa.field("a", pa.int64()), pa.field("s", pa.string())])


def _create(tmp_path: Path, options: dict[str, str], pk: bool = False) -> Any:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = (
        SCHEMA
        if not pk
        else pa.schema([pa.field("a", pa.int64(), nullable=False), SCHEMA.field("s")])
    )
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(schema, primary_keys=["a"] if pk else [], options=options),
    )
    return catalog, catalog.get_table("db.t")


@pytest.mark.parametrize(
    ("options", "pk", "match"),
    [
        ({"row-tracking.enabled": "true", "bucket": "2", "bucket-key": "a"}, False, "bucket = -1"),
        ({"row-tracking.enabled": "true"}, True, "primary-key"),
        ({"row-tracking.enabled": "yes"}, False, "true or false"),
    ],
    ids=["fixed-bucket", "primary-key", "not-a-boolean"],
)
def test_where_java_refuses_the_option(
    tmp_path: Path, options: dict[str, str], pk: bool, match: str
) -> None:
    with pytest.raises(OptionError, match=match):
        _create(tmp_path, options, pk)


def test_empty_table_reads_the_tracking_fields(tmp_path: Path) -> None:
    _, table = _create(tmp_path, {"row-tracking.enabled": "true"})
    rb = table.new_read_builder().with_projection(["a", "_ROW_ID", "_SEQUENCE_NUMBER"])
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 0
    assert [f.name for f in rb.read_type().fields] == ["a", "_ROW_ID", "_SEQUENCE_NUMBER"]


def test_other_tables_have_no_tracking_fields(tmp_path: Path) -> None:
    _, table = _create(tmp_path, {})
    with pytest.raises(PredicateError, match="_ROW_ID"):
        table.new_read_builder().with_projection(["a", "_ROW_ID"])


def _file(first_row_id: int | None, write_cols: tuple[str, ...] | None, rows: int) -> DataFileMeta:
    return DataFileMeta(
        file_name="data-x-0.parquet",
        file_size=1,
        row_count=rows,
        min_key=b"",
        max_key=b"",
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=7,
        max_sequence_number=9,
        schema_id=0,
        level=0,
        first_row_id=first_row_id,
        write_cols=write_cols,
    )


def test_ids_from_first_row_id_and_positions_or_from_the_file(tmp_path: Path) -> None:
    _, table = _create(tmp_path, {"row-tracking.enabled": "true"})
    bucket = tmp_path / "bucket-0"
    bucket.mkdir()
    rows = pa.table({"a": pa.array([5, 6, 7, 8], pa.int64())})
    wanted = [ROW_ID, SEQUENCE_NUMBER]
    # no stored fields: first_row_id + position (from the row the read starts at), max seq
    out = with_tracking(table.store, str(bucket), _file(100, None, 4), rows.slice(1, 2), wanted, 1)
    assert out.column("_ROW_ID").to_pylist() == [101, 102]
    assert out.column("_SEQUENCE_NUMBER").to_pylist() == [9, 9]
    # stored fields (a compaction's): their values, a null falls back as in Java
    stored = pa.table(
        {
            "a": pa.array([5, 6, 7, 8], pa.int64()),
            "_ROW_ID": pa.array([40, None, 42, 43], pa.int64()),
            "_SEQUENCE_NUMBER": pa.array([3, 3, None, 4], pa.int64()),
        }
    )
    pq.write_table(stored, bucket / "data-x-0.parquet", row_group_size=2)
    f = _file(10, ("a", "_ROW_ID", "_SEQUENCE_NUMBER"), 4)
    out = with_tracking(table.store, str(bucket), f, rows, wanted, 0)
    assert out.column("_ROW_ID").to_pylist() == [40, 11, 42, 43]
    assert out.column("_SEQUENCE_NUMBER").to_pylist() == [3, 3, 9, 4]
    # one row group of it (rows 2..3 of the file)
    out = with_tracking(table.store, str(bucket), f, rows.slice(2), wanted, 2, row_group=1)
    assert out.column("_ROW_ID").to_pylist() == [42, 43]
    # neither a first row id nor stored ids: Java fails too (a null first row id)
    with pytest.raises(CorruptTableError, match="first row id"):
        with_tracking(table.store, str(bucket), _file(None, None, 4), rows, [ROW_ID], 0)
