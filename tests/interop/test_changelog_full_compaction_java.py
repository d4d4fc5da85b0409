"""``changelog-producer = full-compaction`` against Java 1.4.2: Java's Flink-style stream write
(``FullChangelogOracle.write``: a full compaction of the buckets written since the last one at
every ``delta``-th commit) and ours write the same commits into twin tables; each commit's
changelog files then hold the same records, row kinds and sequence numbers, in the same
order, for every merge engine Java allows with the producer, and with
``changelog-producer.row-deduplicate``."""

from __future__ import annotations

import json
import os
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle
from tests.integration.test_changelog_full_compaction import COMMITS, ENGINE_OPTIONS, KINDS

from paimon_pyspark import FileStoreTable, Schema
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.key_value import ROW_KIND_NAMES, SEQUENCE_NUMBER, VALUE_KIND
from paimon_pyspark.store.paths import PathFactory

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])

CASES = {
    "deduplicate": ("deduplicate", 1, {}),
    "partial-update": ("partial-update", 1, {}),
    "aggregation": ("aggregation", 1, {}),
    "delta-2-row-deduplicate": (
        "deduplicate",
        2,
        {
            "changelog-producer.row-deduplicate": "true",
            "changelog-producer.row-deduplicate-ignore-fields": "b",
        },
    ),
}


DEDUPLICATED = [[["+I", 2, 2, "changed"]], [["+I", 6, 60, "f2"], ["+I", 1, 8, None]]]
"""Two more commits for the row-deduplicate case: keys 2 and 6 change only in ``b``."""


def _commits(row_deduplicate: bool) -> list[list[list[Any]]]:
    """COMMITS as changes: each deleted key's -D carries the row it deletes (any values do)."""
    out = []
    for upserts, deleted in COMMITS:
        rows = [["-D", k, 0, "x"] for k in deleted] + [["+I", *r] for r in upserts]
        out.append(rows)
    return out + DEDUPLICATED if row_deduplicate else out


def _create(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _changelog(table: FileStoreTable, first: int, last: int) -> list[tuple[Any, ...]]:
    """(kind, id, a, b, sequence number) of the changelog files of snapshots first..last."""
    store = table.store
    mio = store.manifest_io
    out: list[tuple[Any, ...]] = []
    for sid in range(first, last + 1):
        snapshot = store.snapshot_manager.snapshot(sid)
        if not snapshot.changelog_manifest_list:
            continue
        for e in mio.read_entries(mio.read_manifest_list(snapshot.changelog_manifest_list)):
            values = deserialize_with_arity(e.partition, store.partition_types)
            path = PathFactory(store.path).bucket_path(store.partition_rel_path(values), e.bucket)
            records = read_kv_records(store, path, [e.file])
            for r in records.to_pylist():
                kind = KINDS[r[VALUE_KIND]]
                out.append((kind, r["id"], r["a"], r["b"], r[SEQUENCE_NUMBER]))
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_full_compaction_changelog_matches_java(
    java_oracle: JavaOracle, catalog: FileSystemCatalog, warehouse: str, case: str
) -> None:
    engine, delta, extra = CASES[case]
    options = {
        "bucket": "1",
        "changelog-producer": "full-compaction",
        "full-compaction.delta-commits": str(delta),
        "merge-engine": engine,
        **ENGINE_OPTIONS[engine],
        **extra,
    }
    java_table = _create(catalog, "j", options)
    ours = _create(catalog, "p", options)
    commits = _commits(bool(extra))
    oracle = java_oracle._gateway.jvm.paimonoracle.FullChangelogOracle
    java_ids = json.loads(oracle.write(os.fspath(warehouse), "db", "j", json.dumps(commits), delta))

    builder = ours.new_stream_write_builder("ours")
    write, commit = builder.new_write(), builder.new_commit()
    our_ids = []
    with write:
        for identifier, rows in enumerate(commits, start=1):
            data = pa.Table.from_pylist(
                [dict(zip(SCHEMA.names, r[1:], strict=True)) for r in rows], SCHEMA
            )
            kinds = [ROW_KIND_NAMES[r[0]] for r in rows]
            write.write_arrow(data, row_kinds=kinds)
            commit.commit(write.prepare_commit(identifier), identifier)
            our_ids.append(ours.snapshot_manager.latest_id())

    assert our_ids == java_ids
    produced = 0
    for i, last in enumerate(java_ids):
        first = (java_ids[i - 1] if i else 0) + 1
        expected = _changelog(java_table, first, last)
        assert _changelog(ours, first, last) == expected, f"commit {i + 1}"
        produced += len(expected)
    assert produced > 0
    if extra:  # the last full compaction reports key 1 only
        assert [c[:2] for c in _changelog(ours, java_ids[-2] + 1, java_ids[-1])] == [
            ("-U", 1),
            ("+U", 1),
        ]
