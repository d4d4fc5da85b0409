"""Java 1.4.2 and we produce and read the same changes, per changelog producer (issue 40, 1).

Java writes a primary-key table with each producer (input, lookup, full-compaction; lookup
also with deletion vectors and row-deduplicate, first-row, aggregation and a dynamic bucket;
full-compaction with partial-update) over six commits of inserts, updates and deletes (one
stream write, commit identifiers 1..6; for full-compaction the full compaction Flink's
GlobalFullCompactionSinkWrite runs at every commit). Our ``$audit_log`` and ``$binlog``, our
stream reads (``with_include_row_kind()``, and of ``$audit_log``/``$binlog``) and our
``changelog`` incremental read of that table return what Java's return: the same row kinds and
rows, snapshot by snapshot. Then we write the same commits into our own table with our stream
write: the same snapshots (kinds, changelog record counts) as Java's, and Java's stream scan,
incremental read and ``$audit_log`` of it return the same changes (reading our changelog files).

Within one snapshot the changes are compared in key order, each key's changes in their own
order (``by_key``): the order of buckets and files in a plan is not part of the contract.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pytest
from changelog_oracle import (
    Change,
    by_key,
    snapshot_changelogs,
    stream_changes,
    write_commits,
)
from incremental_oracle import read_incremental, sorted_rows
from java_oracle import JavaOracle, read_system_table

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]

CASES = {
    "input": {"changelog-producer": "input"},
    "lookup": {"changelog-producer": "lookup"},
    "full-compaction": {"changelog-producer": "full-compaction"},
    "lookup-dv-dedup": {
        "changelog-producer": "lookup",
        "deletion-vectors.enabled": "true",
        "changelog-producer.row-deduplicate": "true",
    },
    # other merge engines and bucket modes, compared with Java only
    "lookup-first-row": {
        "changelog-producer": "lookup",
        "merge-engine": "first-row",
        "ignore-delete": "true",
    },
    "lookup-aggregation": {
        "changelog-producer": "lookup",
        "merge-engine": "aggregation",
        "fields.n.aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true",
    },
    "full-compaction-partial-update": {
        "changelog-producer": "full-compaction",
        "merge-engine": "partial-update",
        "ignore-delete": "true",
    },
    "input-changelog-file-options": {
        "changelog-producer": "input",
        "changelog-file.format": "avro",
        "changelog-file.prefix": "cl-",
        "changelog-file.compression": "snappy",
    },
    "lookup-dynamic-bucket": {
        "changelog-producer": "lookup",
        "bucket": "-1",
        "dynamic-bucket.target-row-num": "3",
    },
}
PRODUCERS = list(CASES)
PINNED = PRODUCERS[:4]
"""The cases whose changes are pinned by ``expected``."""
FIELDS = [("id", "INT NOT NULL"), ("v", "STRING"), ("n", "BIGINT")]
SCHEMA = pa.schema(
    [pa.field("id", pa.int32(), nullable=False), ("v", pa.string()), ("n", pa.int64())]
)
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
FROM_START = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}

COMMITS: list[list[Change]] = [
    [["+I", k, "a", k] for k in range(1, 7)],
    # an update as -U/+U, an upsert as +I, a delete, an insert
    [
        ["-U", 1, "a", 1],
        ["+U", 1, "b", 11],
        ["+I", 2, "b", 12],
        ["-D", 3, "a", 3],
        ["+I", 7, "a", 7],
    ],
    # delete, re-insert of a deleted key, a lone +U
    [["-D", 1, "b", 11], ["+I", 3, "c", 23], ["+U", 4, "c", 24]],
    # a key inserted and deleted in one commit, a key updated twice in one commit
    [["+I", 8, "d", 8], ["-D", 8, "d", 8], ["+I", 5, "d", 25], ["+I", 5, "e", 35]],
    # a delete of an absent key, an upsert to the same value, an update
    [["-D", 99, "x", 0], ["+I", 6, "a", 6], ["+I", 2, "f", 42]],
    [
        ["-U", 2, "f", 42],
        ["+U", 2, "g", 52],
        ["-D", 7, "a", 7],
        ["+I", 9, "g", 9],
        ["+I", 1, "g", 61],
    ],
]

# What lookup and full-compaction make of COMMITS, commit by commit (input: COMMITS by_key).
MERGED_CHANGES: list[list[Change]] = [
    [["+I", k, "a", k] for k in range(1, 7)],
    [
        ["-U", 1, "a", 1], ["+U", 1, "b", 11], ["-U", 2, "a", 2], ["+U", 2, "b", 12],
        ["-D", 3, "a", 3], ["+I", 7, "a", 7],
    ],
    [["-D", 1, "b", 11], ["+I", 3, "c", 23], ["-U", 4, "a", 4], ["+U", 4, "c", 24]],
    [["-U", 5, "a", 5], ["+U", 5, "e", 35]],
    [["-U", 2, "b", 12], ["+U", 2, "f", 42], ["-U", 6, "a", 6], ["+U", 6, "a", 6]],
    [
        ["+I", 1, "g", 61], ["-U", 2, "f", 42], ["+U", 2, "g", 52], ["-D", 7, "a", 7],
        ["+I", 9, "g", 9],
    ],
]  # fmt: skip


class Written(NamedTuple):
    """A table one engine wrote, and Java's reading of it."""

    warehouse: Path
    name: str
    stream: list[tuple[int, list[Change]]]
    audit_log: list[Change]
    snapshots: list[dict[str, Any]]


