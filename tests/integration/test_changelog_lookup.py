"""``changelog-producer = lookup``: the changelog each commit's compaction writes, against what
Java's LookupChangelogMergeFunctionWrapper (FirstRowMergeFunctionWrapper for first-row) gives
for the same writes, computed here from the writes alone.

A lookup table's writer pushes every level-0 file up at its commit, so each commit's changelog is
the difference between the table before and after it, per key it wrote: a new row +I, a
removed row -D (the old row), any other key -U (old row) then +U (new row), even when equal,
unless ``changelog-producer.row-deduplicate`` finds them equal; first-row: +I of new keys only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_pyspark import FileStoreTable, Schema, procedures
from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.errors import OptionError
from paimon_pyspark.io.data_file_reader import read_kv_records
from paimon_pyspark.spec.key_value import VALUE_KIND

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("n", pa.int64()), ("ts", pa.int64())])
KIND = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}
Row = tuple[Any, Any, Any]  # v, n, ts
Commit = list[tuple[str, int, Row]]  # kind, id, values

COMMITS: list[Commit] = [
    [("+I", i, (f"a{i}", i, 10)) for i in range(1, 7)],
    [("+U", 2, ("b2", 5, 20)), ("+U", 3, (None, 7, 20)), ("-D", 4, (None, None, 20)),
     ("+I", 7, ("a7", 1, 20))],
    [("+U", 2, ("b2", 5, 30)), ("-D", 7, (None, None, 30)), ("+I", 8, ("a8", 2, 30)),
     ("+U", 1, ("c1", 1, 5))],
    [("+I", 4, ("d4", 4, 40)), ("-D", 8, (None, None, 40)), ("+U", 5, ("e5", None, 40)),
     ("+U", 5, (None, 3, 41))],
    [("-D", 9, (None, None, 50)), ("+U", 3, ("f3", 1, 50)), ("+I", 10, ("a10", 0, 50))],
]  # fmt: skip


# --- the model: the table after each commit, as each engine merges ----------------------------


def dedup(old: Row | None, kind: str, new: Row) -> Row | None:
    return None if kind == "-D" else new


def dedup_seq(old: Row | None, kind: str, new: Row) -> Row | None:
    if old is not None and new[2] < old[2]:
        return old  # an older sequence.field value loses
    return None if kind == "-D" else new


def partial_update(old: Row | None, kind: str, new: Row) -> Row | None:
    if kind == "-D":
        return None  # partial-update.remove-record-on-delete
    if old is None:
        return new
    return tuple(n if n is not None else o for o, n in zip(old, new, strict=True))  # type: ignore[return-value]


def aggregation(old: Row | None, kind: str, new: Row) -> Row | None:
    if kind == "-D":
        return None  # aggregation.remove-record-on-delete
    if old is None:
        return new
    v = new[0] if new[0] is not None else old[0]
    n = None if old[1] is None and new[1] is None else (old[1] or 0) + (new[1] or 0)
    return (v, n, new[2] if new[2] is not None else old[2])


def first_row(old: Row | None, kind: str, new: Row) -> Row | None:
    return old if old is not None else (None if kind == "-D" else new)


ENGINES: dict[str, tuple[dict[str, str], Callable[[Row | None, str, Row], Row | None]]] = {
    "deduplicate": ({}, dedup),
    "deduplicate-sequence-field": ({"sequence.field": "ts"}, dedup_seq),
    "partial-update": (
        {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"},
        partial_update,
    ),
    "aggregation": (
        {
            "merge-engine": "aggregation",
            "fields.n.aggregate-function": "sum",
            "aggregation.remove-record-on-delete": "true",
        },
        aggregation,
    ),
    "first-row": ({"merge-engine": "first-row", "ignore-delete": "true"}, first_row),
}


def expected_changelog(
    engine: str, commits: list[Commit], same: Callable[[Row, Row], bool] | None = None
) -> list[list[tuple[str, int, Row]]]:
    """Per commit: the changelog Java's lookup wrapper writes, in key order."""
    step = ENGINES[engine][1]
    state: dict[int, Row] = {}
    out = []
    for commit in commits:
        before = dict(state)
        for kind, key, row in commit:
            after = step(state.get(key), kind, row)
            if after is None:
                state.pop(key, None)
            else:
                state[key] = after
        changes: list[tuple[str, int, Row]] = []
        for key in sorted({k for _, k, _ in commit}):
            old, new = before.get(key), state.get(key)
            if engine == "first-row":
                if old is None and new is not None:
                    changes.append(("+I", key, new))
            elif old is None and new is not None:
                changes.append(("+I", key, new))
            elif old is not None and new is None:
                changes.append(("-D", key, old))
            elif old is not None and new is not None and not (same and same(old, new)):
                changes += [("-U", key, old), ("+U", key, new)]
        out.append(changes)
    return out


