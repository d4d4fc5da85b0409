"""Writing primary-key tables with deletion vectors, as Java 1.4.2's writers do.

Every commit compacts level 0 away with lookups (mergetree/dv_lookup.py): a key's older row in a
level above the output is marked in its file's vector instead of being rewritten. What a
reader of such a table sees is checked here without the read path: every live file is read
raw, its vector applied, as Java's readers read it (no merge, level 0 skipped). After every
commit, in every bucket mode and merge engine, with 32- and 64-bit vectors: no level-0 file is
left, each key is in exactly one row, and the rows equal those of the same writes into a table
without deletion vectors, read with merge-on-read. Also: the compact procedure (minor, full),
postpone compaction, rescale and overwrite on such tables, streaming writes across
checkpoints, and the commit's conflict rules that keep two writers from losing each other's
vectors.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import CommitConflictError, OptionError
from paimon_pyspark.io.data_file_reader import read_data_file
from paimon_pyspark.procedures import compact, rescale
from paimon_pyspark.store.bucket_mode import POSTPONE_BUCKET
from paimon_pyspark.store.deletion_vectors import (
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.write.compact_manager import compact_written_buckets

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int64()),
        ("ts", pa.int64()),
    ]
)
Row = dict[str, Any]

LAYOUTS: dict[str, dict[str, Any]] = {
    "fixed": {"keys": ["dt", "id"], "options": {"bucket": "2"}},
    "dynamic": {"keys": ["dt", "id"], "options": {"dynamic-bucket.target-row-num": "15"}},
    "cross-partition": {"keys": ["id"], "options": {}},
    "postpone": {
        "keys": ["dt", "id"],
        "options": {"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"},
    },
}
ENGINES: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "deduplicate-sequence": {"sequence.field": "ts"},
    "partial-update": {
        "merge-engine": "partial-update",
        "partial-update.remove-record-on-delete": "true",
    },
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.n.aggregate-function": "sum",
        "aggregation.remove-record-on-delete": "true",
    },
}


def make(catalog: FileSystemCatalog, name: str, keys: list[str], options: dict[str, str]) -> Any:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, partition_keys=["dt"], primary_keys=keys, options=options
    )
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


@dataclass
class View:
    """A table as Java's readers of a deletion-vector table see it."""

    rows: list[Row]
    level0: int
    vectors: int


def dv_view(table: FileStoreTable) -> View:
    """Every live file above level 0 read raw with its vector applied (postpone files, which
    no batch read sees, left out); the vectors must belong to live files of their bucket."""
    store = table.store
    snapshot = store.snapshot_manager.latest()
    if snapshot is None:
        return View([], 0, 0)
    dv_index = dv_index_of(store)
    entries = dv_index_entries(index_handler_of(store), snapshot)
    for e in entries:
        meta = e.index_file
        assert meta.row_count == len(meta.dv_ranges or ())
        assert store.file_io.exists(dv_index.path_of(meta)), meta.file_name
    located = deletion_files(dv_index, entries)
    live: dict[tuple[bytes, int], set[str]] = {}
    rows: list[Row] = []
    level0 = 0
    for e in store.manifest_io.live_entries(snapshot):
        key = (bytes(e.partition), e.bucket)
        live.setdefault(key, set()).add(e.file.file_name)
        if e.bucket == POSTPONE_BUCKET:
            continue
        if e.file.level == 0:
            level0 += 1
            continue
        data = read_data_file(
            store, store.bucket_path_of(e.partition, e.bucket), e.file, store.fields
        )
        where = located.get(key, {}).get(e.file.file_name)
        if where is not None:
            dv = dv_index.read(where)
            assert dv.cardinality == where.cardinality
            data = data.filter(pa.array(dv.keep_mask(data.num_rows)))
        rows += data.to_pylist()
    vectors = 0
    for key, files in located.items():
        assert set(files) <= live.get(key, set()), "a vector of a file that is not live"
        vectors += len(files)
    return View(rows, level0, vectors)


def key_of(r: Row, keys: list[str]) -> tuple[Any, ...]:
    return tuple(r[k] for k in keys)


