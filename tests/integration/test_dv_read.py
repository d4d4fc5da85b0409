"""Reading tables with deletion vectors: every read path drops the rows a vector marks.

The tables are real: data written and compacted by our writer with the option off, then
``deletion-vectors.enabled`` switched on (``deletion-vectors.modifiable``), and vectors written
as Java's index files (``DeletionVectorsIndexFile.write_single``, through a bucket's
``BucketDvMaintainer``) and committed as Java's writers commit them: in a CommitMessage's
``CompactIncrement.new_index_files``. The expected rows come from the data files themselves:
each file's rows in file order without the positions marked, so a reader that misplaces a
position (after a row-group split, a slice, a filter) reads other rows than these.
"""

from __future__ import annotations

import dataclasses
import itertools
import pickle
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from table_helpers import sort_rows, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.file_store_commit import new_store_commit
from paimon_pyspark.errors import FileMissingError, InvalidArgumentError
from paimon_pyspark.io.data_file_reader import read_data_file, row_group_rows
from paimon_pyspark.procedures import compact
from paimon_pyspark.read.bootstrap import bootstrap_splits
from paimon_pyspark.read.predicate import Predicate
from paimon_pyspark.read.ray_datasource import read_splits
from paimon_pyspark.read.split_codec import decode_split, encode_split, encode_splits
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.store.deletion_vectors import (
    BucketDvMaintainer,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.paths import PathFactory
from paimon_pyspark.store.schema_change import SchemaChange

Row = dict[str, Any]
APPEND_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("dt", pa.string())])
PK_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64())])


# --- building tables ------------------------------------------------------------------------


def append_table(
    catalog: FileSystemCatalog, bucket: int, bitmap64: bool, commits: int = 3, rows: int = 400
) -> FileStoreTable:
    """An append table (partitioned by ``dt``) of ``commits`` commits, then DV switched on."""
    options = {"bucket": str(bucket), "deletion-vectors.modifiable": "true"}
    if bucket > 0:
        options["bucket-key"] = "id"
    if bitmap64:
        options["deletion-vectors.bitmap64"] = "true"
    schema = Schema.from_pyarrow_schema(APPEND_SCHEMA, partition_keys=["dt"], options=options)
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for c in range(commits):
        ids = np.arange(c * rows, (c + 1) * rows)
        write_commit(
            table,
            pa.table(
                {
                    "id": ids,
                    "v": [f"v{i}" for i in ids],
                    "dt": ["a" if i % 3 else "b" for i in ids],
                },
                schema=APPEND_SCHEMA,
            ),
        )
    return enable_dv(catalog)


