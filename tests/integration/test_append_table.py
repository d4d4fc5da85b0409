"""Append tables end to end through the public API, on a real local warehouse."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    CorruptTableError,
    DatabaseNotExistError,
    NullViolationError,
    OptionError,
    SchemaMismatchError,
    TableAlreadyExistError,
    TableNotExistError,
    UnsupportedOptionError,
)

ALL_TYPES = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("b", pa.bool_()),
        ("i8", pa.int8()),
        ("i16", pa.int16()),
        ("i32", pa.int32()),
        ("f32", pa.float32()),
        ("f64", pa.float64()),
        ("d10", pa.decimal128(10, 2)),
        ("d38", pa.decimal128(38, 6)),
        ("s", pa.string()),
        ("bin", pa.binary()),
        ("day", pa.date32()),
        ("ts3", pa.timestamp("ms")),
        ("ts6", pa.timestamp("us")),
        ("ltz", pa.timestamp("us", tz="UTC")),
        ("arr", pa.list_(pa.int32())),
        ("m", pa.map_(pa.string(), pa.int32())),
        ("row", pa.struct([("x", pa.int32()), ("y", pa.string())])),
        ("dt", pa.string()),
    ]
)


def all_types_data(n: int, offset: int = 0) -> pa.Table:
    rows = []
    for k in range(offset, offset + n):
        null = k % 5 == 4
        rows.append(
            {
                "id": k,
                "b": None if null else k % 2 == 0,
                "i8": None if null else k % 100 - 50,
                "i16": None if null else k * 7 % 30000,
                "i32": None if null else k * 1000,
                "f32": None if null else k / 4,
                "f64": None if null else k * 1.5,
                "d10": None if null else decimal.Decimal(k) / 100,
                "d38": None if null else decimal.Decimal(k * 10**20 + 1) / 10**6,
                "s": None if null else f"name-{k}-" + "é" * (k % 3) + "x" * (k % 20),
                "bin": None if null else bytes([k % 256]) * (k % 12),
                "day": None if null else dt.date(2026, 1, 1) + dt.timedelta(days=k),
                "ts3": None if null else dt.datetime(2026, 1, 1, 12, 0, 0, (k % 1000) * 1000),
                "ts6": None if null else dt.datetime(2025, 6, 1) + dt.timedelta(microseconds=k),
                "ltz": None
                if null
                else dt.datetime(2025, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=k),
                "arr": None if null else [k, None, k + 1],
                "m": None if null else [("a", k), ("b", None)],
                "row": None if null else {"x": k, "y": f"y{k}"},
                "dt": f"2026-11-0{k % 3 + 1}",
            }
        )
    return pa.Table.from_pylist(rows, schema=ALL_TYPES)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
@pytest.mark.parametrize(
    "layout",
    [
        {"partition_keys": [], "options": {}},
        {"partition_keys": ["dt"], "options": {}},
        {"partition_keys": ["dt"], "options": {"bucket": "3", "bucket-key": "id"}},
        {"partition_keys": [], "options": {"bucket": "2", "bucket-key": "s,i32"}},
    ],
    ids=["unpartitioned", "partitioned", "partitioned-bucketed", "bucketed-composite-key"],
)
def test_every_type_round_trips_in_every_layout(
    catalog: FileSystemCatalog, fmt: str, layout: dict[str, object]
) -> None:
    options = dict(layout["options"])  # type: ignore[call-overload]
    options["file.format"] = fmt
    schema = Schema.from_pyarrow_schema(
        ALL_TYPES,
        partition_keys=layout["partition_keys"],  # type: ignore[arg-type]
        options=options,
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    data = all_types_data(60)
    assert write_commit(table, data) == [1]
    assert sort_rows(read_all(table)) == sort_rows(data)


def test_multiple_commits_and_time_travel(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(ALL_TYPES, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    batches = [all_types_data(20, offset=i * 20) for i in range(3)]
    for i, batch in enumerate(batches, start=1):
        assert write_commit(table, batch) == [i]
    for sid in (1, 2, 3):
        travelled = table.copy({"scan.snapshot-id": str(sid)})
        expected = pa.concat_tables(batches[:sid])
        assert sort_rows(read_all(travelled)) == sort_rows(expected)
    with pytest.raises(CorruptTableError, match="snapshot 9"):
        read_all(table.copy({"scan.snapshot-id": "9"}))


def test_files_roll_at_target_file_size(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.string())])
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, options={"target-file-size": "64 kb"})
    )
    table = catalog.get_table("db.t")
    data = pa.table({"id": range(200_000), "s": [f"{i:032x}" for i in range(200_000)]})
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        for batch in data.to_batches(max_chunksize=20_000):
            write.write_arrow_batch(batch)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    files = [f for m in messages for f in m.new_files]
    assert len(files) > 1
    assert next((f.min_sequence_number, f.max_sequence_number) for f in files)[0] == 0
    assert sum(f.row_count for f in files) == 200_000
    assert read_all(table).column("id").to_pylist() == list(range(200_000))


def test_fixed_bucket_sequence_numbers_continue_across_commits(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("v", pa.string())])
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(schema, options={"bucket": "1", "bucket-key": "id"})
    )
    table = catalog.get_table("db.t")
    data = pa.table({"id": [1, 2, 3], "v": ["a", "b", "c"]})
    write_commit(table, data)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    (f,) = messages[0].new_files
    assert (f.min_sequence_number, f.max_sequence_number) == (3, 5)


def test_filters_prune_partitions_and_files_by_stats(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("s", pa.string()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    for lo in (0, 100, 200):
        ids = list(range(lo, lo + 100))
        write_commit(
            table,
            pa.table(
                {"id": ids, "s": [f"v{i}" for i in ids], "dt": ["a" if lo < 200 else "b"] * 100}
            ),
        )
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    assert len(rb.new_scan().plan().splits()) == 2

    by_partition = table.new_read_builder().with_filter(pb.equal("dt", "b"))
    splits = by_partition.new_scan().plan().splits()
    assert [len(s.files) for s in splits] == [1]
    assert by_partition.new_read().to_arrow(splits).num_rows == 100

    by_stats = table.new_read_builder().with_filter(pb.greater_or_equal("id", 150))
    files = [f for s in by_stats.new_scan().plan().splits() for f in s.files]
    assert len(files) == 2
    result = by_stats.new_read().to_arrow(by_stats.new_scan().plan().splits())
    assert sorted(result.column("id").to_pylist()) == list(range(150, 300))

    projected = (
        table.new_read_builder()
        .with_projection(["s"])
        .with_filter(pb.and_(pb.equal("dt", "a"), pb.less_than("id", 3)))
    )
    out = projected.new_read().to_arrow(projected.new_scan().plan().splits())
    assert out.column_names == ["s"]
    assert sorted(out.column("s").to_pylist()) == ["v0", "v1", "v2"]

    limited = table.new_read_builder().with_limit(10)
    assert limited.new_read().to_arrow(limited.new_scan().plan().splits()).num_rows == 10


def test_null_partition_values_use_the_default_partition(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("h", pa.int32())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt", "h"]))
    table = catalog.get_table("db.t")
    data = pa.table({"id": [1, 2, 3], "dt": ["x", None, "x"], "h": [1, 1, None]})
    write_commit(table, data)
    dirs = sorted(
        os.path.relpath(root, table.path)
        for root, _, files in os.walk(table.path)
        if any(f.startswith("data-") for f in files)
    )
    assert dirs == [
        "dt=__DEFAULT_PARTITION__/h=1/bucket-0",
        "dt=x/h=1/bucket-0",
        "dt=x/h=__DEFAULT_PARTITION__/bucket-0",
    ]
    assert sort_rows(read_all(table)) == sort_rows(data)
    rb = table.new_read_builder()
    only_null = rb.with_filter(rb.new_predicate_builder().is_null("dt"))
    assert only_null.new_read().to_arrow(only_null.new_scan().plan().splits()).num_rows == 1


def test_bucket_key_with_unaware_bucket_is_rejected(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(OptionError) as err:
        catalog.create_table(
            "db.t", Schema.from_pyarrow_schema(schema, options={"bucket": "-1", "bucket-key": "id"})
        )
    assert str(err.value) == (
        "Cannot define 'bucket-key' with bucket = -1, please remove the 'bucket-key' setting "
        "or specify a bucket number."
    )
    assert not os.path.exists(catalog.table_path("db.t"))


def test_schema_mismatch_names_the_offending_fields(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    write = table.new_batch_write_builder().new_write()
    with pytest.raises(
        SchemaMismatchError, match=r"missing fields \['name'\].*unknown fields \['nme'\]"
    ):
        write.write_arrow(pa.table({"id": [1], "nme": ["x"]}))
    with pytest.raises(SchemaMismatchError, match="field 'id' has type string"):
        write.write_arrow(pa.table({"id": ["not a number"], "name": ["x"]}))
    write.write_arrow(pa.table({"name": ["reordered"], "id": pa.array([7], pa.int32())}))
    write.close()


def test_null_into_not_null_column_names_the_column(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    write = catalog.get_table("db.t").new_batch_write_builder().new_write()
    with pytest.raises(NullViolationError, match="field 'id' is NOT NULL"):
        write.write_arrow(pa.table({"id": [1, None], "v": ["a", "b"]}))
    write.close()


def test_catalog_errors_name_the_database_or_table(catalog: FileSystemCatalog) -> None:
    schema = Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())]))
    with pytest.raises(TableNotExistError, match="'db.missing'"):
        catalog.get_table("db.missing")
    with pytest.raises(DatabaseNotExistError, match="'nodb'"):
        catalog.get_table("nodb.t")
    with pytest.raises(DatabaseNotExistError, match="'nodb'"):
        catalog.create_table("nodb.t", schema)
    catalog.create_table("db.t", schema)
    with pytest.raises(TableAlreadyExistError, match="'db.t'"):
        catalog.create_table("db.t", schema)
    catalog.create_table("db.t", schema, ignore_if_exists=True)
    assert catalog.list_tables("db") == ["t"]
    assert catalog.list_databases() == ["db"]
    catalog.drop_table("db.t")
    assert catalog.list_tables("db") == []


def test_unsupported_options_raise(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(UnsupportedOptionError, match="file.format 'lance'"):
        catalog.create_table(
            "db.t", Schema.from_pyarrow_schema(schema, options={"file.format": "lance"})
        )


def test_corrupt_or_missing_metadata_gives_a_clear_error(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    write_commit(table, pa.table({"id": [1, 2]}))
    snapshot_file = Path(table.path) / "snapshot" / "snapshot-1"
    text = snapshot_file.read_text()
    snapshot_file.write_text("{ not json")
    with pytest.raises(CorruptTableError, match="snapshot-1"):
        read_all(table)
    snapshot_file.write_text(text)
    for manifest in (Path(table.path) / "manifest").iterdir():
        manifest.unlink()
    with pytest.raises(CorruptTableError, match="is missing"):
        read_all(table)


def test_pandas_in_and_out_and_batch_reader(catalog: FileSystemCatalog) -> None:
    import pandas as pd

    schema = pa.schema([("id", pa.int64()), ("name", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_pandas(pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", None]}))
        builder.new_commit().commit(write.prepare_commit())
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    df = rb.new_read().to_pandas(splits)
    assert df.sort_values("id")["name"].tolist() == ["a", "b", None]
    reader = rb.with_limit(2).new_read().to_arrow_batch_reader(splits)
    assert reader.schema.names == ["id", "name"]
    assert sum(b.num_rows for b in reader) == 2


def test_nested_rows_with_null_parents_survive_orc(catalog: FileSystemCatalog) -> None:
    """Struct children that are valid under a null parent (Arrow allows it) round-trip."""
    n = 200
    ids = pa.array(range(n), pa.int64())
    inner = pa.StructArray.from_arrays(
        [pa.array(range(n), pa.int32()), pa.array([f"b{i}" for i in range(n)])],
        names=["a", "b"],
        mask=pa.array([i % 4 == 0 for i in range(n)]),
    )
    outer = pa.StructArray.from_arrays(
        [inner, pa.array(range(n), pa.int64())],
        names=["x", "y"],
        mask=pa.array([i % 3 == 0 for i in range(n)]),
    )
    data = pa.table({"id": ids, "r": outer})
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(data.schema, options={"file.format": "orc"})
    )
    table = catalog.get_table("db.t")
    write_commit(table, data)
    assert sort_rows(read_all(table)) == sort_rows(data)


def test_dynamic_options_cannot_change_the_bucket_layout(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    with pytest.raises(OptionError, match="'bucket' cannot be changed"):
        table.copy({"bucket": "4", "bucket-key": "id"})
    assert table.copy({"bucket": "-1", "file.format": "orc"}).options.file_format == "orc"


def test_file_uris_with_one_or_three_slashes_are_local_paths(tmp_path: Path) -> None:
    from paimon_pyspark.fs.file_io import FileIO

    for uri in (f"file:{tmp_path}/w", f"file://{tmp_path}/w"):
        _, path = FileIO.for_uri(uri)
        assert path == f"{tmp_path}/w"
