"""Reading changes: stream reads (``with_include_row_kind``), ``changelog`` incremental reads,
``$audit_log`` and ``$binlog``, batch and stream.

The model is the one Java's connector gives on the same commits (insert 1,2; upsert 1 and
insert 3; delete 2): a ``lookup`` or ``full-compaction`` table's changelog holds -U/+U for the
update, an ``input`` table's the records as written, a table without a producer its deltas;
the -D of the delete comes out every time.
"""

from __future__ import annotations

import pickle

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, UnsupportedOperationError
from paimon_pyspark.read.changes import pack_updates

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
Change = tuple[str, int, str]
FIRST: list[Change] = [("+I", 1, "a"), ("+I", 2, "b")]
UPDATE_AS_INPUT: list[Change] = [("+I", 1, "a2"), ("+I", 3, "c")]
UPDATE_AS_CHANGELOG: list[Change] = [("-U", 1, "a"), ("+U", 1, "a2"), ("+I", 3, "c")]
DELETE: list[Change] = [("-D", 2, "b")]


def _table(catalog: FileSystemCatalog, producer: str, **options: str) -> FileStoreTable:
    name = f"db.t_{producer.replace('-', '_')}"
    opts = {"bucket": "1", "changelog-producer": producer, **options}
    if producer == "full-compaction":
        opts.setdefault("full-compaction.delta-commits", "1")
    catalog.create_table(
        name, Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=opts)
    )
    return catalog.get_table(name)


def _commit(
    table: FileStoreTable, rows: list[tuple[int, str]], kinds: list[int] | None = None
) -> None:
    builder = table.new_batch_write_builder()
    data = pa.table({"id": [r[0] for r in rows], "v": [r[1] for r in rows]}, SCHEMA)
    with builder.new_write() as write:
        if kinds is None:
            write.write_arrow(data)
        else:
            write.write_arrow(data, row_kinds=kinds)
        builder.new_commit().commit(write.prepare_commit())


def _three_commits(table: FileStoreTable) -> None:
    _commit(table, [(1, "a"), (2, "b")])
    _commit(table, [(1, "a2"), (3, "c")])
    _commit(table, [(2, "b")], kinds=[3])


def _changes(rows: list[dict[str, object]], kind: str = "_row_kind") -> list[Change]:
    return [(str(r[kind]), int(r["id"]), str(r["v"])) for r in rows]  # type: ignore[call-overload]


def _drain(builder: object) -> list[list[Change]]:
    scan, read = builder.new_scan(), builder.new_read()  # type: ignore[attr-defined]
    out = []
    while splits := scan.plan().splits():
        out.append(_changes(read.to_arrow(splits).to_pylist(), _kind(read.output_schema)))
    return out


def _kind(schema: pa.Schema) -> str:
    return schema.names[0]


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction", "none"])
def test_stream_reads_each_snapshots_changes_with_row_kinds(
    catalog: FileSystemCatalog, producer: str
) -> None:
    table = _table(catalog, producer)
    _commit(table, [(1, "a"), (2, "b")])
    builder = table.new_stream_read_builder().with_include_row_kind()
    scan, read = builder.new_scan(), builder.new_read()
    assert read.output_schema.names == ["_row_kind", "id", "v"]
    assert _changes(read.to_arrow(scan.plan().splits()).to_pylist()) == FIRST
    _commit(table, [(1, "a2"), (3, "c")])
    _commit(table, [(2, "b")], kinds=[3])
    plans, ids = [], []
    while (plan := scan.plan()).splits():
        plans.append(_changes(read.to_arrow(plan.splits()).to_pylist()))
        ids.append(plan.snapshot_id)
    update = UPDATE_AS_INPUT if producer in ("input", "none") else UPDATE_AS_CHANGELOG
    assert plans == [update, DELETE]
    # without the kind column the same rows come out, retractions included (Java's rows)
    scan.restore(ids[0])
    plain = table.new_stream_read_builder().new_read()
    rows = [(r["id"], r["v"]) for r in plain.to_arrow(scan.plan().splits()).to_pylist()]
    assert rows == [(i, v) for _, i, v in update]
    # a pickled read (Ray ships one) keeps its kind column
    shipped = pickle.loads(pickle.dumps(read))
    scan.restore(ids[0])
    assert _changes(shipped.to_arrow(scan.plan().splits()).to_pylist()) == update