def options_of(producer: str) -> dict[str, str]:
    return {"bucket": "2", **CASES[producer]}


def java_view(oracle: JavaOracle, warehouse: Path, name: str) -> Written:
    audit = read_system_table(oracle, warehouse, "db", f"{name}$audit_log")
    assert audit.fields == ["rowkind", "id", "v", "n"]
    return Written(
        warehouse,
        name,
        java_stream(oracle, warehouse, name),
        by_key(audit.rows),
        snapshot_changelogs(oracle, warehouse, "db", name),
    )


@pytest.fixture(scope="module")
def java_written(
    java_oracle: JavaOracle, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Written]:
    """Per producer, the table Java wrote with COMMITS and Java's reading of it."""
    out = {}
    for producer in PRODUCERS:
        warehouse = tmp_path_factory.mktemp(f"java-{producer}")
        java_oracle.create_table(
            warehouse, "db", "t", FIELDS, primary_keys=["id"], options=options_of(producer)
        )
        write_commits(java_oracle, warehouse, "db", "t", COMMITS)
        out[producer] = java_view(java_oracle, warehouse, "t")
    return out


def expected(producer: str) -> list[list[Change]]:
    changes = COMMITS if producer == "input" else MERGED_CHANGES
    if CASES[producer].get("changelog-producer.row-deduplicate") == "true":
        # the fifth commit's upsert of key 6 to its own value makes no -U/+U
        changes = [*changes[:4], [c for c in changes[4] if c[1] != 6], *changes[5:]]
    return [by_key(c) for c in changes]


def check_changelog_files(snapshots: list[dict[str, Any]], producer: str) -> None:
    """Changelog files carry the changelog-file prefix and format, and a snapshot has a
    changelog manifest list exactly when it has changelog files."""
    prefix = CASES[producer].get("changelog-file.prefix", "changelog-")
    suffix = "." + CASES[producer].get("changelog-file.format", "parquet")
    for s in snapshots:
        files = s["changelogFiles"]
        assert all(f.startswith(prefix) and f.endswith(suffix) for f in files), s
        assert (s["changelogManifestList"] is not None) == bool(files), s


def table_of(warehouse: Path, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"db.{name}")


def rows_of(data: pa.Table) -> list[Change]:
    return [list(r.values()) for r in data.to_pylist()]


def our_stream(
    warehouse: Path, name: str, options: dict[str, str] = FROM_START
) -> list[tuple[int, list[Change]]]:
    """Our stream read, one entry per non-empty plan, as ``stream_changes``: of a data table
    with ``with_include_row_kind()``, of ``$audit_log`` / ``$binlog`` with their ``rowkind``."""
    builder = table_of(warehouse, name).copy(options).new_stream_read_builder()
    if "$" not in name:
        builder = builder.with_include_row_kind()
    scan, read = builder.new_scan(), builder.new_read()
    out: list[tuple[int, list[Change]]] = []
    first = True
    while True:
        splits = scan.plan().splits()
        if not splits:
            if first:
                first = False
                continue
            return out
        first = False
        snapshot = splits[0].snapshot_id
        assert {s.snapshot_id for s in splits} == {snapshot}
        out.append((snapshot, by_key(rows_of(read.to_arrow(splits)))))


