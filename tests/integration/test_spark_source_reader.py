"""The paimon Data Source's reader driven as Spark drives it, without a SparkSession: what
crosses to the executors, and what a bound filter and column list plan and read."""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest
from tests.unit.spec.test_versioned_record import data_file

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, PredicateError, SchemaMismatchError
from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.spark.datasource import PaimonDataSource
from paimon_pyspark.spark.relation import pack_splits

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.float64()), ("dt", pa.string())])


def _table(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    for c in range(2):
        ids = list(range(c * 100, c * 100 + 100))
        data = pa.table(
            {"id": ids, "v": [i / 4 for i in ids], "dt": [f"d{i % 4}" for i in ids]}, schema=SCHEMA
        )
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(data)
            builder.new_commit().commit(write.prepare_commit())


def _rows(source: PaimonDataSource) -> list[dict[str, object]]:
    reader = source.reader(source.schema())
    out: list[dict[str, object]] = []
    for partition in reader.partitions():
        for batch in reader.read(partition):
            out.extend(batch.to_pylist())
    return out


def test_input_partitions_carry_versioned_bytes_not_pickled_splits(
    catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog)
    source = PaimonDataSource({"warehouse": warehouse, "table": "db.t", "parallelism": "4"})
    reader = source.reader(source.schema())
    partitions = reader.partitions()
    assert 4 <= len(partitions) <= 8  # 8 one-file splits (an append table) over 4 cores
    for p in partitions:
        assert isinstance(p.value, bytes) and p.value[:4] == b"PPdl"
        assert b"DataSplit" not in pickle.dumps(p)
    assert sorted(r["id"] for r in _rows(source)) == list(range(200))  # type: ignore[type-var]
    one = PaimonDataSource({"warehouse": warehouse, "table": "db.t", "parallelism": "1"})
    assert len(one.reader(one.schema()).partitions()) == 1  # small splits share a task
    assert sorted(r["id"] for r in _rows(one)) == list(range(200))  # type: ignore[type-var]


def _split(name: str, sizes: list[int]) -> DataSplit:
    files = tuple(data_file(f"{name}-{i}", file_size=size) for i, size in enumerate(sizes))
    return DataSplit(1, b"", (), 0, "/nowhere", files)


def test_pack_splits_groups_as_spark_groups_files() -> None:
    mb = 1024 * 1024
    small = [_split(f"s{i}", [mb]) for i in range(40)]  # 5 MiB each with the open cost
    assert [len(g) for g in pack_splits(small, 2, 4 * mb)] == [20, 20]
    assert len(pack_splits(small, 40, 4 * mb)) == 40  # never fewer tasks than cores
    big = _split("big", [300 * mb])
    groups = pack_splits([big, *small[:3]], 1, 4 * mb)
    assert groups[0] == [big] and sum(len(g) for g in groups) == 4  # 128 MiB at most
    assert pack_splits([], 2, 4 * mb) == []
    # 8 files of 1.2 MiB on 2 cores: Spark's limit is half their weight, and a file joins a
    # partition while its bytes (not its open cost) fit, so 2 tasks, not 3
    eight = [_split(f"e{i}", [mb + mb // 5 + i]) for i in range(8)]
    assert [len(g) for g in pack_splits(eight, 2, 4 * mb)] == [4, 4]


def test_filter_and_columns_options_plan_and_read_only_what_they_keep(
    catalog: FileSystemCatalog, warehouse: str
) -> None:
    _table(catalog)
    opts = {"warehouse": warehouse, "table": "db.t", "filter": "dt = 'd1' AND id >= 100"}
    source = PaimonDataSource({**opts, "columns": "v, id"})
    assert source.schema().fieldNames() == ["v", "id"]
    assert len(source.reader(source.schema()).partitions()) == 1  # one partition, one bucket
    rows = _rows(source)
    assert sorted(r["id"] for r in rows) == [i for i in range(100, 200) if i % 4 == 1]  # type: ignore[type-var]
    assert set(rows[0]) == {"v", "id"}


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"filter": "nope = 1"}, PredicateError, "no field 'nope'"),
        ({"filter": "id = "}, PredicateError, "id = "),
        ({"columns": "id,,v"}, OptionError, "field names separated by commas"),
        ({"columns": "id,ID"}, OptionError, "names a field twice"),
        ({"columns": "id,nope"}, SchemaMismatchError, "nope"),
        ({"parallelism": "0"}, OptionError, "parallelism"),
    ],
)
def test_bad_filter_or_columns_fail_at_load_with_typed_errors(
    catalog: FileSystemCatalog,
    warehouse: str,
    options: dict[str, str],
    error: type[Exception],
    match: str,
) -> None:
    _table(catalog)
    source = PaimonDataSource({"warehouse": warehouse, "table": "db.t", **options})
    with pytest.raises(error, match=match):
        source.schema()
