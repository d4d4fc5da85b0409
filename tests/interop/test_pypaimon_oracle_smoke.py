"""Smoke tests of the pypaimon oracle itself, so a red interop test blames the product.

They check pypaimon against itself only: tables it creates and writes, it reads back, at the
latest snapshot and by time travel, and Arrow types survive the pyarrow 26 -> 19 -> 26 trip.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest
from pypaimon_oracle import PYTHON_ENV_VAR, PypaimonOracle, pypaimon_oracle_fixture

pytestmark = pytest.mark.pypaimon

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64()),
        pa.field("name", pa.string()),
        pa.field("dt", pa.string()),
    ]
)
FIRST = pa.table(
    {"id": [1, 2, 3], "name": ["a", "b", None], "dt": ["2024-01-01", "2024-01-02", None]},
    schema=SCHEMA,
)
SECOND = pa.table(
    {"id": [4, 5, 6], "name": ["d", "e", "f"], "dt": ["2024-01-01", "2024-01-03", "2024-01-03"]},
    schema=SCHEMA,
)


def _sorted(table: pa.Table) -> pa.Table:
    return table.sort_by("id")


@pytest.mark.parametrize(
    ("partition_keys", "options"),
    [
        pytest.param(["dt"], {}, id="partitioned-append"),
        pytest.param([], {"bucket": "2", "bucket-key": "id"}, id="bucketed-append"),
    ],
)
def test_two_commits_then_time_travel(
    pypaimon_oracle: PypaimonOracle,
    tmp_path: Path,
    partition_keys: list[str],
    options: dict[str, str],
) -> None:
    warehouse = tmp_path / "warehouse"
    pypaimon_oracle.create_table(
        warehouse, "db.t", SCHEMA, partition_keys=partition_keys, options=options
    )
    both = pa.concat_tables([FIRST, SECOND])

    assert pypaimon_oracle.write(warehouse, "db.t", both, commits=2) == [1, 2]

    assert _sorted(pypaimon_oracle.read(warehouse, "db.t")).equals(_sorted(both))
    assert _sorted(pypaimon_oracle.read(warehouse, "db.t", snapshot_id=1)).equals(FIRST)
    projected = pypaimon_oracle.read(warehouse, "db.t", snapshot_id=2, projection=["name", "id"])
    assert projected.column_names == ["name", "id"]
    assert sorted(projected.column("id").to_pylist()) == [1, 2, 3, 4, 5, 6]


def test_bucketed_table_spreads_rows_over_two_buckets(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    pypaimon_oracle.create_table(
        warehouse, "db.t", SCHEMA, options={"bucket": "2", "bucket-key": "id"}
    )
    pypaimon_oracle.write(warehouse, "db.t", pa.concat_tables([FIRST, SECOND]))

    buckets = {p.name for p in (warehouse / "db.db" / "t").glob("bucket-*")}
    assert buckets == {"bucket-0", "bucket-1"}


def test_overwrite_replaces_touched_partitions_only(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    pypaimon_oracle.create_table(warehouse, "db.t", SCHEMA, partition_keys=["dt"])
    pypaimon_oracle.write(warehouse, "db.t", FIRST)
    replacement = pa.table({"id": [9], "name": ["z"], "dt": ["2024-01-01"]}, schema=SCHEMA)

    pypaimon_oracle.write(warehouse, "db.t", replacement, overwrite=True)

    assert _sorted(pypaimon_oracle.read(warehouse, "db.t")).column("id").to_pylist() == [2, 3, 9]


def test_primary_key_table_upserts_and_time_travels(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])
    pypaimon_oracle.create_table(
        warehouse, "db.t", schema, primary_keys=["id"], options={"bucket": "2"}
    )
    first = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]}, schema=schema)
    update = pa.table({"id": [2, 4], "v": ["B", "d"]}, schema=schema)
    pypaimon_oracle.write(warehouse, "db.t", first)
    pypaimon_oracle.write(warehouse, "db.t", update)

    latest = _sorted(pypaimon_oracle.read(warehouse, "db.t")).to_pylist()
    assert [(r["id"], r["v"]) for r in latest] == [(1, "a"), (2, "B"), (3, "c"), (4, "d")]
    assert _sorted(pypaimon_oracle.read(warehouse, "db.t", snapshot_id=1)).equals(first)


ROUND_TRIP_TYPES = {
    "id": pa.int64(),
    "i8": pa.int8(),
    "i16": pa.int16(),
    "i32": pa.int32(),
    "f32": pa.float32(),
    "f64": pa.float64(),
    "flag": pa.bool_(),
    "dec_small": pa.decimal128(9, 2),
    "dec_big": pa.decimal128(38, 10),
    "s": pa.string(),
    "raw": pa.binary(),
    "day": pa.date32(),
    "ts_ms": pa.timestamp("ms"),
    "ts_us": pa.timestamp("us"),
    "ts_ns": pa.timestamp("ns"),
    "ltz_us": pa.timestamp("us", tz="UTC"),
    "tags": pa.list_(pa.string()),
    "attrs": pa.map_(pa.string(), pa.int32()),
    "point": pa.struct([pa.field("x", pa.float64()), pa.field("label", pa.string())]),
    "deep": pa.list_(pa.struct([pa.field("k", pa.int32()), pa.field("v", pa.list_(pa.int64()))])),
}


def _round_trip_rows() -> pa.Table:
    base = dt.datetime(2024, 2, 29, 23, 59, 58, 123456)
    columns = {
        "id": [1, 2],
        "i8": [-128, None],
        "i16": [32767, None],
        "i32": [-(2**31), None],
        "f32": [1.5, None],
        "f64": [-2.25, None],
        "flag": [True, None],
        "dec_small": [Decimal("-1234567.89"), None],
        "dec_big": [Decimal("1234567890123456789012345678.0123456789"), None],
        "s": ["héllo \u2603", None],
        "raw": [b"\x00\xff", None],
        "day": [dt.date(1970, 1, 1), None],
        "ts_ms": [base.replace(microsecond=123000), None],
        "ts_us": [base, None],
        "ts_ns": [base, None],
        "ltz_us": [base.replace(tzinfo=dt.UTC), None],
        "tags": [["a", None, "c"], None],
        "attrs": [[("k1", 1), ("k2", None)], None],
        "point": [{"x": 0.5, "label": None}, None],
        "deep": [[{"k": 1, "v": [1, 2]}, {"k": 2, "v": None}], None],
    }
    return pa.table({name: pa.array(columns[name], typ) for name, typ in ROUND_TRIP_TYPES.items()})


def test_arrow_types_round_trip_through_pypaimon(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    rows = _round_trip_rows()
    reply = pypaimon_oracle.create_table(warehouse, "db.t", rows.schema)
    pypaimon_oracle.write(warehouse, "db.t", rows)

    back = _sorted(pypaimon_oracle.read(warehouse, "db.t"))

    assert dict(reply["fields"])["ltz_us"] == "TIMESTAMP_LTZ(6)"
    assert back.schema.field("ltz_us").type == pa.timestamp("us", tz="UTC")
    # pypaimon hands back its own Arrow layout (e.g. non-nullable map keys), so compare values.
    assert back.cast(rows.schema).equals(rows)


def test_large_string_input_is_stored_as_string(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    rows = pa.table(
        {"id": pa.array([1, 2], pa.int64()), "s": pa.array(["x", None], pa.large_string())}
    )
    reply = pypaimon_oracle.create_table(warehouse, "db.t", rows.schema)
    pypaimon_oracle.write(warehouse, "db.t", rows)

    back = pypaimon_oracle.read(warehouse, "db.t")

    assert dict(reply["fields"])["s"] == "STRING"
    assert back.schema.field("s").type == pa.string()
    assert back.column("s").to_pylist() == ["x", None]


def test_pypaimon_errors_surface_as_assertion_with_traceback(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    with pytest.raises(AssertionError, match="TableNotExistException"):
        pypaimon_oracle.read(tmp_path / "warehouse", "db.missing")


def test_missing_venv_fails_instead_of_skipping(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(PYTHON_ENV_VAR, str(tmp_path / "no-such-python"))
    with pytest.raises(pytest.fail.Exception, match="make test"):
        pypaimon_oracle_fixture()