def test_lookup_stream_starts_above_level_0_and_filters_and_projects(
    catalog: FileSystemCatalog,
) -> None:
    # write-only: no compaction, so the rows stay at level 0 and no changelog is written yet
    table = _table(catalog, "lookup", **{"write-only": "true"})
    _commit(table, [(1, "a"), (2, "b")])
    builder = table.new_stream_read_builder().with_include_row_kind()
    pb = builder.new_predicate_builder()
    builder.with_filter(pb.greater_than("id", 1)).with_projection(["v"])
    scan, read = builder.new_scan(), builder.new_read()
    first = scan.plan()
    assert first.snapshot_id == 1 and first.splits() == []  # level 0 comes later as changelog
    compacting = table.copy({"write-only": "false"})
    _commit(compacting, [(3, "c")])
    rows = []
    while splits := scan.plan().splits():
        rows += read.to_arrow(splits).to_pylist()
    assert rows == [{"_row_kind": "+I", "v": "b"}, {"_row_kind": "+I", "v": "c"}]
    with pytest.raises(InvalidArgumentError, match="bool"):
        builder.with_include_row_kind("yes")  # type: ignore[arg-type]


@pytest.mark.parametrize("producer", ["lookup", "input"])
def test_changelog_incremental_reads(catalog: FileSystemCatalog, producer: str) -> None:
    table = _table(catalog, producer)
    _three_commits(table)
    latest = table.snapshot_manager.latest_id()
    assert latest is not None
    update = UPDATE_AS_CHANGELOG if producer == "lookup" else UPDATE_AS_INPUT
    every = FIRST + update + DELETE
    for mode in ("changelog", "auto"):
        between = {"incremental-between": f"0,{latest}", "incremental-between-scan-mode": mode}
        # the table's read: every change record, in snapshot order, without its kind
        rb = table.copy(between).new_read_builder()
        rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
        assert [(r["id"], r["v"]) for r in rows] == [(i, v) for _, i, v in every]
        # $audit_log over the same options: with the kinds
        audit = catalog.get_table(f"{table.name}$audit_log").copy(between)
        assert _changes(audit.to_arrow().to_pylist(), "rowkind") == every
    # delta mode reads the data files' records instead, without their retractions
    delta = {"incremental-between": f"0,{latest}", "incremental-between-scan-mode": "delta"}
    rb = table.copy(delta).new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "a"), (1, "a2"), (2, "b"), (3, "c")]


def test_audit_log_and_binlog(catalog: FileSystemCatalog) -> None:
    table = _table(catalog, "lookup")
    _three_commits(table)
    audit = catalog.get_table(f"{table.name}$audit_log")
    binlog = catalog.get_table(f"{table.name}$binlog")
    assert audit.field_names == binlog.field_names == ["rowkind", "id", "v"]
    assert str(binlog.fields[1].type) == "ARRAY<BIGINT>"
    # batch: each key merged, deletes kept (Java's forceKeepDelete)
    merged = [("+I", 1, "a2"), ("-D", 2, "b"), ("+I", 3, "c")]
    assert _changes(audit.to_arrow().to_pylist(), "rowkind") == merged
    assert binlog.to_arrow().to_pylist()[1] == {"rowkind": "-D", "id": [2], "v": ["b"]}
    rb = audit.new_read_builder().with_projection(["v", "rowkind"])
    rb = rb.with_filter(rb.new_predicate_builder().equal("rowkind", "-D"))
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist() == [
        {"v": "b", "rowkind": "-D"}
    ]
    # stream: from snapshot 1, each snapshot's changelog; $binlog pairs -U with its +U
    options = {"scan.mode": "from-snapshot", "scan.snapshot-id": "1"}
    plans = _drain(audit.copy(options).new_stream_read_builder())
    assert [c for plan in plans for c in plan] == FIRST + UPDATE_AS_CHANGELOG + DELETE
    builder = binlog.copy(options).new_stream_read_builder()
    scan, read = builder.new_scan(), builder.new_read()
    rows = []
    while splits := scan.plan().splits():
        rows += read.to_arrow(splits).to_pylist()
    assert rows[2:] == [
        {"rowkind": "+U", "id": [1, 1], "v": ["a", "a2"]},
        {"rowkind": "+I", "id": [3], "v": ["c"]},
        {"rowkind": "-D", "id": [2], "v": ["b"]},
    ]
    with pytest.raises(UnsupportedOperationError, match="audit_log"):
        catalog.get_table(f"{table.name}$snapshots").new_stream_read_builder()


def test_pack_updates_pairs_as_java_reads_them() -> None:
    # Java's PackChangelogReader takes the row after a -U as its pair, whatever it is; a
    # trailing -U stands alone
    kinds = pa.array(["+I", "-U", "+U", "-U", "-U", "+U", "-D", "-U"])
    table = pa.table({"x": list(range(8))})
    packed = pack_updates(table, kinds, ["x"]).to_pylist()
    assert packed == [
        {"rowkind": "+I", "x": [0]},
        {"rowkind": "+U", "x": [1, 2]},
        {"rowkind": "-U", "x": [3, 4]},
        {"rowkind": "+U", "x": [5]},
        {"rowkind": "-D", "x": [6]},
        {"rowkind": "-U", "x": [7]},
    ]
