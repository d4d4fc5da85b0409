"""``changelog-producer = input``: every flush of a primary-key bucket writes the records it
received, unmerged and sorted by key and sequence, as changelog files (Java's MergeTreeWriter
with its changelog writer); the commit lists them in the snapshot's changelog manifest list
with ``changelogRecordCount``, fields a snapshot without changelog leaves out (Java's
FileStoreCommitImpl). Fixed, dynamic, cross-partition and postpone buckets, deletion vectors,
the ``changelog-file.*`` options, ``ignore-update-before`` and overwrite."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.paths import PathFactory

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("pt", pa.string())]
)
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
Change = tuple[Any, ...]


def create(
    catalog: FileSystemCatalog,
    options: dict[str, str],
    primary_keys: tuple[str, ...] = ("id",),
    name: str = "t",
) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        partition_keys=["pt"],
        primary_keys=list(primary_keys),
        options={"changelog-producer": "input", **options},
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def write(
    table: FileStoreTable, changes: list[tuple[str, int, str, str]], overwrite: bool = False
) -> list[int]:
    """Commit ``changes`` (row kind, id, v, pt) in one batch."""
    builder = table.new_batch_write_builder()
    if overwrite:
        builder = builder.overwrite()
    data = pa.Table.from_pylist(
        [{"id": i, "v": v, "pt": pt} for _, i, v, pt in changes], schema=SCHEMA
    )
    with builder.new_write() as w:
        w.write_arrow(data, row_kinds=[KINDS[k] for k, *_ in changes])
        messages = w.prepare_commit()
    return builder.new_commit().commit(messages)


def changelog_files(table: FileStoreTable, snapshot: Snapshot) -> list[tuple[str, int, Any]]:
    """(partition path, bucket, file) of each changelog file of ``snapshot``, in list order."""
    if snapshot.changelog_manifest_list is None:
        return []
    mio = table.store.manifest_io
    entries = mio.read_entries(mio.read_manifest_list(snapshot.changelog_manifest_list))
    out = []
    for e in entries:
        values = deserialize_with_arity(e.partition, table.partition_types)
        out.append((table.store.partition_rel_path(values), e.bucket, e.file))
    return out


def changes_of(table: FileStoreTable, snapshot: Snapshot) -> list[Change]:
    """(pt, bucket, kind, id, v) of the records of ``snapshot``'s changelog files, in order."""
    out: list[Change] = []
    names = {v: k for k, v in KINDS.items()}
    for rel, bucket, f in changelog_files(table, snapshot):
        path = PathFactory(table.path).bucket_path(rel, bucket)
        records = read_kv_records(table.store, path, [f]).to_pylist()
        out += [(r.get("pt"), bucket, names[r["_VALUE_KIND"]], r["id"], r["v"]) for r in records]
    return out


def snapshot_json(table: FileStoreTable, snapshot_id: int) -> dict[str, Any]:
    text = Path(table.path, "snapshot", f"snapshot-{snapshot_id}").read_text()
    data: dict[str, Any] = json.loads(text)
    return data


def check_fields(table: FileStoreTable, snapshot_id: int) -> int | None:
    """The snapshot's changelog fields as Java writes them: all three or none; returns the
    record count."""
    raw = snapshot_json(table, snapshot_id)
    keys = ("changelogManifestList", "changelogManifestListSize", "changelogRecordCount")
    if "changelogManifestList" not in raw:
        assert not any(k in raw for k in keys), raw
        return None
    listed = Path(table.path, "manifest", raw["changelogManifestList"])
    assert raw["changelogManifestListSize"] == listed.stat().st_size
    files = changelog_files(table, table.snapshot_manager.snapshot(snapshot_id))
    assert raw["changelogRecordCount"] == sum(f.row_count for _, _, f in files) > 0
    count: int = raw["changelogRecordCount"]
    return count


def rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["v"], r["pt"]) for r in data)


FIRST = [("+I", 2, "b", "x"), ("+I", 1, "a", "x"), ("+I", 1, "a2", "x")]
SECOND = [("-U", 1, "a2", "x"), ("+U", 1, "a3", "x"), ("-D", 2, "b", "x"), ("+I", 3, "c", "x")]