def ordered(rows: list[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (r["dt"], r["id"]))


def check(table: FileStoreTable, expected: list[Row], keys: list[str]) -> View:
    view = dv_view(table)
    assert view.level0 == 0
    seen = [key_of(r, keys) for r in view.rows]
    assert len(seen) == len(set(seen)), "a key in two rows"
    assert ordered(view.rows) == ordered(expected)
    return view


class Workload:
    """Random upserts and deletes of keys 0..n over two partitions; a key may change its
    partition (cross-partition tables move it)."""

    def __init__(self, seed: int, keys: int = 40) -> None:
        self.rnd = random.Random(seed)
        self.keys = keys
        self.ts = 0

    def upserts(self, count: int, partial: bool) -> pa.Table:
        rows = []
        for _ in range(count):
            self.ts += 1
            i = self.rnd.randrange(self.keys)
            ts = self.rnd.randrange(1000)
            v = None if partial and self.rnd.random() < 0.3 else f"v{self.ts}"
            n = None if partial and self.rnd.random() < 0.3 else self.rnd.randrange(100)
            rows.append({"id": i, "dt": self.rnd.choice("ab"), "v": v, "n": n, "ts": ts})
        return pa.Table.from_pylist(rows, schema=SCHEMA)

    def deletes(self, count: int) -> pa.Table:
        rows = [
            {"id": self.rnd.randrange(self.keys), "dt": self.rnd.choice("ab"), "v": None}
            for _ in range(count)
        ]
        return pa.Table.from_pylist(rows, schema=SCHEMA)


def commit_both(tables: list[FileStoreTable], upserts: pa.Table, deletes: pa.Table | None) -> None:
    for table in tables:
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(upserts)
            if deletes is not None:
                write.delete_arrow(deletes)
            messages = write.prepare_commit()
        builder.new_commit().commit(messages)


@pytest.mark.parametrize("bitmap64", [False, True], ids=["bitmap32", "bitmap64"])
@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_every_commit_leaves_each_key_once_as_merge_on_read_sees_it(
    catalog: FileSystemCatalog, layout: str, engine: str, bitmap64: bool
) -> None:
    spec = LAYOUTS[layout]
    if layout == "cross-partition" and engine == "deduplicate-sequence":
        pytest.skip("Java refuses sequence.field with cross-partition updates")
    options = {**spec["options"], **ENGINES[engine], "num-sorted-run.compaction-trigger": "3"}
    dv_options = {
        **options,
        "deletion-vectors.enabled": "true",
        "deletion-vectors.bitmap64": str(bitmap64).lower(),
    }
    keys = spec["keys"]
    dv = make(catalog, "dv", keys, dv_options)
    plain = make(catalog, "plain", keys, options)
    work = Workload(zlib.crc32(f"{layout}/{engine}".encode()))
    partial = engine == "partial-update"
    vectors = 0
    for i in range(14):
        deletes = work.deletes(4) if i % 3 == 2 else None
        commit_both([dv, plain], work.upserts(25, partial), deletes)
        if layout == "postpone":
            if i % 4 != 3 and i != 13:
                continue
            compact(catalog, "db.dv", compact_strategy="minor" if i % 8 == 3 else "full")
            compact(catalog, "db.plain", compact_strategy="minor" if i % 8 == 3 else "full")
        vectors += check(dv, read_all(plain).to_pylist(), keys).vectors
    assert vectors > 0, "no commit marked a row in a vector"
    if bitmap64:
        snapshot = dv.snapshot_manager.latest()
        for e in dv_index_entries(index_handler_of(dv.store), snapshot):
            for vector in dv_index_of(dv.store).read_all(e.index_file).values():
                assert vector.bitmap64


def dedup_table(catalog: FileSystemCatalog, name: str = "t", **options: str) -> Any:
    base = {"bucket": "1", "deletion-vectors.enabled": "true", **options}
    return make(catalog, name, ["dt", "id"], base)


def upserts(ids: range, tag: str, dt: str = "a") -> pa.Table:
    return pa.Table.from_pylist(
        [{"id": i, "dt": dt, "v": f"{tag}{i}", "n": i, "ts": 0} for i in ids], schema=SCHEMA
    )


def model_rows(model: dict[tuple[str, int], str]) -> list[Row]:
    return [{"id": i, "dt": dt, "v": v, "n": i, "ts": 0} for (dt, i), v in model.items()]


def test_superseded_rows_are_marked_not_rewritten(catalog: FileSystemCatalog) -> None:
    """An update of a few keys of a big top-level file leaves that file in place and marks
    the rows it replaced; the commit is an APPEND and a COMPACT snapshot whose index file
    holds the vector (Java's file layout: one DELETION_VECTORS file per bucket)."""
    table = dedup_table(catalog)
    write_commit(table, upserts(range(100), "a"))
    (top,) = [e.file for e in table.manifest_io.live_entries(table.snapshot_manager.latest())]
    ids = write_commit(table, upserts(range(10, 13), "b"))
    assert [table.snapshot_manager.snapshot(i).commit_kind for i in ids] == ["APPEND", "COMPACT"]
    live = [e.file for e in table.manifest_io.live_entries(table.snapshot_manager.latest())]
    assert top.file_name in {f.file_name for f in live}
    (entry,) = dv_index_entries(index_handler_of(table.store), table.snapshot_manager.latest())
    meta = entry.index_file
    assert meta.file_name.startswith("index-") and meta.row_count == 1
    (r,) = meta.dv_ranges or ()
    assert (r.data_file_name, r.cardinality) == (top.file_name, 3)
    vector = dv_index_of(table.store).read_all(meta)[top.file_name]
    assert vector.positions().tolist() == [10, 11, 12]
    model = {("a", i): f"a{i}" for i in range(100)} | {("a", i): f"b{i}" for i in range(10, 13)}
    check(table, model_rows(model), ["dt", "id"])


def test_compaction_applies_and_drops_the_vectors_of_files_it_rewrites(
    catalog: FileSystemCatalog,
) -> None:
    """A full compaction reads files with their vectors applied and rewrites them: the rows
    stay, the vectors go (their bucket's index file is replaced by an empty one, as Java)."""
    table = dedup_table(catalog)
    model: dict[tuple[str, int], str] = {}
    for c in range(6):
        ids = range(c * 7, c * 7 + 20)
        write_commit(table, upserts(ids, f"c{c}-"))
        model |= {("a", i): f"c{c}-{i}" for i in ids}
    write_commit(table, upserts(range(2), "z"))
    model |= {("a", i): f"z{i}" for i in range(2)}
    assert check(table, model_rows(model), ["dt", "id"]).vectors > 0
    assert compact(catalog, "db.t", compact_strategy="full") is not None
    view = check(table, model_rows(model), ["dt", "id"])
    assert view.vectors == 0
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert {e.file.level for e in live} == {5}
    (entry,) = dv_index_entries(index_handler_of(table.store), table.snapshot_manager.latest())
    assert entry.index_file.row_count == 0
    assert compact(catalog, "db.t", compact_strategy="full") is None  # nothing left to do


def test_full_compaction_rewrites_top_level_files_with_vectors_one_by_one(
    catalog: FileSystemCatalog,
) -> None:
    """Java's pickFullCompaction: a bucket that is one top-level run rewrites exactly its
    files that have a vector (FileRewriteCompactTask), and leaves the others."""
    table = dedup_table(catalog, **{"target-file-size": "2 kb"})
    write_commit(table, upserts(range(400), "a"))
    tops = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert len(tops) > 2 and {e.file.level for e in tops} == {5}
    assert compact(catalog, "db.t", compact_strategy="full") is None
    write_commit(table, upserts(range(3), "b"))  # marks rows of the first file only
    assert compact(catalog, "db.t", compact_strategy="full") is not None
    after = {
        e.file.file_name for e in table.manifest_io.live_entries(table.snapshot_manager.latest())
    }
    first = min(tops, key=lambda e: e.file.min_sequence_number).file.file_name
    assert first not in after
    assert {e.file.file_name for e in tops} - {first} <= after
    model = {("a", i): f"a{i}" for i in range(400)} | {("a", i): f"b{i}" for i in range(3)}
    assert check(table, model_rows(model), ["dt", "id"]).vectors == 0


def test_minor_compaction_of_written_level0_files(catalog: FileSystemCatalog) -> None:
    """With ``write-only`` the writers leave level 0 (readers skip it); the compact
    procedure's minor compaction pushes it up with lookups, as Java's dedicated compaction."""
    table = dedup_table(catalog, **{"write-only": "true"})
    model: dict[tuple[str, int], str] = {}
    for c in range(4):
        ids = range(c * 5, c * 5 + 12)
        write_commit(table, upserts(ids, f"c{c}-"))
        model |= {("a", i): f"c{c}-{i}" for i in ids}
    assert dv_view(table).level0 == 4
    assert compact(catalog, "db.t", compact_strategy="minor") is not None
    check(table, model_rows(model), ["dt", "id"])
    write_commit(table, upserts(range(3), "z"))
    model |= {("a", i): f"z{i}" for i in range(3)}
    assert compact(catalog, "db.t", compact_strategy="minor") is not None
    assert check(table, model_rows(model), ["dt", "id"]).vectors > 0


def test_overwrite_drops_the_vectors_of_the_partitions_it_replaces(
    catalog: FileSystemCatalog,
) -> None:
    table = dedup_table(catalog)
    for dt in "ab":
        write_commit(table, upserts(range(30), "x", dt))
        write_commit(table, upserts(range(5), "y", dt))
    entries = dv_index_entries(index_handler_of(table.store), table.snapshot_manager.latest())
    before = {bytes(e.partition): e.index_file.file_name for e in entries}
    assert len(before) == 2
    builder = table.new_batch_write_builder().overwrite({"dt": "a"})
    with builder.new_write() as write:
        write.write_arrow(upserts(range(3), "o", "a"))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    entries = dv_index_entries(index_handler_of(table.store), table.snapshot_manager.latest())
    after = {bytes(e.partition): e.index_file.file_name for e in entries}
    assert set(after.values()) & set(before.values()) == {before[max(before)]}  # dt=b kept
    model = {("a", i): f"o{i}" for i in range(3)}
    model |= {("b", i): f"x{i}" for i in range(30)} | {("b", i): f"y{i}" for i in range(5)}
    check(table, model_rows(model), ["dt", "id"])


def test_rescale_replaces_buckets_and_their_vectors(catalog: FileSystemCatalog) -> None:
    table = dedup_table(catalog)
    write_commit(table, upserts(range(60), "x"))
    write_commit(table, upserts(range(10), "y"))
    assert dv_view(table).vectors == 1
    assert rescale(catalog, "db.t", bucket_num=3) is not None
    table = catalog.get_table("db.t")
    model = {("a", i): f"x{i}" for i in range(60)} | {("a", i): f"y{i}" for i in range(10)}
    view = check(table, model_rows(model), ["dt", "id"])
    assert view.vectors == 0
    live = table.manifest_io.live_entries(table.snapshot_manager.latest())
    assert {e.bucket for e in live} == {0, 1, 2}


def test_stream_write_carries_the_vectors_across_checkpoints(catalog: FileSystemCatalog) -> None:
    """A StreamTableWrite keeps its buckets' vectors between checkpoints (Java keeps a
    writer's dvMaintainer): each checkpoint's index file builds on the last one's."""
    table = dedup_table(catalog)
    builder = table.new_stream_write_builder()
    write, commit = builder.new_write(), builder.new_commit()
    model: dict[tuple[str, int], str] = {}
    vectors = 0
    try:
        for c in range(6):
            ids = range(c * 4, c * 4 + 10)
            write.write_arrow(upserts(ids, f"c{c}-"))
            commit.commit(write.prepare_commit(c), c)
            model |= {("a", i): f"c{c}-{i}" for i in ids}
            vectors = max(vectors, check(table, model_rows(model), ["dt", "id"]).vectors)
    finally:
        write.close()
        commit.close()
    assert vectors > 0


def test_shared_bucket_writers_compact_after_their_commit(catalog: FileSystemCatalog) -> None:
    """Writers sharing a bucket (a distributed job's tasks) do not compact; the driver's
    compaction of the written buckets (compact_written_buckets) pushes level 0 up with
    lookups and writes the bucket's index file."""
    table = dedup_table(catalog)
    write_commit(table, upserts(range(400), "x"))
    builder = table.new_batch_write_builder()
    messages = []
    for slot, ids in enumerate([range(0, 5), range(20, 25)]):
        write = builder.new_write(sequence_slot=(slot, 2))
        try:
            write.write_arrow(upserts(ids, f"s{slot}-"))
            messages += write.prepare_commit()
        finally:
            write.close()
    builder.new_commit().commit(messages)
    assert dv_view(table).level0 == 2
    compacted = compact_written_buckets(table.store, {(m.partition, m.bucket) for m in messages})
    assert any(m.compact_increment.new_index_files for m in compacted)
    table.new_batch_write_builder().new_commit().commit(compacted)
    model = {("a", i): f"x{i}" for i in range(400)}
    model |= {("a", i): f"s0-{i}" for i in range(5)} | {("a", i): f"s1-{i}" for i in range(20, 25)}
    check(table, model_rows(model), ["dt", "id"])


def test_two_writers_of_one_bucket_cannot_lose_each_others_vectors(
    catalog: FileSystemCatalog,
) -> None:
    """Two writers that restored the same snapshot both mark rows of the bucket's top file.
    Java's commit would keep the second's index file and lose the first's marks (a key in two
    rows); ours refuses the second compaction. Its data commit is in, at level 0, which the
    next commit's compaction folds in."""
    table = dedup_table(catalog)
    write_commit(table, upserts(range(50), "x"))
    b1, b2 = table.new_batch_write_builder(), table.new_batch_write_builder()
    w1, w2 = b1.new_write(), b2.new_write()
    try:
        w1.write_arrow(upserts(range(0, 5), "p"))
        w2.write_arrow(upserts(range(10, 15), "q"))
        m1, m2 = w1.prepare_commit(), w2.prepare_commit()
    finally:
        w1.close()
        w2.close()
    b1.new_commit().commit(m1)
    with pytest.raises(CommitConflictError, match="deletion vector conflicts"):
        b2.new_commit().commit(m2)
    model = {("a", i): f"x{i}" for i in range(50)} | {("a", i): f"p{i}" for i in range(5)}
    check_level0 = dv_view(table)
    assert check_level0.level0 == 1
    write_commit(table, upserts(range(20, 22), "r"))
    model |= {("a", i): f"q{i}" for i in range(10, 15)} | {("a", i): f"r{i}" for i in (20, 21)}
    check(table, model_rows(model), ["dt", "id"])


def test_a_vector_for_a_file_a_concurrent_compaction_removed_conflicts(
    catalog: FileSystemCatalog,
) -> None:
    """A writer marks a row of a file that a compaction rewrote meanwhile, without changing the
    bucket's vectors: its index file would hold a vector of a file that is gone."""
    table = dedup_table(catalog)
    write_commit(table, upserts(range(50), "x"))
    builder = table.new_batch_write_builder()
    write = builder.new_write()
    try:
        write.write_arrow(upserts(range(3), "p"))  # restores the snapshot
        options = "compaction.force-rewrite-all-files=true"
        assert compact(catalog, "db.t", compact_strategy="full", options=options) is not None
        messages = write.prepare_commit()
    finally:
        write.close()
    with pytest.raises(CommitConflictError, match="which is not live"):
        builder.new_commit().commit(messages)
    view = dv_view(table)  # the data commit is in, at level 0, which readers skip
    assert view.level0 == 1 and view.vectors == 0
    assert ordered(view.rows) == ordered(model_rows({("a", i): f"x{i}" for i in range(50)}))
    write_commit(table, upserts(range(60, 61), "r"))
    model = {("a", i): f"x{i}" for i in range(50)} | {("a", i): f"p{i}" for i in range(3)}
    check(table, model_rows(model | {("a", 60): "r60"}), ["dt", "id"])


def test_first_row_with_deletion_vectors_is_refused_as_java_refuses_it(
    catalog: FileSystemCatalog,
) -> None:
    with pytest.raises(OptionError, match="First row merge engine does not need"):
        dedup_table(catalog, **{"merge-engine": "first-row"})


def test_a_commit_without_changes_of_vectors_writes_no_index_file(
    catalog: FileSystemCatalog,
) -> None:
    """New keys only: the level-0 file is moved up (Java's upgrade), nothing is marked, and
    no index file is written."""
    table = dedup_table(catalog)
    ids = write_commit(table, upserts(range(10), "x"))
    ids += write_commit(table, upserts(range(10, 20), "y"))
    assert not dv_index_entries(index_handler_of(table.store), table.snapshot_manager.latest())
    assert all(table.snapshot_manager.snapshot(i).index_manifest is None for i in ids)
    model = {("a", i): f"x{i}" for i in range(10)} | {("a", i): f"y{i}" for i in range(10, 20)}
    check(table, model_rows(model), ["dt", "id"])
