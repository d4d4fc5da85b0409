"""``changelog-producer`` = ``full-compaction``: each full compaction writes the difference
between the top level it replaces and its merged result as changelog files (Java's
FullChangelogMergeTreeCompactRewriter), at the commits ``full-compaction.delta-commits`` picks.

The expected changes are computed here from the rows written, by a model of each merge engine:
the state at the last full compaction against the state now, over the keys written since
(-D, -U/+U, +I in key order), never by the code under test."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, Schema, procedures
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.mergetree.compaction import compact_kv_bucket
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.key_value import VALUE_KIND
from paimon_pyspark.store.paths import PathFactory

SCHEMA = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("b", pa.string())])
KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}
Row = tuple[Any, ...]
Change = tuple[str, Row]


class Model:
    """The rows a merge engine leaves, and the changes a full compaction reports."""

    def __init__(self, engine: str, compared: Sequence[int] | None = None) -> None:
        self.engine = engine
        self.compared = compared
        self.state: dict[int, Row] = {}
        self.top: dict[int, Row] = {}
        self.touched: set[int] = set()

    def upsert(self, rows: Sequence[Row]) -> None:
        for row in rows:
            key = row[0]
            self.touched.add(key)
            old = self.state.get(key)
            if old is None or self.engine == "deduplicate":
                self.state[key] = row
            elif self.engine == "partial-update":
                self.state[key] = tuple(
                    n if n is not None else o for n, o in zip(row, old, strict=True)
                )
            else:  # aggregation: a sums, b last non-null
                a = (old[1] or 0) + (row[1] or 0)
                self.state[key] = (key, a, row[2] if row[2] is not None else old[2])

    def delete(self, keys: Sequence[int]) -> None:
        for key in keys:
            self.touched.add(key)
            self.state.pop(key, None)

    def full(self) -> list[Change]:
        out: list[Change] = []
        for key in sorted(self.touched):
            old, new = self.top.get(key), self.state.get(key)
            if old is not None and new is None:
                out.append(("-D", old))
            elif old is None and new is not None:
                out.append(("+I", new))
            elif old is not None and new is not None:
                same = self.compared is not None and all(old[i] == new[i] for i in self.compared)
                if not same:
                    out += [("-U", old), ("+U", new)]
        self.top, self.touched = dict(self.state), set()
        return out


def _create(
    catalog: FileSystemCatalog, options: dict[str, str], partitioned: bool = False
) -> FileStoreTable:
    schema = SCHEMA.append(pa.field("p", pa.int32())) if partitioned else SCHEMA
    keys = ["p", "id"] if partitioned else ["id"]
    options = {"bucket": "1", "changelog-producer": "full-compaction", **options}
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            schema, primary_keys=keys, partition_keys=["p"] if partitioned else [], options=options
        ),
    )
    return catalog.get_table("db.t")


def _data(table: FileStoreTable, rows: Sequence[Row]) -> pa.Table:
    names = [f.name for f in table.store.fields]
    return pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in rows])


def _changes(table: FileStoreTable, after: int) -> list[Change]:
    """The changes in the changelog files of the snapshots after ``after``, as stored."""
    store = table.store
    sm = store.snapshot_manager
    mio = store.manifest_io
    out: list[Change] = []
    for sid in range((after or 0) + 1, (sm.latest_id() or 0) + 1):
        snapshot = sm.snapshot(sid)
        if not snapshot.changelog_manifest_list:
            continue
        for e in mio.read_entries(mio.read_manifest_list(snapshot.changelog_manifest_list)):
            assert e.file.file_name.startswith("changelog-")
            values = deserialize_with_arity(e.partition, store.partition_types)
            path = PathFactory(store.path).bucket_path(store.partition_rel_path(values), e.bucket)
            records = read_kv_records(store, path, [e.file])
            kinds = records.column(VALUE_KIND).to_pylist()
            rows = records.select([f.name for f in store.fields]).to_pylist()
            out += [(KINDS[k], tuple(r.values())) for k, r in zip(kinds, rows, strict=True)]
    return out


def _batch(table: FileStoreTable, rows: Sequence[Row], deletes: Sequence[Row] = ()) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        if rows:
            w.write_arrow(_data(table, rows))
        if deletes:
            w.delete_arrow(_data(table, deletes))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


# commits: (upserts, deleted keys); ids 1..5 are written, then updated, deleted, re-inserted
COMMITS: list[tuple[list[Row], list[int]]] = [
    ([(1, 10, "a"), (2, 20, "b"), (3, 30, "c")], []),
    ([(2, 5, None), (4, 40, "d")], []),
    ([(1, 1, "A")], [3]),
    ([(3, 3, "C"), (5, 50, None)], [4]),
    ([(2, 2, None), (5, 5, "e")], [1]),
    ([(1, 7, None), (6, 60, "f")], []),
]

ENGINE_OPTIONS = {
    "deduplicate": {},
    "partial-update": {"partial-update.remove-record-on-delete": "true"},
    "aggregation": {
        "fields.a.aggregate-function": "sum",
        "fields.b.aggregate-function": "last_non_null_value",
        "aggregation.remove-record-on-delete": "true",
    },
}


def _full_row(model: Model, key: int) -> Row:
    row = model.state.get(key)
    return row if row is not None else (key, 0, "")


@pytest.mark.parametrize("engine", list(ENGINE_OPTIONS))
def test_batch_commits_diff_every_merge_engine(catalog: FileSystemCatalog, engine: str) -> None:
    """A batch commit of a full-compaction table compacts fully (delta-commits unset counts as
    1, as in Java's Flink writer), so each commit's changelog is its diff."""
    table = _create(catalog, {"merge-engine": engine, **ENGINE_OPTIONS[engine]})
    model = Model(engine)
    for upserts, deleted in COMMITS:
        before = table.snapshot_manager.latest_id() or 0
        deletes = [_full_row(model, k) for k in deleted]
        _batch(table, upserts, deletes)
        model.delete(deleted)
        model.upsert(upserts)
        assert _changes(table, before) == model.full()
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted(tuple(r.values()) for r in rows) == sorted(model.state.values())


@pytest.mark.parametrize("delta", [None, "2", "3", "-1"])
def test_stream_checkpoints_diff_every_delta_commits(
    catalog: FileSystemCatalog, delta: str | None
) -> None:
    """A stream write compacts fully at the checkpoints whose identifier is a multiple of
    ``full-compaction.delta-commits`` (every one when unset or negative), and only those
    carry changelog, of everything since the previous one."""
    table = _create(catalog, {} if delta is None else {"full-compaction.delta-commits": delta})
    every = 1 if delta is None or int(delta) < 0 else int(delta)
    model = Model("deduplicate")
    builder = table.new_stream_write_builder("job")
    write, commit = builder.new_write(), builder.new_commit()
    with write:
        for identifier, (upserts, deleted) in enumerate(COMMITS, start=1):
            before = table.snapshot_manager.latest_id() or 0
            write.write_arrow(_data(table, upserts))
            if deleted:
                write.delete_arrow(_data(table, [_full_row(model, k) for k in deleted]))
            commit.commit(write.prepare_commit(identifier), identifier)
            model.delete(deleted)
            model.upsert(upserts)
            expected = model.full() if identifier % every == 0 else []
            assert _changes(table, before) == expected, identifier


def test_stream_full_compaction_takes_buckets_written_since_the_last(
    catalog: FileSystemCatalog,
) -> None:
    """A bucket written at checkpoint 1 and not at 2 is still compacted (and its changes
    reported) at the full checkpoint 2 (Java's GlobalFullCompactionSinkWrite)."""
    table = _create(catalog, {"full-compaction.delta-commits": "2"}, partitioned=True)
    builder = table.new_stream_write_builder("job")
    write, commit = builder.new_write(), builder.new_commit()
    with write:
        write.write_arrow(_data(table, [(1, 1, "x", 1), (2, 2, "y", 1)]))
        commit.commit(write.prepare_commit(1), 1)
        assert _changes(table, 0) == []
        before = table.snapshot_manager.latest_id() or 0
        write.write_arrow(_data(table, [(1, 3, "z", 2)]))
        commit.commit(write.prepare_commit(2), 2)
        got = sorted(_changes(table, before), key=lambda c: (c[1][3], c[1][0]))
    assert got == [("+I", (1, 1, "x", 1)), ("+I", (2, 2, "y", 1)), ("+I", (1, 3, "z", 2))]


def test_row_deduplicate_skips_unchanged_rows_ignoring_fields(catalog: FileSystemCatalog) -> None:
    """``changelog-producer.row-deduplicate``: an update that leaves the compared columns as
    they were reports nothing; ``-ignore-fields`` leaves ``b`` out of the comparison."""
    table = _create(
        catalog,
        {
            "changelog-producer.row-deduplicate": "true",
            "changelog-producer.row-deduplicate-ignore-fields": "b",
        },
    )
    model = Model("deduplicate", compared=[0, 1])
    steps: list[list[Row]] = [
        [(1, 10, "a"), (2, 20, "b"), (3, 30, None)],
        [(1, 10, "changed b only"), (2, 21, "b"), (3, 30, "x")],
        [(1, 10, None), (3, 31, None)],
    ]
    for rows in steps:
        before = table.snapshot_manager.latest_id() or 0
        _batch(table, rows)
        model.upsert(rows)
        assert _changes(table, before) == model.full()
    assert _changes(table, 0).count(("+U", (3, 31, None))) == 1


@pytest.mark.parametrize("spill", [False, True])
def test_compact_procedure_reports_what_write_only_commits_left(
    catalog: FileSystemCatalog, spill: bool
) -> None:
    """Writers with ``write-only`` leave level 0 alone; the compact procedure's full
    compaction then reports every change since the last one (Java's dedicated compaction
    job), and a second run with nothing new reports nothing. With ``sort-spill-threshold``
    = 2 the merge of the runs goes through spill files."""
    spilling = {"sort-spill-threshold": "2"} if spill else {}
    table = _create(catalog, {"write-only": "true", **spilling})
    model = Model("deduplicate")
    for upserts, deleted in COMMITS[:3]:
        deletes = [_full_row(model, k) for k in deleted]
        _batch(table, upserts, deletes)
        model.delete(deleted)
        model.upsert(upserts)
    before = table.snapshot_manager.latest_id() or 0
    assert _changes(table, 0) == []
    procedures.compact(catalog, "db.t")
    assert _changes(table, before) == model.full()
    for upserts, deleted in COMMITS[3:]:
        deletes = [_full_row(model, k) for k in deleted]
        _batch(table, upserts, deletes)
        model.delete(deleted)
        model.upsert(upserts)
    before = table.snapshot_manager.latest_id() or 0
    procedures.compact(catalog, "db.t")
    assert _changes(table, before) == model.full()
    before = table.snapshot_manager.latest_id() or 0
    procedures.compact(catalog, "db.t")
    assert _changes(table, before) == []


def test_composite_keys_merged_a_few_rows_at_a_time(catalog: FileSystemCatalog) -> None:
    """A two-column key (string and int), its runs merged two rows at a time: each slice of
    the streaming merge is diffed on its own, and together they give the whole diff."""
    schema = pa.schema([("k", pa.string()), ("n", pa.int32()), ("v", pa.int64())])
    options = {"bucket": "1", "changelog-producer": "full-compaction", "write-only": "true"}
    catalog.create_table(
        "db.c", Schema.from_pyarrow_schema(schema, primary_keys=["k", "n"], options=options)
    )
    table = catalog.get_table("db.c")
    first = [(k, n, 0) for k in "abc" for n in (1, 2, 3)]
    _batch(table, first)
    procedures.compact(catalog, "db.c")
    assert _changes(table, 0) == [("+I", r) for r in first]
    _batch(table, [("a", 2, 1), ("b", 1, 1), ("c", 3, 0), ("d", 1, 1)], [("b", 3, 0)])
    _batch(table, [("b", 3, 2), ("a", 2, 1)], [("a", 1, 0), ("c", 2, 0)])
    store = table.store
    snapshot = store.snapshot_manager.latest()
    assert snapshot is not None
    files = [e.file for e in store.manifest_io.live_entries(snapshot)]
    result = compact_kv_bucket(store, [], 0, files, True, rounds=1, batch_rows=2)
    path = PathFactory(store.path).bucket_path(store.partition_rel_path([]), 0)
    records = read_kv_records(store, path, result.changelog)
    kinds = [KINDS[k] for k in records.column(VALUE_KIND).to_pylist()]
    rows = [tuple(r.values()) for r in records.select(["k", "n", "v"]).to_pylist()]
    assert list(zip(kinds, rows, strict=True)) == [
        ("-D", ("a", 1, 0)),
        ("-U", ("a", 2, 0)),
        ("+U", ("a", 2, 1)),
        ("-U", ("b", 1, 0)),
        ("+U", ("b", 1, 1)),
        ("-U", ("b", 3, 0)),
        ("+U", ("b", 3, 2)),
        ("-D", ("c", 2, 0)),
        ("-U", ("c", 3, 0)),
        ("+U", ("c", 3, 0)),
        ("+I", ("d", 1, 1)),
    ]


@pytest.mark.parametrize("mode", ["dynamic", "cross-partition", "postpone"])
def test_other_bucket_modes(catalog: FileSystemCatalog, mode: str) -> None:
    """Dynamic buckets and cross-partition upserts diff at each commit's full compaction (a
    key moving partition: -D in the old one, +I in the new); a postpone table's changes come
    with the compact procedure that moves its records into real buckets."""
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("p", pa.int32())])
    options = {"bucket": "-1", "changelog-producer": "full-compaction"}
    if mode == "postpone":
        options.update({"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"})
    parts = ["p"] if mode == "cross-partition" else []
    catalog.create_table(
        "db.m",
        Schema.from_pyarrow_schema(
            schema, primary_keys=["id"], partition_keys=parts, options=options
        ),
    )
    table = catalog.get_table("db.m")
    got: list[list[Change]] = []
    for rows in ([(1, "a", 1), (2, "b", 1)], [(1, "a2", 2), (3, "c", 1)]):
        before = table.snapshot_manager.latest_id() or 0
        _batch(table, rows)
        if mode == "postpone":
            procedures.compact(catalog, "db.m")
        got.append(sorted(_changes(table, before), key=lambda c: (c[1][2], c[1][0], c[0])))
    assert got[0] == [("+I", (1, "a", 1)), ("+I", (2, "b", 1))]
    if mode == "cross-partition":
        assert got[1] == [("-D", (1, "a", 1)), ("+I", (3, "c", 1)), ("+I", (1, "a2", 2))]
    else:
        assert got[1] == [("-U", (1, "a", 1)), ("+I", (3, "c", 1)), ("+U", (1, "a2", 2))]