@pytest.mark.parametrize("dv", [False, True])
def test_fixed_bucket_changelog_is_the_input_sorted_by_key(
    catalog: FileSystemCatalog, dv: bool
) -> None:
    table = create(catalog, {"bucket": "1", "deletion-vectors.enabled": str(dv).lower()})
    first = write(table, FIRST)
    second = write(table, SECOND)
    snap = table.snapshot_manager.snapshot
    assert changes_of(table, snap(first[0])) == [
        ("x", 0, "+I", 1, "a"),
        ("x", 0, "+I", 1, "a2"),
        ("x", 0, "+I", 2, "b"),
    ]
    assert changes_of(table, snap(second[0])) == [
        ("x", 0, "-U", 1, "a2"),
        ("x", 0, "+U", 1, "a3"),
        ("x", 0, "-D", 2, "b"),
        ("x", 0, "+I", 3, "c"),
    ]
    assert (check_fields(table, first[0]), check_fields(table, second[0])) == (3, 4)
    # each key's records keep their write order: sequence numbers rise within a key
    (_, _, f), *_ = changelog_files(table, snap(second[0]))
    assert (f.level, f.file_source, f.delete_row_count, f.file_name[:10]) == (
        0,
        0,
        2,
        "changelog-",
    )
    # a compaction produces no changelog with this producer: no changelog fields at all
    # (with deletion vectors each write compacted already, at its commit)
    compact(catalog, "db.t", compact_strategy="full")
    compactions = [s for s in table.snapshot_manager.list_ids() if snap(s).commit_kind == "COMPACT"]
    assert compactions and all(check_fields(table, s) is None for s in compactions)
    assert rows(table) == [(1, "a3", "x"), (3, "c", "x")]


def test_changelog_file_options_as_java(catalog: FileSystemCatalog) -> None:
    """changelog-file.prefix/format/compression/stats-mode apply to changelog files only; the
    table's file indexes are built for them too (Java's writer is the data writer's)."""
    options = {
        "bucket": "1",
        "changelog-file.prefix": "cl-",
        "changelog-file.format": "avro",
        "changelog-file.compression": "snappy",
        "changelog-file.stats-mode": "none",
        "file-index.bloom-filter.columns": "v",
    }
    table = create(catalog, options)
    (sid,) = write(table, FIRST)
    snapshot = table.snapshot_manager.snapshot(sid)
    [(rel, bucket, f)] = changelog_files(table, snapshot)
    assert f.file_name.startswith("cl-") and f.file_name.endswith(".avro")
    assert f.value_stats_cols == () and (f.embedded_index is not None or f.extra_files)
    path = Path(PathFactory(table.path).bucket_path(rel, bucket), f.file_name)
    assert b"snappy" in path.read_bytes()[:200]  # the Avro header's codec
    data = [e.file for e in table.store.manifest_io.live_entries(snapshot)]
    assert all(d.file_name.startswith("data-") and d.file_name.endswith(".parquet") for d in data)
    assert all(d.value_stats_cols is None for d in data)
    assert len(changes_of(table, snapshot)) == 3


def _pt(changes: list[Change]) -> list[tuple[Any, str, int, Any]]:
    """The changes without their bucket, in partition then file order."""
    return sorted(((c[0], c[2], c[3], c[4]) for c in changes), key=lambda c: c[0])


@pytest.mark.parametrize(
    ("mode", "options", "keys"),
    [
        ("dynamic", {"bucket": "-1"}, ("pt", "id")),
        ("cross-partition", {"bucket": "-1"}, ("id",)),
        (
            "postpone",
            {
                "bucket": "-2",
                "postpone.default-bucket-num": "2",
                "postpone.batch-write-fixed-bucket": "false",
            },
            ("pt", "id"),
        ),
    ],
)
def test_bucket_modes(
    catalog: FileSystemCatalog, mode: str, options: dict[str, str], keys: tuple[str, ...]
) -> None:
    table = create(catalog, options, keys)
    (first,) = write(table, [("+I", 1, "a", "x"), ("+I", 2, "b", "y")])
    (second,) = write(table, [("+I", 1, "a2", "y"), ("+U", 2, "b2", "y")])
    snap = table.snapshot_manager.snapshot
    if mode == "postpone":
        # Java's postpone writer writes no changelog; its compaction writes the records
        # through the real buckets' writers, whose flush does (Java's BucketFiles)
        assert check_fields(table, first) is None and check_fields(table, second) is None
        compacted = compact(catalog, "db.t")
        assert compacted is not None and snap(compacted).commit_kind == "COMPACT"
        assert check_fields(table, compacted) == 4
        assert _pt(changes_of(table, snap(compacted))) == [
            ("x", "+I", 1, "a"),
            ("y", "+I", 1, "a2"),
            ("y", "+I", 2, "b"),
            ("y", "+U", 2, "b2"),
        ]
        assert {b for _, b, _ in changelog_files(table, snap(compacted))} <= {0, 1}
        assert rows(table) == [(1, "a", "x"), (1, "a2", "y"), (2, "b2", "y")]
        return
    assert _pt(changes_of(table, snap(first))) == [("x", "+I", 1, "a"), ("y", "+I", 2, "b")]
    expected = [("y", "+I", 1, "a2"), ("y", "+U", 2, "b2")]
    if mode == "cross-partition":  # the key left partition x: a -D there, as Java's assigner
        expected = [("x", "-D", 1, "a2"), *expected]  # the new row, in the old partition
    assert _pt(changes_of(table, snap(second))) == expected
    assert check_fields(table, second) == len(expected)
    moved = [] if mode == "cross-partition" else [(1, "a", "x")]
    assert rows(table) == sorted([*moved, (1, "a2", "y"), (2, "b2", "y")])


