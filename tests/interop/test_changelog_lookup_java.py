"""``changelog-producer = lookup``, Java 1.4.2 against the model of
tests/integration/test_changelog_lookup.py and against ours: Java's writer (one stream write,
each prepareCommit waiting for its lookup compaction) writes the same five commits into a table
of each merge engine, with and without deletion vectors; the changelog files of each commit's
snapshots hold exactly the model's changes, the same as ours (one stream write too; sequence
numbers included, but for first-row, whose stream writer here numbers the commit after two
records of one key one lower than Java's), and our batch read of Java's table
(LookupMergeFunction: aggregation sums each value once) is the model's table.

Not compared: aggregation with deletion vectors. Java 1.4.2 caches a data file's lookup file
for the writer's life and does not rebuild it when a vector later marks rows of that file, so
key 4 (deleted in commit 2, inserted again in commit 4) finds its deleted row again and Java
sums it twice (d4 with n = 8, and -U a4/+U d4); ours looks up with the current vectors, as a
newly started Java writer does. The other deletion-vector cases meet no such stale lookup."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from changelog_oracle import write_commits
from java_oracle import JavaOracle
from tests.integration.test_changelog_lookup import (
    COMMITS,
    ENGINES,
    changelog_since,
    create,
    expected_changelog,
    final_state,
    latest_id,
    rows,
)

from paimon_pyspark import CatalogFactory, FileStoreTable
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spec.key_value import SEQUENCE_NUMBER

pytestmark = [pytest.mark.java, pytest.mark.slow]

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("n", "BIGINT"), ("ts", "BIGINT")]
CASES = [(e, False) for e in ENGINES] + [("deduplicate", True), ("partial-update", True)]


@pytest.mark.parametrize(("engine", "dv"), CASES)
def test_lookup_changelog_as_java_writes_it(
    java_oracle: JavaOracle, tmp_path: Path, engine: str, dv: bool
) -> None:
    options = {"bucket": "1", "changelog-producer": "lookup", **ENGINES[engine][0]}
    if dv:
        options["deletion-vectors.enabled"] = "true"
    java_oracle.create_table(tmp_path, "db", "java", FIELDS, primary_keys=["id"], options=options)
    changes = [[[kind, key, *values] for kind, key, values in c] for c in COMMITS]
    ids = write_commits(java_oracle, tmp_path, "db", "java", changes)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    theirs = catalog.get_table("db.java")
    java = [changelog_since(theirs, a, b) for a, b in zip([0, *ids], ids, strict=False)]
    assert java == expected_changelog(engine, COMMITS)
    assert rows(theirs) == final_state(engine, COMMITS)

    ours = create(catalog, {k: v for k, v in options.items() if k != "changelog-producer"})
    got, our_seqs = [], []
    builder = ours.new_stream_write_builder()  # one writer across commits, as Java's
    with builder.new_write() as w:
        commit = builder.new_commit()
        for identifier, changes in enumerate(COMMITS, start=1):
            start = latest_id(ours)
            data = [{"id": k, "v": r[0], "n": r[1], "ts": r[2]} for _, k, r in changes]
            kinds = [KINDS[k] for k, _, _ in changes]
            w.write_arrow(pa.Table.from_pylist(data, ours.arrow_schema), row_kinds=kinds)
            commit.commit(w.prepare_commit(identifier), identifier)
            got.append(changelog_since(ours, start))
            our_seqs.append(sequence_numbers(ours, start, latest_id(ours)))
    assert got == java
    spans = zip([0, *ids], ids, strict=False)
    if engine != "first-row":
        assert our_seqs == [sequence_numbers(theirs, a, b) for a, b in spans]


def sequence_numbers(table: FileStoreTable, after_id: int, until: int) -> list[int]:
    """The ``_SEQUENCE_NUMBER`` of each changelog record of snapshots ``after_id`` + 1 ..
    ``until``: a -U keeps its old record's, a +U/+I the merged record's (Java's wrapper)."""
    out: list[int] = []
    mio = table.store.manifest_io
    for sid in range(after_id + 1, until + 1):
        snapshot = table.snapshot_manager.snapshot(sid)
        if snapshot.changelog_manifest_list is None:
            continue
        for e in mio.read_entries(mio.read_manifest_list(snapshot.changelog_manifest_list)):
            path = table.store.bucket_path_of(e.partition, e.bucket)
            records = read_kv_records(table.store, path, [e.file])
            out += records.column(SEQUENCE_NUMBER).to_pylist()
    return out