def final_state(engine: str, commits: list[Commit]) -> list[tuple[Any, ...]]:
    step = ENGINES[engine][1]
    state: dict[int, Row] = {}
    for commit in commits:
        for kind, key, row in commit:
            after = step(state.get(key), kind, row)
            if after is None:
                state.pop(key, None)
            else:
                state[key] = after
    return sorted((k, *r) for k, r in state.items())


# --- the table side ---------------------------------------------------------------------------


def create(
    catalog: FileSystemCatalog, options: dict[str, str], partitioned: bool = False
) -> FileStoreTable:
    schema = SCHEMA.append(pa.field("p", pa.int64())) if partitioned else SCHEMA
    s = Schema.from_pyarrow_schema(
        schema,
        primary_keys=["id"],
        partition_keys=["p"] if partitioned else [],
        options={"bucket": "1", "changelog-producer": "lookup", **options},
    )
    catalog.create_table("db.t", s)
    return catalog.get_table("db.t")


def write(table: FileStoreTable, commit: Commit, p: Callable[[int], int] | None = None) -> None:
    rows = [{"id": k, "v": r[0], "n": r[1], "ts": r[2]} for _, k, r in commit]
    if p is not None:
        for row in rows:
            row["p"] = p(row["id"])
    kinds = [{"+I": 0, "-U": 1, "+U": 2, "-D": 3}[k] for k, _, _ in commit]
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, table.arrow_schema), row_kinds=kinds)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def changelog_since(
    table: FileStoreTable, after_id: int, until: int | None = None
) -> list[tuple[str, int, Row]]:
    """The changelog records of the snapshots after ``after_id`` (up to ``until``, default the
    latest), in snapshot, file and row order, read from each snapshot's changelog manifest
    list."""
    sm, store = table.snapshot_manager, table.store
    if until is None:
        until = latest_id(table)
    out: list[tuple[str, int, Row]] = []
    for sid in range(after_id + 1, until + 1):
        snapshot = sm.snapshot(sid)
        if snapshot.changelog_manifest_list is None:
            continue
        assert snapshot.commit_kind == "COMPACT"
        metas = store.manifest_io.read_manifest_list(snapshot.changelog_manifest_list)
        for e in store.manifest_io.read_entries(metas):
            assert e.file.file_name.startswith("changelog-")
            path = store.bucket_path_of(e.partition, e.bucket)
            rows = read_kv_records(store, path, [e.file]).to_pylist()
            out += [(KIND[r[VALUE_KIND]], r["id"], (r["v"], r["n"], r["ts"])) for r in rows]
    return out


def latest_id(table: FileStoreTable) -> int:
    latest = table.snapshot_manager.latest()
    return latest.id if latest is not None else 0


def rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted((r["id"], r["v"], r["n"], r["ts"]) for r in out)


def by_key(changes: list[tuple[str, int, Row]]) -> list[tuple[str, int, Row]]:
    """Changes in key order, each key's in the order written (several buckets or files)."""
    return sorted(changes, key=lambda c: c[1])


# --- tests --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dv", [False, True], ids=["merge", "deletion-vectors"])
@pytest.mark.parametrize("engine", list(ENGINES))
def test_each_commit_writes_the_lookup_changelog(
    catalog: FileSystemCatalog, engine: str, dv: bool
) -> None:
    """Five commits of inserts, updates (partial ones, a losing sequence.field) and deletes
    (of present and absent keys): each commit's COMPACT snapshot holds exactly the changes of
    the wrapper, and a batch read is the merged table (aggregation sums each value once:
    reads merge only the newest record above level 0, LookupMergeFunction)."""
    if dv and engine == "first-row":
        pytest.skip("Java refuses deletion vectors with first-row")
    options = dict(ENGINES[engine][0])
    if dv:
        options["deletion-vectors.enabled"] = "true"
    table = create(catalog, options)
    expected = expected_changelog(engine, COMMITS)
    for i, commit in enumerate(COMMITS):
        start = latest_id(table)
        write(table, commit)
        assert changelog_since(table, start) == expected[i], f"commit {i + 1}"
        assert rows(table) == final_state(engine, COMMITS[: i + 1]), f"commit {i + 1}"


@pytest.mark.parametrize("ignore", [None, "ts"])
def test_row_deduplicate_drops_updates_to_equal_values(
    catalog: FileSystemCatalog, ignore: str | None
) -> None:
    """``changelog-producer.row-deduplicate``: an update to the same values writes no -U/+U;
    with ``-ignore-fields`` = ts, values that differ only in ts count as equal too."""
    options = {"changelog-producer.row-deduplicate": "true"}
    if ignore:
        options["changelog-producer.row-deduplicate-ignore-fields"] = ignore
    table = create(catalog, options)
    commits: list[Commit] = [
        [("+I", 1, ("a", 1, 1)), ("+I", 2, ("b", 2, 1)), ("+I", 3, ("c", None, 1))],
        [("+U", 1, ("a", 1, 1)), ("+U", 2, ("b", 2, 9)), ("+U", 3, ("c", 3, 1))],
    ]

    def same(old: Row, new: Row) -> bool:
        return old == new if ignore is None else old[:2] == new[:2]

    expected = expected_changelog("deduplicate", commits, same)
    got = []
    for commit in commits:
        start = latest_id(table)
        write(table, commit)
        got.append(changelog_since(table, start))
    assert got == expected
    assert [k for _, k, _ in got[1]] == ([2, 2, 3, 3] if ignore is None else [3, 3])