def test_ignore_update_before_and_overwrite(catalog: FileSystemCatalog) -> None:
    """-U records dropped at the write (Java's RowKindFilter) are not in the changelog; an
    overwrite commits no changelog (Java's overwritePartition drops it)."""
    table = create(catalog, {"bucket": "1", "ignore-update-before": "true"})
    write(table, FIRST)
    (sid,) = write(table, SECOND)
    kinds = [c[2] for c in changes_of(table, table.snapshot_manager.snapshot(sid))]
    assert kinds == ["+U", "-D", "+I"]

    def on_disk() -> int:
        return sum(n.startswith("changelog-") for _, _, ns in os.walk(table.path) for n in ns)

    before = on_disk()
    (over,) = write(table, [("+I", 7, "z", "x")], overwrite=True)
    assert table.snapshot_manager.snapshot(over).commit_kind == "OVERWRITE"
    assert check_fields(table, over) is None
    assert on_disk() == before == 2  # the overwrite's writers wrote none
    assert rows(table) == [(7, "z", "x")]


def test_an_aborted_write_or_commit_leaves_no_changelog_file(catalog: FileSystemCatalog) -> None:
    """An aborted write deletes the changelog files it flushed, with its data files; so does
    the abort of a commit (Java's FileStoreCommitImpl.abort)."""
    options = {"bucket": "1", "write-buffer-size": "1 kb", "write-buffer-spillable": "false"}
    table = create(catalog, options)
    builder = table.new_batch_write_builder()
    many = pa.Table.from_pylist([{"id": i, "v": "v" * 50, "pt": "x"} for i in range(200)], SCHEMA)

    def written() -> list[str]:
        names = [n for _, _, files in os.walk(table.path) for n in files]
        return [n for n in names if n.startswith(("changelog-", "data-"))]

    with builder.new_write() as w:
        w.write_arrow(many)
        w.write_arrow(many)
        for _ in range(200):  # the writes run on the write's threads: wait for a flush
            if any(n.startswith("changelog-") for n in written()):
                break
            time.sleep(0.05)
        assert any(n.startswith("changelog-") for n in written())
    assert not written()
    with builder.new_write() as w:
        w.write_arrow(many)
        messages = w.prepare_commit()
    assert messages[0].data_increment.changelog_files
    builder.new_commit().abort(messages)
    assert not written()


@pytest.mark.parametrize("spillable", [False, True])
def test_flushes_write_a_changelog_file_each(catalog: FileSystemCatalog, spillable: bool) -> None:
    """A buffer flushed more than once (no spilling) gives a changelog file per flush; one
    that spills gives one flush at the commit, merged from its spill files. Each file is in
    key order, a key's records in write order; together they hold every record once."""
    options = {
        "bucket": "1",
        "write-buffer-size": "4 kb",
        "write-buffer-spillable": str(spillable).lower(),
    }
    table = create(catalog, options)
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        for start in range(0, 600, 100):
            batch = [
                {"id": (i * 7) % 300, "v": str(i), "pt": "x"} for i in range(start, start + 100)
            ]
            w.write_arrow(pa.Table.from_pylist(batch, schema=SCHEMA))
        messages = w.prepare_commit()
    (sid,) = builder.new_commit().commit(messages)
    snapshot = table.snapshot_manager.snapshot(sid)
    files: list[DataFileMeta] = [f for _, _, f in changelog_files(table, snapshot)]
    assert (len(files) == 1) == spillable and sum(f.row_count for f in files) == 600
    changes = changes_of(table, snapshot)
    assert sorted(int(c[4]) for c in changes) == list(range(600))
    at = 0
    for f in files:
        order = [(c[3], int(c[4])) for c in changes[at : at + f.row_count]]
        assert order == sorted(order)
        at += f.row_count


def test_an_overwrite_commit_drops_the_changelog_it_is_given(
    catalog: FileSystemCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    """Messages of a plain write committed as an overwrite: Java's overwritePartition commits
    no changelog and warns, naming the files."""
    table = create(catalog, {"bucket": "1"})
    with table.new_batch_write_builder().new_write() as w:
        w.write_arrow(pa.Table.from_pylist([{"id": 1, "v": "a", "pt": "x"}], schema=SCHEMA))
        messages = w.prepare_commit()
    (name,) = [f.file_name for f in messages[0].data_increment.changelog_files]
    with caplog.at_level("WARNING"):
        (sid,) = table.new_batch_write_builder().overwrite().new_commit().commit(messages)
    assert table.snapshot_manager.snapshot(sid).commit_kind == "OVERWRITE"
    assert check_fields(table, sid) is None
    assert name in caplog.text and "no changelog" in caplog.text
    assert rows(table) == [(1, "a", "x")]
