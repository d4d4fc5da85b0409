"""``df.write.format("paimon")`` into dynamic-bucket (HASH_DYNAMIC) tables: tasks that cannot
shuffle give every key one bucket (bucket/door_assigner.py), the driver merges their index
files per bucket (write/agreed_buckets.py), and the hash index equals the one the data files
rebuild."""

from __future__ import annotations

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.bucket.routers import KeyHasher
from paimon_pyspark.store.index_io import HASH_INDEX, IndexFileHandler

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

TARGET = 50
SCHEMA = pa.schema(
    [
        pa.field("pk", pa.int64(), nullable=False),
        ("v", pa.string()),
        pa.field("pt", pa.int64(), nullable=False),
    ]
)


def _create(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["pt"],
            primary_keys=["pk", "pt"],
            options={"bucket": "-1", "dynamic-bucket.target-row-num": str(TARGET)},
        ),
    )
    return catalog.get_table("db.t")


def _save(df: DataFrame, warehouse: str, mode: str = "append") -> None:
    writer = df.write.format("paimon").option("warehouse", warehouse).option("table", "db.t")
    writer.option("parallelism", "4").mode(mode).save()


def _frame(spark: SparkSession, rows: list[tuple[int, str, int]]) -> DataFrame:
    return spark.createDataFrame(rows, "pk long, v string, pt long").repartition(4)


def key_places(table: FileStoreTable) -> dict[tuple[int, int], list[tuple[str, int]]]:
    """(pt, pk) -> every (value, bucket) our reader returns for it."""
    out: dict[tuple[int, int], list[tuple[str, int]]] = {}
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        for r in rb.new_read().to_arrow([split]).to_pylist():
            out.setdefault((r["pt"], r["pk"]), []).append((r["v"], split.bucket))
    return out


def assert_index_is_the_data(table: FileStoreTable) -> None:
    """One HASH file per (partition, bucket), holding exactly the key hashes of the rows the
    data files put in that bucket: the index rebuilt from the data is the one committed."""
    store = table.store
    handler = IndexFileHandler(store.file_io, store.path, store.manifest_io.codec)
    entries = handler.scan(store.snapshot_manager.latest(), HASH_INDEX)
    places = [(e.partition, e.bucket) for e in entries]
    assert len(places) == len(set(places))
    index = {
        (e.partition, e.bucket): set(handler.read_hash(e.index_file).tolist()) for e in entries
    }
    hasher = KeyHasher(store)
    rebuilt: dict[tuple[bytes, int], set[int]] = {}
    rb = table.new_read_builder()
    for split in rb.new_scan().plan().splits():
        rows = rb.new_read().to_arrow([split])
        rebuilt.setdefault((split.partition, split.bucket), set()).update(
            hasher.hashes(rows).tolist()
        )
    assert rebuilt == index
    for partition in {p for p, _ in index}:
        owned = [h for (p, _), hs in index.items() if p == partition for h in hs]
        assert len(owned) == len(set(owned))  # no hash in two buckets of a partition


def bucket_sizes(table: FileStoreTable) -> dict[int, list[int]]:
    """pt -> the key count of each of its buckets, largest first."""
    sizes: dict[tuple[int, int], int] = {}
    for (pt, _), places in key_places(table).items():
        bucket = places[0][1]
        sizes[(pt, bucket)] = sizes.get((pt, bucket), 0) + 1
    out: dict[int, list[int]] = {}
    for (pt, _), n in sizes.items():
        out.setdefault(pt, []).append(n)
    return {pt: sorted(ns, reverse=True) for pt, ns in out.items()}


def test_four_tasks_two_jobs_every_key_exactly_once_and_index_is_the_data(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = _create(catalog)
    # every key twice, in two rows that repartition(4) deals to different tasks
    first = [(k, f"{tag}-{k}", k % 2) for k in range(400) for tag in ("a", "A")]
    _save(_frame(spark, first), warehouse)
    after_first = bucket_sizes(table)
    second = [(k, f"b-{k}", k % 2) for k in range(200, 600) for _ in range(2)]
    _save(_frame(spark, second), warehouse)

    places = key_places(table)
    assert len(places) == 600
    assert all(len(p) == 1 for p in places.values())
    for (pt, pk), [(v, _)] in places.items():
        assert pt == pk % 2
        assert v == f"b-{pk}" if pk >= 200 else v in (f"a-{pk}", f"A-{pk}")
    assert_index_is_the_data(table)
    # job 1: 200 new keys per partition over 4 open buckets of 50; job 2: the 100 new keys
    # of each partition over 4 new buckets (the partition doubles), old keys stay put
    assert {pt: len(s) for pt, s in after_first.items()} == {0: 4, 1: 4}
    assert all(abs(n - TARGET) <= 15 for s in after_first.values() for n in s), after_first
    sizes = bucket_sizes(table)
    assert {pt: len(s) for pt, s in sizes.items()} == {0: 8, 1: 8}, sizes
    assert all(n <= TARGET + 15 for s in sizes.values() for n in s), sizes


def test_overwrite_of_a_dynamic_bucket_partition_rebuilds_its_index(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str
) -> None:
    table = _create(catalog)
    _save(_frame(spark, [(k, f"a-{k}", k % 2) for k in range(300)]), warehouse)
    again = [(k, f"o-{k}", 0) for k in range(100, 500, 2) for _ in range(2)]
    _save(_frame(spark, again), warehouse, mode="overwrite")

    places = key_places(table)
    assert all(len(p) == 1 for p in places.values())
    expected = {(1, k): f"a-{k}" for k in range(1, 300, 2)}
    expected.update({(0, k): f"o-{k}" for k in range(100, 500, 2)})
    assert {key: p[0][0] for key, p in places.items()} == expected
    assert_index_is_the_data(table)
