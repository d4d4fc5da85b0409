"""Two writers of one ``format("paimon")`` job sharing dynamic buckets: each writes the
buckets' index files, the driver's merge leaves one per bucket with every key of both, and the
committed table reads each key once."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.bucket.door_assigner import agreed_buckets
from paimon_pyspark.bucket.routers import KeyHasher
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.store.deletion_vectors import index_handler_of as index_handler
from paimon_pyspark.store.index_io import HASH_INDEX
from paimon_pyspark.write.agreed_buckets import merge_hash_index_files, route_agreed

SCHEMA = pa.schema([pa.field("pk", pa.int64(), nullable=False), ("v", pa.string())])


def test_shared_buckets_get_one_merged_index_file_each(tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "-1", "dynamic-bucket.target-row-num": "10"}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["pk"], options=options)
    )
    table = catalog.get_table("db.t")
    agreed = agreed_buckets(table.store, 2)
    builder = table.new_batch_write_builder()
    messages: list[CommitMessage] = []
    for task, keys in enumerate((range(0, 30), range(15, 45))):
        with builder.new_write((task, 1 << 16)) as w:
            route_agreed(w, agreed)
            w.write_arrow(pa.table({"pk": list(keys), "v": [f"t{task}"] * 30}, schema=SCHEMA))
            messages += w.prepare_commit()
    shared = {m.bucket for m in messages if sum(x.bucket == m.bucket for x in messages) > 1}
    assert shared  # both writers wrote some bucket

    merged = merge_hash_index_files(table.store, messages)
    assert len(merged.written) == len(shared) and len(merged.superseded) == 2 * len(shared)
    builder.new_commit().commit(merged.messages)
    handler = index_handler(table.store)
    handler.delete_quietly(merged.superseded)

    entries = handler.scan(table.store.snapshot_manager.latest(), HASH_INDEX)
    index = {e.bucket: set(handler.read_hash(e.index_file).tolist()) for e in entries}
    assert len(index) == len(entries)
    rb = table.new_read_builder()
    rebuilt: dict[int, set[int]] = {}
    pks: list[int] = []
    for split in rb.new_scan().plan().splits():
        rows = rb.new_read().to_arrow([split])
        rebuilt.setdefault(split.bucket, set()).update(KeyHasher(table.store).hashes(rows).tolist())
        pks += rows.column("pk").to_pylist()
    assert sorted(pks) == list(range(45))
    assert rebuilt == index
    left = {f.name for f in (tmp_path / "db.db" / "t" / "index").iterdir()}
    assert left == {e.index_file.file_name for e in entries}
