"""Incremental reads (``incremental-between``, ``incremental-between-timestamp``) return the rows
that the commits in between added, computed here from what each commit wrote.

The model: every commit's rows and kind are recorded as they are written. A delta read of
(s1, s2] is the rows of the APPEND commits in that range (a primary-key commit counts each key
once, its last row, and its deletes add nothing); COMPACT and OVERWRITE commits add nothing.
A diff (two tags, or scan mode ``diff``) of a primary-key table is the rows of the end state
that the start state lacks or holds with other values.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, SnapshotExpiredError, UnsupportedOptionError
from paimon_pyspark.procedures import compact

SCHEMA = pa.schema(
    [
        pa.field("p", pa.int32(), nullable=False),
        pa.field("id", pa.int64(), nullable=False),
        ("v", pa.string()),
    ]
)
Row = tuple[int, int, str]


@dataclass
class Model:
    """What each snapshot's commit wrote, and the table's state after it."""

    kinds: dict[int, str] = field(default_factory=dict)
    added: dict[int, list[Row]] = field(default_factory=dict)
    states: dict[int, dict[Any, Row]] = field(default_factory=dict)

    def record(
        self, table: FileStoreTable, kind: str, rows: list[Row], state: Mapping[Any, Row]
    ) -> None:
        sid = table.snapshot_manager.latest_id()
        assert sid is not None and sid not in self.kinds
        assert table.snapshot_manager.snapshot(sid).commit_kind == kind
        self.kinds[sid], self.added[sid], self.states[sid] = kind, rows, dict(state)

    def delta(self, start: int, end: int) -> list[dict[str, object]]:
        rows = [
            r for s in range(start + 1, end + 1) if self.kinds[s] == "APPEND" for r in self.added[s]
        ]
        return as_dicts(rows)

    def diff(self, start: int, end: int) -> list[dict[str, object]]:
        before, after = self.states[start], self.states[end]
        return as_dicts([r for k, r in after.items() if before.get(k) != r])


def as_dicts(rows: list[Row]) -> list[dict[str, object]]:
    return sort_rows(
        pa.table({"p": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]})
    )


class History:
    """Writes commits to ``table`` and records them in ``model``."""

    def __init__(self, catalog: FileSystemCatalog, name: str, primary_key: bool) -> None:
        options = {"write-only": "true"}
        if primary_key:
            options["bucket"] = "2"
        catalog.create_table(
            f"db.{name}",
            Schema.from_pyarrow_schema(
                SCHEMA,
                partition_keys=["p"],
                primary_keys=["p", "id"] if primary_key else [],
                options=options,
            ),
        )
        self.catalog, self.name = catalog, f"db.{name}"
        self.table = catalog.get_table(self.name)
        self.primary_key = primary_key
        self.model = Model()
        self.state: dict[tuple[int, int], Row] = {}
        self.rows: list[Row] = []  # an append table's state

    def _commit(self, rows: list[Row], overwrite: bool = False, delete: bool = False) -> None:
        data = pa.table(
            {"p": [r[0] for r in rows], "id": [r[1] for r in rows], "v": [r[2] for r in rows]},
            schema=SCHEMA,
        )
        builder = self.table.new_batch_write_builder()
        if overwrite:
            builder = builder.overwrite()
        with builder.new_write() as w:
            if delete:
                w.delete_arrow(data)
            else:
                w.write_arrow(data)
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)
        time.sleep(0.005)

    def write(self, rows: list[Row]) -> None:
        self._commit(rows)
        if self.primary_key:
            last = {(r[0], r[1]): r for r in rows}  # one commit keeps a key's last row
            self.state.update(last)
            self.model.record(self.table, "APPEND", list(last.values()), self.state)
        else:
            self.rows += rows
            self.model.record(self.table, "APPEND", rows, {i: r for i, r in enumerate(self.rows)})

    def delete(self, rows: list[Row]) -> None:
        self._commit(rows, delete=True)
        for r in rows:
            self.state.pop((r[0], r[1]))
        self.model.record(self.table, "APPEND", [], self.state)

    def overwrite(self, rows: list[Row]) -> None:
        """Replaces the partitions ``rows`` write (dynamic partition overwrite)."""
        self._commit(rows, overwrite=True)
        parts = {r[0] for r in rows}
        if self.primary_key:
            self.state = {k: r for k, r in self.state.items() if k[0] not in parts}
            self.state.update({(r[0], r[1]): r for r in rows})
            state = self.state
        else:
            self.rows = [r for r in self.rows if r[0] not in parts] + rows
            state = {i: r for i, r in enumerate(self.rows)}
        self.model.record(self.table, "OVERWRITE", rows, state)

    def compact(self) -> None:
        assert compact(self.catalog, self.name, options={"compaction.min.file-num": "2"})
        state = self.state if self.primary_key else {i: r for i, r in enumerate(self.rows)}
        self.model.record(self.table, "COMPACT", [], state)


def build(catalog: FileSystemCatalog, primary_key: bool) -> History:
    """1-3 APPEND (3 deletes on a PK table), 4 COMPACT, 5 APPEND, 6 OVERWRITE, 7-8 APPEND."""
    h = History(catalog, "pk" if primary_key else "log", primary_key)
    h.write([(1, 1, "a1"), (1, 2, "a2"), (2, 3, "a3"), (2, 4, "a4")])
    h.write([(1, 2, "b2"), (2, 5, "b5"), (1, 6, "b6"), (1, 6, "b6'")])
    if primary_key:
        h.delete([(1, 1, "a1")])
    else:
        h.write([(2, 7, "c7")])
    h.compact()
    h.write([(1, 8, "d8"), (2, 3, "d3")])
    h.overwrite([(2, 9, "e9"), (2, 10, "e10")])
    h.write([(1, 11, "f11"), (2, 9, "f9")])
    h.write([(2, 12, "g12")])
    for sid in (1, 2, 3, 5, 7, 8):
        h.table.create_tag(f"s{sid}", sid)
    return h


def incremental(table: FileStoreTable, **options: str) -> list[dict[str, object]]:
    return sort_rows(read_all(table.copy({k.replace("_", "-"): v for k, v in options.items()})))


PAIRS = [(0, 1), (1, 2), (1, 3), (2, 5), (3, 5), (3, 8), (4, 6), (5, 7), (0, 8), (6, 8)]


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_between_ids_reads_what_the_append_commits_added(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    h = build(catalog, primary_key)
    for start, end in PAIRS:
        expected = h.model.delta(start, end)
        assert incremental(h.table, incremental_between=f"{start},{end}") == expected
        got = incremental(
            h.table, incremental_between=f"{start},{end}", incremental_between_scan_mode="delta"
        )
        assert got == expected
    assert incremental(h.table, incremental_between="4,4") == []
    assert h.model.delta(3, 5) == incremental(h.table, incremental_between="3,5") != []


def test_between_tags_of_a_pk_table_is_the_state_diff(catalog: FileSystemCatalog) -> None:
    h = build(catalog, primary_key=True)
    for start, end in [(1, 2), (1, 3), (2, 5), (3, 5), (1, 8), (5, 8), (7, 8)]:
        expected = h.model.diff(start, end)
        assert incremental(h.table, incremental_between=f"s{start},s{end}") == expected
        ids = f"{start},{end}"
        diff = incremental(h.table, incremental_between=ids, incremental_between_scan_mode="diff")
        assert diff == expected
    # a key rewritten (1,2) and one deleted (1,1) between the tags: the rewrite only
    assert h.model.diff(1, 3) == as_dicts([(1, 2, "b2"), (2, 5, "b5"), (1, 6, "b6'")])


def test_between_tags_of_an_append_table_reads_the_new_files(catalog: FileSystemCatalog) -> None:
    h = build(catalog, primary_key=False)
    # no compaction in between: the new files hold exactly the rows added
    assert incremental(h.table, incremental_between="s1,s3") == h.model.delta(1, 3)
    assert incremental(h.table, incremental_between="s7,s8") == h.model.delta(7, 8)
    # Java compares files: a compaction in between makes its rewritten rows new files too
    across = incremental(h.table, incremental_between="s3,s5")
    compacted = as_dicts([r for s in (1, 2, 3, 5) for r in h.model.added[s]])
    assert across == compacted
    # tag-to-snapshot reads the deltas between the tags' snapshots instead
    deltas = incremental(
        h.table, incremental_between="s3,s5", incremental_between_tag_to_snapshot="true"
    )
    assert deltas == h.model.delta(3, 5)


@pytest.mark.parametrize("primary_key", [False, True], ids=["append", "pk"])
def test_between_timestamps_reads_the_snapshots_committed_in_between(
    catalog: FileSystemCatalog, primary_key: bool
) -> None:
    h = build(catalog, primary_key)
    sm = h.table.snapshot_manager
    at = {i: sm.snapshot(i).time_millis for i in sm.list_ids()}
    assert len(set(at.values())) == len(at)
    cases = [
        ((at[1], at[3]), (1, 3)),
        ((at[2] + 1, at[5]), (2, 5)),
        ((at[1] - 10_000, at[2]), (0, 2)),  # before the earliest: from the first snapshot
        ((at[5], at[8] + 10_000), (5, 8)),
    ]
    for (start, end), (first, last) in cases:
        got = incremental(h.table, incremental_between_timestamp=f"{start},{end}")
        assert got == h.model.delta(first, last)
    local = [
        datetime.datetime.fromtimestamp(at[i] / 1000).isoformat(sep=" ", timespec="milliseconds")
        for i in (2, 7)
    ]
    assert incremental(h.table, incremental_between_timestamp=",".join(local)) == h.model.delta(
        2, 7
    )
    # outside the snapshots' times, or equal bounds: nothing
    assert incremental(h.table, incremental_between_timestamp=f"{at[8] + 1},{at[8] + 9}") == []
    assert incremental(h.table, incremental_between_timestamp=f"{at[1] - 9},{at[1] - 1}") == []
    assert incremental(h.table, incremental_between_timestamp=f"{at[3]},{at[3]}") == []
    if primary_key:
        diff = incremental(
            h.table,
            incremental_between_timestamp=f"{at[1]},{at[5]}",
            incremental_between_scan_mode="diff",
        )
        assert diff == h.model.diff(1, 5)


def test_projection_and_filter_apply_to_the_added_rows(catalog: FileSystemCatalog) -> None:
    h = build(catalog, primary_key=True)
    table = h.table.copy({"incremental-between": "1,5"})
    rb = table.new_read_builder()
    rb = rb.with_filter(rb.new_predicate_builder().equal("p", 1)).with_projection(["id"])
    got = sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits()).column("id").to_pylist())
    assert got == sorted(r["id"] for r in h.model.delta(1, 5) if r["p"] == 1)


def test_bad_bounds_are_refused_naming_the_table_option_and_value(
    catalog: FileSystemCatalog,
) -> None:
    h = build(catalog, primary_key=False)
    table = h.table
    refused = {
        "3,1": "end snapshot 1 must not be earlier",
        "1,99": r"out of the available snapshot range \[1, 8\]",
        "a,b": "neither two tags nor two snapshot ids",
        "s1,3": "neither two tags nor two snapshot ids",
        "1": "must give a start",
        "1,2,3": "must give a start",
        "s5,s1": "end tag 's1'",
    }
    for value, message in refused.items():
        with pytest.raises(OptionError, match=message) as info:
            incremental(table, incremental_between=value)
        assert "db.log" in str(info.value) and value in str(info.value)
    with pytest.raises(OptionError, match="end timestamp 1 must not be earlier"):
        incremental(table, incremental_between_timestamp="5,1")
    with pytest.raises(OptionError, match="two epoch milliseconds or two local times"):
        incremental(table, incremental_between_timestamp="yesterday,today")
    # changelog mode reads changelog files, which a table without a producer has none of
    mode = {"incremental_between_scan_mode": "changelog"}
    assert incremental(table, incremental_between="1,3", **mode) == []
    with pytest.raises(OptionError, match="one of auto, delta, changelog, diff"):
        incremental(table, incremental_between="1,3", incremental_between_scan_mode="all")
    with pytest.raises(UnsupportedOptionError, match="incremental-to-auto-tag"):
        table.copy({"incremental-to-auto-tag": "2026-11-26"})


def test_expired_start_is_refused_and_earliest_minus_one_is_allowed(
    catalog: FileSystemCatalog,
) -> None:
    catalog.create_table(
        "db.short",
        Schema.from_pyarrow_schema(
            SCHEMA, options={"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2"}
        ),
    )
    table = catalog.get_table("db.short")
    for i in range(4):
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(pa.table({"p": [1], "id": [i], "v": [f"x{i}"]}, schema=SCHEMA))
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)
    assert table.snapshot_manager.earliest_id() == 3
    assert [r["id"] for r in incremental(table, incremental_between="2,4")] == [2, 3]
    with pytest.raises(SnapshotExpiredError, match="'incremental-between' = '1,4'"):
        incremental(table, incremental_between="1,4")
    with pytest.raises(SnapshotExpiredError, match="snapshot 1 does not exist"):
        incremental(table, incremental_between="1,4", incremental_between_scan_mode="diff")


def test_one_choice_of_what_to_read(catalog: FileSystemCatalog) -> None:
    h = build(catalog, primary_key=False)
    table = h.table
    with pytest.raises(OptionError, match=r"\[incremental-between\] must be null when you set"):
        table.copy({"incremental-between": "1,3", "scan.snapshot-id": "2"})
    with pytest.raises(OptionError, match="must set only one key in"):
        table.copy({"incremental-between": "1,3", "incremental-between-timestamp": "1,3"})
    with pytest.raises(OptionError, match=r"\[incremental-between\] must be null when you set"):
        table.copy({"incremental-between": "1,3", "scan.timestamp-millis": "1"})
    # a later copy's choice replaces an earlier one: an internal pin reads the snapshot whole
    pinned = table.copy({"incremental-between": "1,3"}).copy({"scan.snapshot-id": "2"})
    assert sort_rows(read_all(pinned)) == as_dicts(h.model.added[1] + h.model.added[2])
    later = table.copy({"scan.snapshot-id": "2"}).copy({"incremental-between": "2,3"})
    assert sort_rows(read_all(later)) == h.model.delta(2, 3)