def enable_dv(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.alter_table("db.t", [SchemaChange.set_option("deletion-vectors.enabled", "true")])
    table = catalog.get_table("db.t")
    assert table.options.deletion_vectors_enabled
    return table


def live(table: FileStoreTable) -> list[ManifestEntry]:
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return table.manifest_io.live_entries(snapshot)


def bucket_path(table: FileStoreTable, e: ManifestEntry) -> str:
    values = table.store.partition_rel_path(list(_partition_values(table, e.partition)))
    return PathFactory(table.path).bucket_path(values, e.bucket)


def _partition_values(table: FileStoreTable, partition: bytes) -> tuple[Any, ...]:
    from paimon_pyspark.spec.binary_row import deserialize_with_arity

    return tuple(deserialize_with_arity(partition, table.partition_types))


def file_table(table: FileStoreTable, e: ManifestEntry) -> pa.Table:
    """The rows of one data file in file order (the positions a vector names)."""
    return read_data_file(table.store, bucket_path(table, e), e.file, list(table.fields))


def commit_vectors(
    table: FileStoreTable,
    marks: Mapping[str, Iterable[int]],
    more: Mapping[tuple[bytes, int], CompactIncrement] | None = None,
) -> None:
    """Mark ``marks`` (data file name -> positions) deleted: per (partition, bucket), the
    bucket's vectors with these added, as one new index file in the CommitMessage's
    CompactIncrement (``more`` adds files to that increment), committed as Java's writers do."""
    snapshot = table.snapshot_manager.latest()
    handler = index_handler_of(table.store)
    dv_index = dv_index_of(table.store)
    pf = PathFactory(table.path)
    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in live(table):
        if e.file.file_name in marks:
            by_bucket.setdefault((e.partition, e.bucket), []).append(e)
    messages = []
    for key in sorted({*by_bucket, *(more or {})}):
        partition, bucket = key
        maintainer = BucketDvMaintainer.restore(dv_index, handler, snapshot, partition, bucket)
        for e in by_bucket.get(key, []):
            maintainer.notify_new_deletion(e.file.file_name, list(marks[e.file.file_name]))
        meta = maintainer.write_index(pf)
        base = (more or {}).get(key, CompactIncrement())
        increment = dataclasses.replace(
            base, new_index_files=base.new_index_files + ((meta,) if meta else ())
        )
        total = table.options.bucket if table.options.bucket > 0 else None
        messages.append(CommitMessage(partition, bucket, total, compact_increment=increment))
    assert new_store_commit(table.store, "dv-test").commit(messages)


def mark_some(table: FileStoreTable, seed: int, share: float = 0.1) -> dict[str, np.ndarray]:
    """Mark about ``share`` of the rows of every other live file, always its first and last."""
    rng = np.random.default_rng(seed)
    marks: dict[str, np.ndarray] = {}
    for i, e in enumerate(sorted(live(table), key=lambda e: e.file.file_name)):
        if i % 2:
            continue
        n = e.file.row_count
        chosen = rng.choice(n, size=max(1, int(n * share)), replace=False)
        marks[e.file.file_name] = np.unique(np.concatenate([chosen, [0, n - 1]]))
    commit_vectors(table, {k: v.tolist() for k, v in marks.items()})
    return marks


def expected_rows(table: FileStoreTable, marks: Mapping[str, np.ndarray]) -> pa.Table:
    """Every live file's rows without its marked positions."""
    parts = []
    for e in live(table):
        rows = file_table(table, e)
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[np.asarray(marks.get(e.file.file_name, []), dtype=np.int64)] = False
        parts.append(rows.filter(pa.array(keep)))
    return pa.concat_tables(parts)


def read(table: FileStoreTable, predicate: Predicate | None = None, **kw: Any) -> pa.Table:
    rb = table.new_read_builder().with_filter(predicate)
    if "projection" in kw:
        rb = rb.with_projection(kw["projection"])
    if "limit" in kw:
        rb = rb.with_limit(kw["limit"])
    return rb.new_read().to_arrow(rb.new_scan().plan().splits())


# --- append tables --------------------------------------------------------------------------


@pytest.mark.parametrize("bitmap64", [False, True], ids=["bitmap32", "bitmap64"])
@pytest.mark.parametrize("bucket", [-1, 2], ids=["unaware", "fixed"])
def test_append_reads_drop_the_marked_rows(
    catalog: FileSystemCatalog, bucket: int, bitmap64: bool
) -> None:
    table = append_table(catalog, bucket, bitmap64)
    marks = mark_some(table, seed=abs(bucket) + 7 * bitmap64)
    want = sort_rows(expected_rows(table, marks))
    assert len(want) < sum(e.file.row_count for e in live(table))
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    carried = [d for s in splits for d in s.deletion_files if d is not None]
    assert len(carried) == len(marks)
    index_bytes = (table.file_io.read_bytes(d.path) for d in carried)
    magic = 1681511377 if bitmap64 else 1581511376
    order = "little" if bitmap64 else "big"
    for d, data in zip(carried, index_bytes, strict=True):
        assert int.from_bytes(data[d.offset + 4 : d.offset + 8], order, signed=True) == magic
    read_ = rb.new_read()
    assert sort_rows(read_.to_arrow(splits)) == want
    assert sort_rows(read_.to_arrow(splits, parallelism=1)) == want
    assert sort_rows(pa.Table.from_pandas(read_.to_pandas(splits), preserve_index=False)) == want
    assert sort_rows(read_.to_arrow_batch_reader(splits).read_all()) == want
    names = table.field_names
    assert sorted(map(tuple, read_.to_iterator(splits))) == sorted(
        tuple(r[n] for n in names) for r in want
    )
    con = read_.to_duckdb(splits, "t")
    assert con.execute("SELECT count(*), sum(id) FROM t").fetchone() == (
        len(want),
        sum(r["id"] for r in want),
    )
    ray_rows = pa.concat_tables(read_splits(read_, encode_splits(splits)))
    assert sort_rows(ray_rows) == want


def test_filters_equal_the_unfiltered_rows_filtered(catalog: FileSystemCatalog) -> None:
    table = append_table(catalog, -1, False)
    marks = mark_some(table, seed=3, share=0.3)
    everything = read(table)
    assert everything.num_rows == expected_rows(table, marks).num_rows
    pb = table.new_read_builder().new_predicate_builder()
    cases = [
        (pb.less_than("id", 500), pc.less(everything["id"], 500)),
        (pb.equal("dt", "b"), pc.equal(everything["dt"], "b")),
        (
            pb.and_predicates([pb.equal("dt", "a"), pb.greater_or_equal("id", 800)]),
            pc.and_(pc.equal(everything["dt"], "a"), pc.greater_equal(everything["id"], 800)),
        ),
        (
            pb.is_in("v", ["v0", "v1", "v401", "v799"]),
            pc.is_in(everything["v"], pa.array(["v0", "v1", "v401", "v799"])),
        ),
    ]
    for predicate, mask in cases:
        assert sort_rows(read(table, predicate)) == sort_rows(everything.filter(mask))


def test_projection_and_limit_apply_after_the_vectors(catalog: FileSystemCatalog) -> None:
    table = append_table(catalog, 2, False)
    marks = mark_some(table, seed=5, share=0.5)
    want = expected_rows(table, marks)
    got = read(table, projection=["v", "id"])
    assert got.column_names == ["v", "id"]
    assert sort_rows(got) == sort_rows(want.select(["v", "id"]))
    only_partition = read(table, projection=["dt"])  # read from the row counts alone
    assert sorted(only_partition["dt"].to_pylist()) == sorted(want["dt"].to_pylist())
    live_ids = set(want["id"].to_pylist())
    for limit in (1, 7, 300):
        limited = read(table, limit=limit)
        assert limited.num_rows == limit
        assert set(limited["id"].to_pylist()) <= live_ids
        streamed = table.new_read_builder().with_limit(limit)
        batches = streamed.new_read().to_arrow_batch_reader(streamed.new_scan().plan().splits())
        assert set(batches.read_all()["id"].to_pylist()) <= live_ids


def test_with_slice_cuts_file_positions_then_drops_marked_rows(
    catalog: FileSystemCatalog,
) -> None:
    table = append_table(catalog, -1, False, commits=2, rows=300)
    marks = mark_some(table, seed=11, share=0.2)
    rb = table.new_read_builder()
    plan = rb.new_scan().plan().splits()
    # the rows in plan order, with their file positions and whether they survive
    ordered = []
    for split in plan:
        for f in split.files:
            entry = next(e for e in live(table) if e.file.file_name == f.file_name)
            ids = file_table(table, entry)["id"].to_pylist()
            dead = set(marks.get(f.file_name, np.empty(0)).tolist())
            ordered += [(i, p not in dead) for p, i in enumerate(ids)]
    total = len(ordered)
    bounds = [0, 1, 77, 260, 301, 555, total]
    seen: list[int] = []
    for lo, hi in itertools.pairwise(bounds):
        sliced = rb.new_scan().with_slice(lo, hi).plan().splits()
        assert any(s.file_ranges for s in sliced) or (lo, hi) == (0, total)
        got = rb.new_read().to_arrow(sliced)["id"].to_pylist()
        assert sorted(got) == sorted(i for i, alive in ordered[lo:hi] if alive)
        seen += got
    assert sorted(seen) == sorted(i for i, alive in ordered if alive)


def test_row_groups_of_a_big_file_keep_their_positions(catalog: FileSystemCatalog) -> None:
    """A stream reads a file of over a million rows row group by row group: each group's
    vector positions start where the groups before it end."""
    schema = Schema.from_pyarrow_schema(
        pa.schema([("id", pa.int64())]), options={"deletion-vectors.modifiable": "true"}
    )
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    n = 1_300_000
    write_commit(table, pa.table({"id": np.arange(n)}))
    table = enable_dv(catalog)
    (entry,) = live(table)
    groups = row_group_rows(table.store, bucket_path(table, entry), entry.file)
    assert groups is not None and len(groups) > 1 and sum(groups) == n
    starts = np.cumsum([0, *groups[:-1]])
    dead = np.unique(np.concatenate([starts, starts - 1, starts + 1, np.arange(0, n, 97)]))
    dead = dead[(dead >= 0) & (dead < n)]
    commit_vectors(table, {entry.file.file_name: dead.tolist()})
    want = np.setdiff1d(np.arange(n), dead)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    streamed = rb.new_read().to_arrow_batch_reader(splits).read_all()["id"].to_numpy()
    assert np.array_equal(streamed, want)  # in file order
    whole = rb.new_read().to_arrow(splits)["id"].to_numpy()
    assert np.array_equal(whole, want)
    pb = rb.new_predicate_builder()
    big = table.new_read_builder().with_filter(pb.greater_or_equal("id", int(starts[1]) - 2))
    after = big.new_read().to_arrow_batch_reader(splits).read_all()["id"].to_numpy()
    assert np.array_equal(after, want[want >= starts[1] - 2])


def test_a_split_carries_its_vectors_through_the_codec_and_pickle(
    catalog: FileSystemCatalog,
) -> None:
    table = append_table(catalog, 2, True)
    marks = mark_some(table, seed=13)
    splits = table.new_read_builder().new_scan().plan().splits()
    with_dv = [s for s in splits if any(s.deletion_files)]
    assert with_dv
    for s in splits:
        back = decode_split(encode_split(s), table.partition_types)
        assert back == s
        assert back.deletion_files == s.deletion_files
        assert pickle.loads(pickle.dumps(s)) == s
    decoded = [decode_split(encode_split(s), table.partition_types) for s in splits]
    want = sort_rows(expected_rows(table, marks))
    assert sort_rows(table.new_read_builder().new_read().to_arrow(decoded)) == want
    # one file of a split keeps its own vector
    split = with_dv[0]
    for f in split.files:
        one = split.with_files([f])
        assert one.deletion_files == (split.deletion_file_of(f),)
    with pytest.raises(InvalidArgumentError, match="deletion files"):
        dataclasses.replace(split, files=split.files + split.files)


def test_a_vector_in_a_missing_index_file_is_a_typed_error(catalog: FileSystemCatalog) -> None:
    table = append_table(catalog, -1, False, commits=1)
    mark_some(table, seed=17)
    splits = table.new_read_builder().new_scan().plan().splits()
    (path,) = {d.path for s in splits for d in s.deletion_files if d is not None}
    table.file_io.delete_quietly(path)
    with pytest.raises(FileMissingError, match="db.t") as info:
        table.new_read_builder().new_read().to_arrow(splits)
    assert path in str(info.value) and info.value.path == path
    assert "deletion vector" in str(info.value)


def test_explain_counts_the_vectors(catalog: FileSystemCatalog) -> None:
    table = append_table(catalog, -1, False)
    marks = mark_some(table, seed=19)
    result = table.new_read_builder().explain(verbose=True)
    assert result.deletion_vectors_enabled
    assert result.deletion_file_count == len(marks)
    assert result.estimated_merged_row_count == expected_rows(table, marks).num_rows
    assert result.splits is not None
    assert sum(s.deletion_file_count for s in result.splits) == len(marks)
    assert "Deletion vectors:   " in str(result)


def test_incremental_reads_follow_java(catalog: FileSystemCatalog) -> None:
    """A diff reads the end's new files with their vectors in the end snapshot; a delta reads
    the APPEND snapshots' files without vectors (Java's delta splits carry none) and skips the
    vectors' own commit (not an APPEND)."""
    table = append_table(catalog, -1, False, commits=1)
    first = table.snapshot_manager.latest_id()
    write_commit(
        table.copy({"deletion-vectors.enabled": "false"}),
        pa.table({"id": [1000, 1001, 1002], "v": ["x", "y", "z"], "dt": ["a", "a", "b"]}),
    )
    table = catalog.get_table("db.t")
    new = next(e for e in live(table) if 1000 in file_table(table, e)["id"].to_pylist())
    ids = file_table(table, new)["id"].to_pylist()
    commit_vectors(table, {new.file.file_name: [ids.index(1001)]})
    last = table.snapshot_manager.latest()
    assert last is not None and last.commit_kind != "APPEND"
    between = f"{first},{last.id}"
    diff = table.copy({"incremental-between": between, "incremental-between-scan-mode": "diff"})
    assert sorted(read(diff)["id"].to_pylist()) == [1000, 1002]
    delta = table.copy({"incremental-between": between})
    assert sorted(read(delta)["id"].to_pylist()) == [1000, 1001, 1002]


def test_a_stream_starts_with_the_vectors_applied(catalog: FileSystemCatalog) -> None:
    table = append_table(catalog, -1, False, commits=2)
    marks = mark_some(table, seed=23)
    builder = table.new_stream_read_builder()
    scan, stream_read = builder.new_scan(), builder.new_read()
    first = stream_read.to_arrow(scan.plan().splits())
    assert sort_rows(first) == sort_rows(expected_rows(table, marks))
    assert scan.plan().splits() == []


# --- primary-key tables ---------------------------------------------------------------------


def pk_rows(ids: Iterable[int], tag: str) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {"id": ids, "v": [f"{tag}{i}" for i in ids], "n": [i % 17 for i in ids]}, schema=PK_SCHEMA
    )


