"""What tests/fuzz found, each pinned as a plain test: a typed error at create or at the call,
never a raw Python or pyarrow error, and never a table that was created and then cannot be read
or written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    CorruptTableError,
    InvalidArgumentError,
    OptionError,
    SchemaError,
    SchemaMismatchError,
    UnsupportedTypeError,
)

KV = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.string())])


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    c = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    c.create_database("db")
    return c


def _schema_dir(catalog: FileSystemCatalog, name: str) -> Path:
    return Path(catalog.warehouse) / "db.db" / name / "schema"


def _write(catalog: FileSystemCatalog, name: str, data: pa.Table) -> None:
    table = catalog.get_table(f"db.{name}")
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def test_a_garbage_manifest_codec_is_refused_at_create(catalog: FileSystemCatalog) -> None:
    with pytest.raises(OptionError, match=r"manifest\.compression.*'k'"):
        catalog.create_table(
            "db.t", Schema.from_pyarrow_schema(KV, options={"manifest.compression": "k"})
        )
    assert not _schema_dir(catalog, "t").exists()


@pytest.mark.parametrize("key", ["rowkind.field", "sequence.field"])
def test_an_option_naming_no_column_is_refused_at_create(
    catalog: FileSystemCatalog, key: str
) -> None:
    schema = Schema.from_pyarrow_schema(KV, primary_keys=["k"], options={"bucket": "1", key: "x"})
    with pytest.raises(OptionError, match=rf"{key}.*'x'"):
        catalog.create_table("db.t", schema)
    assert not _schema_dir(catalog, "t").exists()


def test_a_primary_key_equal_to_the_partition_keys_is_refused_at_create(
    catalog: FileSystemCatalog,
) -> None:
    schema = Schema.from_pyarrow_schema(KV, partition_keys=["k"], primary_keys=["k"])
    with pytest.raises(SchemaError, match="partition"):
        catalog.create_table("db.t", schema)


@pytest.mark.parametrize("name", ["_SEQUENCE_NUMBER", "_VALUE_KIND", "rowkind", "_KEY_k"])
def test_system_field_names_are_refused_at_create(catalog: FileSystemCatalog, name: str) -> None:
    schema = Schema.from_pyarrow_schema(KV.append(pa.field(name, pa.int64())), primary_keys=["k"])
    with pytest.raises(SchemaError, match=name):
        catalog.create_table("db.t", schema)


def test_a_key_column_named_with_a_leading_dot_is_written_and_merged(
    catalog: FileSystemCatalog,
) -> None:
    schema = pa.schema([pa.field("k", pa.int64(), False), pa.field(".x", pa.int64(), False)])
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            schema.append(pa.field("v", pa.int64())),
            primary_keys=["k", ".x"],
            options={"bucket": "1"},
        ),
    )
    _write(catalog, "t", pa.table({"k": [1, 1], ".x": [2, 2], "v": [1, 2]}))
    _write(catalog, "t", pa.table({"k": [1], ".x": [2], "v": [3]}))
    table = catalog.get_table("db.t")
    rb = table.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist() == [
        {"k": 1, ".x": 2, "v": 3}
    ]


def test_orc_refuses_time_with_microseconds_at_create(catalog: FileSystemCatalog) -> None:
    schema = Schema.from_pyarrow_schema(
        pa.schema([("t", pa.time64("us"))]), options={"file.format": "orc"}
    )
    with pytest.raises(UnsupportedTypeError, match="TIME"):
        catalog.create_table("db.t", schema)


def test_orc_refuses_a_timestamp_it_could_not_read_back(catalog: FileSystemCatalog) -> None:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            pa.schema([("ts", pa.timestamp("s"))]), options={"file.format": "orc"}
        ),
    )
    old = pa.table({"ts": pa.array([dt.datetime(1, 1, 1)], pa.timestamp("s"))})
    with pytest.raises(SchemaMismatchError, match="0001-01-01"):
        _write(catalog, "t", old)
    assert not list((Path(catalog.warehouse) / "db.db" / "t").glob("snapshot/snapshot-*"))
    _write(catalog, "t", pa.table({"ts": pa.array([dt.datetime(2020, 1, 1)], pa.timestamp("s"))}))


def _committed(catalog: FileSystemCatalog) -> Path:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(KV))
    _write(catalog, "t", pa.table({"k": [1], "v": ["a"]}, schema=KV))
    return Path(catalog.warehouse) / "db.db" / "t"


def test_a_snapshot_that_is_not_utf8_is_a_corrupt_table(catalog: FileSystemCatalog) -> None:
    snapshot = _committed(catalog) / "snapshot" / "snapshot-1"
    snapshot.write_bytes(snapshot.read_bytes() + b"\xfb")
    with pytest.raises(CorruptTableError, match="snapshot-1"):
        rb = catalog.get_table("db.t").new_read_builder()
        rb.new_read().to_arrow(rb.new_scan().plan().splits())


@pytest.mark.parametrize("text", ["null", "[]", "5"])
def test_a_snapshot_holding_other_json_is_a_corrupt_table(
    catalog: FileSystemCatalog, text: str
) -> None:
    (_committed(catalog) / "snapshot" / "snapshot-1").write_text(text)
    with pytest.raises(CorruptTableError, match="snapshot-1"):
        rb = catalog.get_table("db.t").new_read_builder()
        rb.new_read().to_arrow(rb.new_scan().plan().splits())


def test_a_manifest_whose_header_renamed_a_field_is_a_corrupt_table(
    catalog: FileSystemCatalog,
) -> None:
    table_dir = _committed(catalog)
    for manifest in (table_dir / "manifest").glob("manifest-*"):
        if manifest.name.startswith("manifest-list"):
            continue
        data = manifest.read_bytes()
        assert b"_MAX_VALUES" in data
        manifest.write_bytes(data.replace(b"_MAX_VALUES", b"_MAX_VALUEZ", 1))
    with pytest.raises(CorruptTableError, match="manifest"):
        rb = catalog.get_table("db.t").new_read_builder()
        rb.new_read().to_arrow(rb.new_scan().plan().splits())


@pytest.mark.parametrize("junk", [None, 5, pa.table({"k": [1]})])
def test_create_table_and_from_pyarrow_schema_refuse_junk(
    catalog: FileSystemCatalog, junk: object
) -> None:
    with pytest.raises(InvalidArgumentError):
        catalog.create_table("db.t", junk)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError):
        Schema.from_pyarrow_schema(junk)  # type: ignore[arg-type]


def test_commit_of_none_is_a_typed_error(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(KV))
    commit = catalog.get_table("db.t").new_batch_write_builder().new_commit()
    with pytest.raises(InvalidArgumentError, match="NoneType"):
        commit.commit(None)  # type: ignore[arg-type]


def test_parquet_with_a_nanosecond_column_refuses_a_timestamp_int96_cannot_hold(
    catalog: FileSystemCatalog,
) -> None:
    """A TIMESTAMP(7..9) column makes every timestamp of the file INT96 (as Java writes it),
    read back as nanoseconds: year 1 in a TIMESTAMP(0) column beside it would be unreadable."""
    schema = pa.schema([("ts", pa.timestamp("ms")), ("ns", pa.timestamp("ns"))])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    old = pa.table({"ts": [dt.datetime(1, 1, 1)], "ns": [None]}, schema=schema)
    with pytest.raises(SchemaMismatchError, match="0001-01-01"):
        _write(catalog, "t", old)
    now = pa.table({"ts": [dt.datetime(2020, 1, 1)], "ns": [None]}, schema=schema)
    _write(catalog, "t", now)
    rb = catalog.get_table("db.t").new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 1