def java_stream(
    oracle: JavaOracle, warehouse: Path, name: str, options: dict[str, str] = FROM_START
) -> list[tuple[int, list[Change]]]:
    """``stream_changes`` in ``our_stream``'s form: a system table's rows are all +I rows
    (Java's AuditLogRead) whose ``rowkind`` column carries the change, so the +I goes."""
    stream = stream_changes(oracle, warehouse, "db", name, options)
    assert stream.error is None and stream.plans is not None, stream.error
    if "$" in name:
        assert {r[0] for _, rows in stream.plans for r in rows} == {"+I"}
        return [(sid, by_key([r[1:] for r in rows])) for sid, rows in stream.plans]
    return [(sid, by_key(rows)) for sid, rows in stream.plans]


def our_batch(warehouse: Path, name: str, options: dict[str, str] | None = None) -> list[Change]:
    """Our batch read of ``$audit_log`` or ``$binlog`` (copied with ``options``), by key."""
    table = table_of(warehouse, name)
    if options:
        table = table.copy(options)
    builder = table.new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    assert data.column_names == ["rowkind", "id", "v", "n"]
    return by_key(rows_of(data))


def changelog_between(start: int, end: int) -> dict[str, str]:
    return {
        "incremental-between": f"{start},{end}",
        "incremental-between-scan-mode": "changelog",
    }


# --- Java's own behaviour, pinned ---------------------------------------------------------------


@pytest.mark.parametrize("producer", PINNED)
def test_java_produces_the_expected_changes(
    java_written: dict[str, Written], producer: str
) -> None:
    written = java_written[producer]
    assert [rows for _, rows in written.stream] == expected(producer)
    with_changelog = [s["id"] for s in written.snapshots if s["changelogManifestList"]]
    assert [sid for sid, _ in written.stream] == with_changelog
    check_changelog_files(written.snapshots, producer)
    assert written.audit_log == by_key(
        [
            ["+I", 1, "g", 61], ["+U", 2, "g", 52], ["+I", 3, "c", 23], ["+U", 4, "c", 24],
            ["+I", 5, "e", 35], ["+I", 6, "a", 6], ["+I", 9, "g", 9],
        ]
    )  # fmt: skip


# --- we read Java's changes ---------------------------------------------------------------------


@pytest.mark.parametrize("producer", PRODUCERS)
def test_our_stream_reads_of_java_table(
    java_oracle: JavaOracle, java_written: dict[str, Written], producer: str
) -> None:
    """From snapshot 1: every snapshot's changelog, of the data table with ``_row_kind``, and
    of ``$audit_log`` and ``$binlog`` (-U/+U packed into one [before, after] row)."""
    wh, name = java_written[producer].warehouse, java_written[producer].name
    assert our_stream(wh, name) == java_written[producer].stream
    for system in ("audit_log", "binlog"):
        table = f"{name}${system}"
        assert our_stream(wh, table) == java_stream(java_oracle, wh, table), system


@pytest.mark.parametrize("producer", PRODUCERS)
def test_our_stream_reads_of_java_table_from_latest_full(
    java_oracle: JavaOracle, java_written: dict[str, Written], producer: str
) -> None:
    """The default start (latest-full): Java's first plan reads the latest snapshot whole (the
    lookup table above level 0, the full-compaction table at its top level), with the row kind
    its reader gives each row."""
    wh, name = java_written[producer].warehouse, java_written[producer].name
    for table in (f"{name}$audit_log", f"{name}$binlog", name):
        assert our_stream(wh, table, {}) == java_stream(java_oracle, wh, table, {}), table


@pytest.mark.parametrize("producer", ["lookup", "full-compaction"])
def test_a_stream_skips_what_has_no_changelog_yet(
    java_oracle: JavaOracle, tmp_path: Path, producer: str
) -> None:
    """Four commits, then a write-only one that leaves its rows at level 0 without changelog:
    Java's latest-full start reads the lookup table above level 0 and the full-compaction
    table at its top level (the rows at level 0 come later as changelog), and a stream from
    snapshot 1 skips the snapshot without changelog. Ours read the same."""
    java_oracle.create_table(
        tmp_path, "db", "t", FIELDS, primary_keys=["id"], options=options_of(producer)
    )
    write_commits(java_oracle, tmp_path, "db", "t", COMMITS[:4])
    pending = [["+I", 10, "z", 10], ["-D", 2, "b", 12], ["+U", 4, "z", 4]]
    write_commits(java_oracle, tmp_path, "db", "t", [pending], {"write-only": "true"})
    java = java_stream(java_oracle, tmp_path, "t", {})
    assert {r[1] for _, rows in java for r in rows} == {2, 3, 4, 5, 6, 7}  # not 10
    for table in ("t", "t$audit_log"):
        assert our_stream(tmp_path, table, {}) == java_stream(java_oracle, tmp_path, table, {})
        assert our_stream(tmp_path, table) == java_stream(java_oracle, tmp_path, table), table