def pk_table(catalog: FileSystemCatalog, bitmap64: bool) -> tuple[FileStoreTable, dict[int, Row]]:
    """A fixed-bucket primary-key table in the state Java's writer leaves with deletion
    vectors: keys 0..1999 ('a') fully compacted to level 5; keys 500..899 ('b') at level 3
    (a level-0 file upgraded by a compaction) with the 'a' rows of those keys marked in the
    level-5 vectors; keys 1900..1949 deleted (only marked); keys 950..1099 ('c') written
    afterwards at level 0, which batch reads skip. Returns the table and the rows a merge of
    every file (a stream's first plan) gives."""
    options = {"bucket": "2", "deletion-vectors.modifiable": "true"}
    if bitmap64:
        options["deletion-vectors.bitmap64"] = "true"
    schema = Schema.from_pyarrow_schema(PK_SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    write_commit(table, pk_rows(range(2000), "a"))
    assert compact(catalog, "db.t") is not None
    write_commit(table.copy({"write-only": "true"}), pk_rows(range(500, 900), "b"))
    table = enable_dv(catalog)
    upgraded: dict[tuple[bytes, int], CompactIncrement] = {}
    marks: dict[str, list[int]] = {}
    for e in live(table):
        if e.file.level == 0:
            up = dataclasses.replace(e.file, level=3)
            upgraded[(e.partition, e.bucket)] = CompactIncrement((e.file,), (up,))
        else:
            ids = np.asarray(file_table(table, e)["id"])
            gone = ((ids >= 500) & (ids < 900)) | ((ids >= 1900) & (ids < 1950))
            marks[e.file.file_name] = np.flatnonzero(gone).tolist()
    commit_vectors(table, marks, upgraded)
    write_commit(
        table.copy({"write-only": "true", "deletion-vectors.enabled": "false"}),
        pk_rows(range(950, 1100), "c"),
    )
    table = catalog.get_table("db.t")
    merged: dict[int, Row] = {}
    for batch in (
        pk_rows(range(2000), "a"),
        pk_rows(range(500, 900), "b"),
        pk_rows(range(950, 1100), "c"),
    ):
        for r in batch.to_pylist():
            merged[r["id"]] = r
    for i in range(1900, 1950):
        merged.pop(i)
    return table, merged


def visible(merged: Mapping[int, Row]) -> list[Row]:
    """What a batch read shows: the merge without the level-0 'c' rows (old ones stay)."""
    out = dict(merged)
    for i in range(950, 1100):
        out[i] = {"id": i, "v": f"a{i}", "n": i % 17}
    return sort_rows(pa.Table.from_pylist(list(out.values()), schema=PK_SCHEMA))


@pytest.mark.parametrize("bitmap64", [False, True], ids=["bitmap32", "bitmap64"])
def test_pk_batch_read_skips_level_0_and_reads_files_unmerged(
    catalog: FileSystemCatalog, bitmap64: bool
) -> None:
    table, merged = pk_table(catalog, bitmap64)
    assert {e.file.level for e in live(table)} == {0, 3, 5}
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    assert all(f.level > 0 for s in splits for f in s.files)
    assert sum(d is not None for s in splits for d in s.deletion_files) == 2
    want = visible(merged)
    assert sort_rows(rb.new_read().to_arrow(splits)) == want
    assert sort_rows(rb.new_read().to_arrow_batch_reader(splits).read_all()) == want
    result = rb.explain()
    assert result.splits_raw_convertible == result.split_count > 0
    assert result.estimated_merged_row_count == len(want)
    decoded = [decode_split(encode_split(s), table.partition_types) for s in splits]
    assert sort_rows(rb.new_read().to_arrow(decoded)) == want


def test_pk_filters_projection_and_limit(catalog: FileSystemCatalog) -> None:
    table, merged = pk_table(catalog, False)
    everything = read(table)
    assert sort_rows(everything) == visible(merged)
    pb = table.new_read_builder().new_predicate_builder()
    cases = [
        (pb.equal("v", "b600"), pc.equal(everything["v"], "b600")),
        (pb.equal("v", "a600"), pc.equal(everything["v"], "a600")),  # marked: gone
        (
            pb.between("id", 880, 1920),
            pc.and_(pc.greater_equal(everything["id"], 880), pc.less_equal(everything["id"], 1920)),
        ),
        (pb.equal("n", 3), pc.equal(everything["n"], 3)),
        (pb.startswith("v", "b"), pc.starts_with(everything["v"], "b")),
    ]
    for predicate, mask in cases:
        assert sort_rows(read(table, predicate)) == sort_rows(everything.filter(mask))
    assert read(table, pb.equal("v", "a600")).num_rows == 0
    projected = read(table, projection=["n", "id"])
    assert projected.column_names == ["n", "id"]
    assert sort_rows(projected) == sort_rows(everything.select(["n", "id"]))
    limited = read(table, limit=10)
    assert limited.num_rows == 10
    assert set(limited["id"].to_pylist()) <= set(everything["id"].to_pylist())


def test_pk_stream_and_bootstrap_plans_merge_every_level_with_the_vectors(
    catalog: FileSystemCatalog,
) -> None:
    """A stream's first plan and the cross-partition key bootstrap read level 0 too (Java sets
    no level filter there): those splits are merged, each file's vector applied first."""
    table, merged = pk_table(catalog, False)
    builder = table.new_stream_read_builder()
    splits = builder.new_scan().plan().splits()
    assert any(f.level == 0 for s in splits for f in s.files)
    assert any(d is not None for s in splits for d in s.deletion_files)
    want = sort_rows(pa.Table.from_pylist(list(merged.values()), schema=PK_SCHEMA))
    assert sort_rows(builder.new_read().to_arrow(splits)) == want
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    keys = bootstrap_splits(table.store, snapshot)
    assert {f.level for s in keys for f in s.files} == {0, 3, 5}
    read_keys = table.new_read_builder().with_projection(["id"]).new_read().to_arrow(keys)
    assert sorted(read_keys["id"].to_pylist()) == sorted(merged)


def test_pk_split_with_an_unrecorded_delete_count_is_merged(catalog: FileSystemCatalog) -> None:
    """Java reads a split raw only when every file records its delete count; a file without
    one may hold retractions, so the split is merged, its vectors applied first."""
    table, merged = pk_table(catalog, False)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    unknown = [
        dataclasses.replace(
            s,
            files=tuple(dataclasses.replace(f, delete_row_count=None) for f in s.files),
        )
        for s in splits
    ]
    assert all(isinstance(f, DataFileMeta) for s in unknown for f in s.files)
    assert sort_rows(rb.new_read().to_arrow(unknown)) == visible(merged)


def test_pk_diff_applies_each_side_its_own_snapshot_vectors(catalog: FileSystemCatalog) -> None:
    """A diff split carries the end's vectors for its files and the start's for the files the
    end lacks (Java's IncrementalSplit): a level-5 file moved to level 4 is the same rows on
    both sides once each side's vector is applied, so the diff is empty."""
    table, _ = pk_table(catalog, False)
    start = table.snapshot_manager.latest_id()
    moved = next(e for e in live(table) if e.file.level == 5 and e.bucket == 0)
    down = dataclasses.replace(moved.file, level=4)
    commit_vectors(table, {}, {(moved.partition, 0): CompactIncrement((moved.file,), (down,))})
    end = table.snapshot_manager.latest_id()
    diff = table.copy(
        {"incremental-between": f"{start},{end}", "incremental-between-scan-mode": "diff"}
    )
    (split,) = diff.new_read_builder().new_scan().plan().splits()
    assert split.files == (down,) and split.before_files == (moved.file,)
    assert split.deletion_files[0] is not None
    assert split.before_deletion_files == split.deletion_files
    assert read(diff).num_rows == 0
    encoded = decode_split(encode_split(split), table.partition_types)
    assert diff.new_read_builder().new_read().to_arrow([encoded]).num_rows == 0
