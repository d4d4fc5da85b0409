"""Tables and reads pickle as plain values and reload from the warehouse (pypaimon's do too;
Ray ships them to its tasks): a round trip reads the same rows, and the pickle names nothing
but the two functions that reload."""

from __future__ import annotations

import io
import pickle
import shutil
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import TableNotExistError
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.store.schema_change import SchemaChange

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("name", pa.string()),
        ("price", pa.decimal128(10, 2)),
    ]
)
ROWS_1 = pa.table(
    {
        "id": [1, 2, 3, 4],
        "dt": ["a", "a", "b", "b"],
        "name": ["x", None, "z", "w"],
        "price": [pa.scalar(v, pa.decimal128(10, 2)).as_py() for v in (1, 2, 3, 4)],
    },
    schema=SCHEMA,
)
ROWS_2 = pa.table(
    {
        "id": [3, 5],
        "dt": ["b", "a"],
        "name": ["z2", "v"],
        "price": [pa.scalar(v, pa.decimal128(10, 2)).as_py() for v in (30, 5)],
    },
    schema=SCHEMA,
)
ALLOWED = {
    ("paimon_pyspark.table.file_store_table", "FileStoreTable.of"),
    ("paimon_pyspark.read.store_ref", "load_store"),
    ("paimon_pyspark.read.table_read", "_reopen"),
    ("decimal", "Decimal"),
}


class _Recorder(pickle.Unpickler):
    """Unpickles while recording every global the pickle names."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.names: set[tuple[str, str]] = set()

    def find_class(self, module: str, name: str) -> Any:
        self.names.add((module, name))
        return super().find_class(module, name)


def round_trip(obj: object) -> tuple[Any, set[tuple[str, str]]]:
    recorder = _Recorder(pickle.dumps(obj))
    return recorder.load(), recorder.names


def make_table(catalog: FileSystemCatalog, primary_key: bool) -> FileStoreTable:
    options = {"bucket": "2"} if primary_key else {}
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["dt"],
            primary_keys=["id", "dt"] if primary_key else [],
            options=options,
        ),
    )
    return catalog.get_table("db.t")


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_table_round_trip_reads_the_same_rows_and_pickles_only_plain_values(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    table = make_table(catalog, primary_key)
    write_commit(table, ROWS_1)
    write_commit(table, ROWS_2)

    restored, names = round_trip(table)

    assert isinstance(restored, FileStoreTable)
    assert names <= ALLOWED, names - ALLOWED
    assert (restored.name, restored.path) == (table.name, table.path)
    assert restored.table_schema.id == table.table_schema.id
    assert restored.primary_keys == table.primary_keys
    assert sort_rows(read_all(restored)) == sort_rows(read_all(table))
    assert read_all(restored).num_rows == (5 if primary_key else 6)


def test_table_copy_keeps_its_dynamic_options_through_pickle(catalog: FileSystemCatalog) -> None:
    """A handle pinned at snapshot 1 still reads snapshot 1 after a pickle round trip."""
    table = make_table(catalog, primary_key=True)
    write_commit(table, ROWS_1)
    write_commit(table, ROWS_2)
    pinned = table.copy({"scan.snapshot-id": "1"})

    restored, _ = round_trip(pinned)

    assert restored.dynamic_options == {"scan.snapshot-id": "1"}
    assert sort_rows(read_all(restored)) == sort_rows(ROWS_1)


def test_table_reloads_with_the_schema_it_was_opened_with(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, primary_key=False)
    write_commit(table, ROWS_1)
    data = pickle.dumps(table)
    catalog.alter_table("db.t", [SchemaChange.add_column("extra", pa.int32())])

    restored = pickle.loads(data)

    assert restored.field_names == ["id", "dt", "name", "price"]
    assert catalog.get_table("db.t").field_names[-1] == "extra"
    assert sort_rows(read_all(restored)) == sort_rows(ROWS_1)


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_table_read_round_trip_keeps_projection_filter_and_limit(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    table = make_table(catalog, primary_key)
    write_commit(table, ROWS_1)
    write_commit(table, ROWS_2)
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    predicate = pb.and_(
        pb.or_(pb.greater_than("price", 2), pb.is_null("name")),
        pb.is_in("dt", ["a", "b"]),
    )
    rb = rb.with_filter(predicate).with_projection(["name", "id", "price"])
    read = rb.new_read()
    splits = rb.new_scan().plan().splits()

    restored, names = round_trip(read)

    assert isinstance(restored, TableRead)
    assert names <= ALLOWED, names - ALLOWED
    assert restored.projection == ["name", "id", "price"]
    assert str(restored.predicate) == str(read.predicate)
    expected = read.to_arrow(splits)
    assert expected.num_rows > 0
    assert sort_rows(restored.to_arrow(splits)) == sort_rows(expected)

    limited, _ = round_trip(table.new_read_builder().with_limit(2).new_read())
    assert limited.limit == 2
    assert limited.to_arrow(splits).num_rows == 2


def test_unpickling_a_dropped_table_raises_table_not_exist(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, primary_key=False)
    data = pickle.dumps(table)
    shutil.rmtree(table.path)

    with pytest.raises(TableNotExistError, match="db.t"):
        pickle.loads(data)