@pytest.mark.parametrize("producer", PRODUCERS)
def test_our_audit_log_and_binlog_of_java_table(
    java_oracle: JavaOracle, java_written: dict[str, Written], producer: str
) -> None:
    wh, name = java_written[producer].warehouse, java_written[producer].name
    assert our_batch(wh, f"{name}$audit_log") == java_written[producer].audit_log
    binlog = read_system_table(java_oracle, wh, "db", f"{name}$binlog")
    assert our_batch(wh, f"{name}$binlog") == by_key(binlog.rows)


@pytest.mark.parametrize("producer", PRODUCERS)
def test_our_changelog_incremental_read_of_java_table(
    java_oracle: JavaOracle, java_written: dict[str, Written], producer: str
) -> None:
    """Each snapshot alone, then the whole range (whose order across snapshots and buckets
    Java does not keep, so compared as a multiset); ours through ``$audit_log``."""
    written = java_written[producer]
    wh, name = written.warehouse, written.name
    last = written.snapshots[-1]["id"]
    stream = dict(written.stream)
    for start in range(last):
        options = changelog_between(start, start + 1)
        java = read_incremental(java_oracle, wh, "db", name, options)
        assert java.error is None and java.rows is not None, (options, java.error)
        assert by_key(java.rows) == stream.get(start + 1, []), options
        assert our_batch(wh, f"{name}$audit_log", options) == by_key(java.rows), options
    whole = changelog_between(0, last)
    java = read_incremental(java_oracle, wh, "db", name, whole)
    assert java.rows is not None, java.error
    ours = our_batch(wh, f"{name}$audit_log", whole)
    assert sorted(map(repr, ours)) == sorted(map(repr, java.rows))
    # the data table in the default (auto) mode reads the changelog too: Java's TableRead
    # gives every change with its kind, a plain read of ours every change without it
    auto = {"incremental-between": f"0,{last}"}
    java = read_incremental(java_oracle, wh, "db", name, auto)
    assert java.rows is not None, java.error
    builder = table_of(wh, name).copy(auto).new_read_builder()
    data = builder.new_read().to_arrow(builder.new_scan().plan().splits())
    values = [dict(zip(["id", "v", "n"], r[1:], strict=True)) for r in java.rows]
    assert sorted_rows(data.to_pylist(), ["id", "v", "n"]) == sorted_rows(values, ["id", "v", "n"])


# --- Java reads our changes ---------------------------------------------------------------------


def our_write(warehouse: Path, producer: str) -> FileStoreTable:
    """COMMITS through our stream write, identifiers 1..6, as ChangelogOracle.writeCommits."""
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options_of(producer))
    catalog.create_table("db.ours", schema)
    table = catalog.get_table("db.ours")
    builder = table.new_stream_write_builder()
    with builder.new_write() as write, builder.new_commit() as commit:
        for identifier, changes in enumerate(COMMITS, start=1):
            data = pa.Table.from_pylist(
                [{"id": c[1], "v": c[2], "n": c[3]} for c in changes], schema=SCHEMA
            )
            write.write_arrow(data, row_kinds=[KINDS[c[0]] for c in changes])
            commit.commit(write.prepare_commit(identifier), identifier)
    return table


@pytest.mark.parametrize("producer", PRODUCERS)
def test_java_reads_the_changes_we_write(
    java_oracle: JavaOracle,
    java_written: dict[str, Written],
    tmp_path: Path,
    producer: str,
) -> None:
    our_write(tmp_path, producer)
    java = java_view(java_oracle, tmp_path, "ours")
    assert [rows for _, rows in java.stream] == [rows for _, rows in java_written[producer].stream]
    assert java.audit_log == java_written[producer].audit_log
    layout = [(s["commitKind"], s["changelogRecordCount"]) for s in java.snapshots]
    assert layout == [
        (s["commitKind"], s["changelogRecordCount"]) for s in java_written[producer].snapshots
    ]
    check_changelog_files(java.snapshots, producer)
    assert our_stream(tmp_path, "ours") == java.stream
    last = java.snapshots[-1]["id"]
    for start in range(last):
        options = changelog_between(start, start + 1)
        incremental = read_incremental(java_oracle, tmp_path, "db", "ours", options)
        assert incremental.rows is not None, (options, incremental.error)
        assert by_key(incremental.rows) == dict(java.stream).get(start + 1, []), options