@pytest.mark.parametrize("engine", ["deduplicate", "partial-update"])
def test_a_level0_file_moved_up_still_writes_its_changelog(
    catalog: FileSystemCatalog, engine: str
) -> None:
    """Files bigger than the compaction file size are moved, not rewritten, where Java's
    upgradeStrategy moves them (deduplicate without sequence.field: CHANGELOG_NO_REWRITE, the
    changelog from a lookup) and rewritten where it does not (partial-update:
    CHANGELOG_WITH_REWRITE; into the top level every engine moves them); the changelog is the
    same either way."""
    options = {**ENGINES[engine][0], "target-file-size": "1 b"}
    table = create(catalog, options)
    expected = expected_changelog(engine, COMMITS)
    moved = 0
    for i, commit in enumerate(COMMITS):
        start = latest_id(table)
        write(table, commit)
        assert changelog_since(table, start) == expected[i], f"commit {i + 1}"
        snapshot = table.snapshot_manager.latest()
        assert snapshot is not None
        delta = table.store.manifest_io.read_entries(
            table.store.manifest_io.read_manifest_list(snapshot.delta_manifest_list)
        )
        added = {e.file.file_name for e in delta if e.kind == 0 and 0 < e.file.level < 5}
        deleted = {e.file.file_name for e in delta if e.kind == 1 and e.file.level == 0}
        moved += len(added & deleted)
    assert rows(table) == final_state(engine, COMMITS)
    assert (moved > 0) == (engine == "deduplicate")


@pytest.mark.parametrize("mode", ["fixed-2", "dynamic", "cross-partition", "postpone"])
def test_every_bucket_mode_writes_the_lookup_changelog(
    catalog: FileSystemCatalog, mode: str
) -> None:
    """Fixed (two buckets), dynamic and cross-partition buckets compact at each commit; a
    postpone table's changelog comes with the compaction that moves its files into real
    buckets. A key that changes partition (cross-partition) is a -D of its old row in the old
    partition and a +I in the new one."""
    options = {
        "fixed-2": {"bucket": "2"},
        "dynamic": {"bucket": "-1"},
        "cross-partition": {"bucket": "-1"},
        "postpone": {"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"},
    }[mode]
    table = create(catalog, options, partitioned=mode == "cross-partition")
    commits = COMMITS[:3]
    expected = expected_changelog("deduplicate", commits)
    part = None
    if mode == "cross-partition":
        commits = [*COMMITS[:2], [("+U", 1, ("m1", 1, 60))]]
        expected = expected_changelog("deduplicate", commits)[:2]
        # key 1 moves from partition 1 to partition 0 in the last commit
        expected.append([("-D", 1, ("a1", 1, 10)), ("+I", 1, ("m1", 1, 60))])
    for i, commit in enumerate(commits):
        start = latest_id(table)
        if mode == "cross-partition":
            part = (lambda k: k % 2) if i < 2 else (lambda k: 0)
        write(table, commit, part)
        if mode == "postpone":
            procedures.compact(catalog, "db.t")
        assert by_key(changelog_since(table, start)) == by_key(expected[i]), f"commit {i + 1}"


@pytest.mark.parametrize("producer", ["lookup", "full-compaction"])
def test_streaming_read_overwrite_is_refused_with_lookup(
    catalog: FileSystemCatalog, producer: str
) -> None:
    """Java's SchemaValidation: a stream would read the changes of an overwrite twice."""
    schema = Schema.from_pyarrow_schema(
        SCHEMA,
        primary_keys=["id"],
        options={"changelog-producer": producer, "streaming-read-overwrite": "true"},
    )
    with pytest.raises(OptionError, match="streaming-read-overwrite"):
        catalog.create_table("db.t", schema)


def test_write_only_commits_get_their_changelog_from_the_compact_procedure(
    catalog: FileSystemCatalog,
) -> None:
    """``write-only`` writers leave level-0 files and no changelog; ``CALL sys.compact`` then
    writes the changelog of all of them at once: nothing lies above, so each live key is +I."""
    table = create(catalog, {"write-only": "true"})
    for commit in COMMITS[:2]:
        write(table, commit)
    assert changelog_since(table, 0) == []
    start = latest_id(table)
    procedures.compact(catalog, "db.t")
    both = COMMITS[0] + COMMITS[1]
    assert changelog_since(table, start) == expected_changelog("deduplicate", [both])[0]
    assert rows(table) == final_state("deduplicate", COMMITS[:2])
