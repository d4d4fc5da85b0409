"""``changelog-producer = input``, ours against Java 1.4.2's: the same commits (one stream
write, identifiers 1..4, two buckets, with a deletion-vector and a plain table) give, snapshot
by snapshot, the same commit kinds, the same changelog fields (present with the same record
count, or absent), and changelog files holding the same records in the same order per bucket
(key, then sequence); Java's stream scan reads ours and returns what it returns for its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from changelog_oracle import Change, by_key, snapshot_changelogs, stream_changes, write_commits
from java_oracle import JavaOracle

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.paths import PathFactory

pytestmark = [pytest.mark.java, pytest.mark.slow]

FIELDS = [("id", "INT NOT NULL"), ("v", "STRING")]
SCHEMA = pa.schema([pa.field("id", pa.int32(), nullable=False), ("v", pa.string())])
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
COMMITS: list[list[Change]] = [
    [["+I", k, f"a{k}"] for k in range(1, 9)] + [["+I", 3, "a3b"]],
    [["-U", 1, "a1"], ["+U", 1, "b1"], ["-D", 2, "a2"], ["+I", 9, "a9"], ["+I", 4, "b4"]],
    [["-D", 9, "a9"], ["+I", 2, "c2"], ["-U", 4, "b4"], ["+U", 4, "c4"]],
    [["+I", k, f"d{k}"] for k in range(5, 12)],
]


def _ours(warehouse: Path, options: dict[str, str]) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.ours", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    table = catalog.get_table("db.ours")
    builder = table.new_stream_write_builder()
    with builder.new_write() as write:
        commit = builder.new_commit()
        for identifier, changes in enumerate(COMMITS, start=1):
            data = pa.Table.from_pylist([{"id": c[1], "v": c[2]} for c in changes], SCHEMA)
            write.write_arrow(data, row_kinds=[KINDS[c[0]] for c in changes])
            commit.commit(write.prepare_commit(identifier), identifier)
    return table


def _files(table: FileStoreTable, snapshot: Snapshot) -> dict[int, list[Change]]:
    """Per bucket, the records of the snapshot's changelog files in file order, each file's
    metadata after its records (all of it but its name's uuid, size and creation time)."""
    out: dict[int, list[Change]] = {}
    if snapshot.changelog_manifest_list is None:
        return out
    mio = table.store.manifest_io
    names = {v: k for k, v in KINDS.items()}
    for e in mio.read_entries(mio.read_manifest_list(snapshot.changelog_manifest_list)):
        path = PathFactory(table.path).bucket_path("", e.bucket)
        records = read_kv_records(table.store, path, [e.file]).to_pylist()
        out.setdefault(e.bucket, []).extend(
            [names[r["_VALUE_KIND"]], r["id"], r["v"]] for r in records
        )
        f = e.file
        meta = [f.row_count, f.min_key, f.max_key, f.key_stats, f.value_stats, f.level]
        meta += [f.min_sequence_number, f.max_sequence_number, f.delete_row_count]
        meta += [f.file_source, f.value_stats_cols, f.file_name.split("-")[0]]
        out[e.bucket].append(meta)
    return out


def _view(table: FileStoreTable) -> list[tuple[str, int | None, dict[int, list[Change]]]]:
    sm = table.snapshot_manager
    shots = [sm.snapshot(i) for i in sm.list_ids()]
    return [(s.commit_kind, s.changelog_record_count, _files(table, s)) for s in shots]


@pytest.mark.parametrize("dv", [False, True])
def test_input_changelog_as_java_writes_it(
    java_oracle: JavaOracle, tmp_path: Path, dv: bool
) -> None:
    options = {
        "bucket": "2",
        "changelog-producer": "input",
        "deletion-vectors.enabled": str(dv).lower(),
    }
    if dv:  # and the changelog file options, which Java's files then follow too
        options |= {"changelog-file.stats-mode": "none", "changelog-file.prefix": "cl-"}
    java_oracle.create_table(tmp_path, "db", "java", FIELDS, primary_keys=["id"], options=options)
    write_commits(java_oracle, tmp_path, "db", "java", COMMITS)
    ours = _ours(tmp_path, options)
    theirs = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table("db.java")
    view = _view(ours)
    assert view == _view(theirs)
    assert [c for k, c, _ in view if k == "APPEND"] == [len(c) for c in COMMITS]
    assert all(c is None and not f for k, c, f in view if k == "COMPACT")
    assert any(k == "COMPACT" for k, _, _ in view) == dv  # vectors compact at every commit
    # Java's own view of our snapshots agrees on what they list
    java_view = snapshot_changelogs(java_oracle, tmp_path, "db", "ours")
    counts: list[Any] = [s["changelogRecordCount"] for s in java_view]
    assert counts == [c for _, c, _ in _view(ours)]
    start = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
    java_stream = stream_changes(java_oracle, tmp_path, "db", "java", start)
    our_stream = stream_changes(java_oracle, tmp_path, "db", "ours", start)
    assert java_stream.error is None and our_stream.error is None
    assert java_stream.plans and our_stream.plans
    assert [(s, by_key(c)) for s, c in our_stream.plans] == [
        (s, by_key(c)) for s, c in java_stream.plans
    ]
