"""Insert overwrite through the Python API: dynamic, static, empty static and whole-table
overwrites of append (bucket-unaware and fixed-bucket) and primary-key tables, and overwrites
racing other writers.

Every scenario runs against a plain-Python model of the table (partition -> rows, last write per
key for primary-key tables) and compares what a read returns with it.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
import pytest
from table_helpers import read_all, sort_rows

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.file_store_commit import FileStoreCommit
from paimon_pyspark.errors import CommitConflictError, CommitError, PartitionSpecError
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("dt", pa.string()), ("hr", pa.int32())])
Row = dict[str, Any]

KINDS = {
    "unaware": {},
    "fixed": {"bucket": "2", "bucket-key": "id"},
    "pk": {"bucket": "2"},
}


def make_table(
    catalog: FileSystemCatalog,
    kind: str,
    partition_keys: tuple[str, ...] = ("dt", "hr"),
    **options: str,
) -> FileStoreTable:
    pk = ["id", *partition_keys] if kind == "pk" else []
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=list(partition_keys),
            primary_keys=pk,
            options={**KINDS[kind], **options},
        ),
    )
    return catalog.get_table("db.t")


class Model:
    """The rows a table must hold: partition -> {key: row} (append tables key by position)."""

    def __init__(self, partition_keys: tuple[str, ...], primary_key: bool) -> None:
        self.partition_keys = partition_keys
        self.primary_key = primary_key
        self.parts: dict[tuple[Any, ...], dict[Any, Row]] = {}
        self._n = 0

    def _part(self, row: Row) -> tuple[Any, ...]:
        return tuple(row[k] for k in self.partition_keys)

    def append(self, rows: list[Row]) -> None:
        for r in rows:
            self._n += 1
            key = r["id"] if self.primary_key else self._n
            self.parts.setdefault(self._part(r), {})[key] = r

    def overwrite(self, rows: list[Row], static: Mapping[str, Any] | None, dynamic: bool) -> None:
        if static:
            doomed = [p for p in self.parts if self._matches(p, static)]
        elif dynamic and self.partition_keys:
            doomed = list({self._part(r) for r in rows})
        else:
            doomed = list(self.parts)
        for p in doomed:
            self.parts.pop(p, None)
        self.append(rows)

    def _matches(self, part: tuple[Any, ...], static: Mapping[str, Any]) -> bool:
        return all(part[self.partition_keys.index(k)] == v for k, v in static.items())

    def rows(self) -> list[Row]:
        return sort_rows(pa.Table.from_pylist([r for p in self.parts.values() for r in p.values()]))


def rows_of(ids: range, v: int, dt_: str, hr: int) -> list[Row]:
    return [{"id": i, "v": v, "dt": dt_, "hr": hr} for i in ids]


def write(table: FileStoreTable, rows: list[Row], overwrite: Any = None) -> list[int]:
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder.overwrite(overwrite or None)
    with builder.new_write() as w:
        if rows:
            w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
        messages = w.prepare_commit()
    return builder.new_commit().commit(messages)


def table_rows(table: FileStoreTable) -> list[Row]:
    return sort_rows(read_all(table))


def seed(table: FileStoreTable, model: Model) -> None:
    for rows in (
        rows_of(range(0, 6), 1, "a", 1) + rows_of(range(6, 9), 1, "a", 2),
        rows_of(range(10, 14), 1, "b", 1),
        rows_of(range(3, 5), 2, "a", 1) + rows_of(range(20, 22), 2, "c", 7),
    ):
        write(table, rows)
        model.append(rows)


def delta_kinds(table: FileStoreTable, snapshot_id: int) -> list[int]:
    snap = table.snapshot_manager.snapshot(snapshot_id)
    io = table.manifest_io
    return [e.kind for e in io.read_entries(io.read_manifest_list(snap.delta_manifest_list))]


@pytest.mark.parametrize("kind", list(KINDS))
def test_dynamic_overwrite_replaces_only_the_partitions_written(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind)
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)
    new = rows_of(range(100, 103), 9, "a", 1) + rows_of(range(200, 201), 9, "d", 3)
    ids = write(table, new, overwrite={})
    model.overwrite(new, None, dynamic=True)

    assert len(ids) == 1
    snap = table.snapshot_manager.snapshot(ids[0])
    assert snap.commit_kind == "OVERWRITE"
    assert table_rows(table) == model.rows()
    kinds = delta_kinds(table, ids[0])
    assert kinds.count(mf.KIND_ADD) >= 2  # a/1 and d/3
    assert kinds.count(mf.KIND_DELETE) >= 2  # the two commits that wrote a/1
    assert snap.total_record_count == len(model.rows())


@pytest.mark.parametrize("kind", list(KINDS))
def test_static_overwrite_replaces_the_spec_even_with_rows_elsewhere_in_it(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind)
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)

    # partial spec: every hr of dt=a goes, the new rows land in a/5 only
    new = rows_of(range(50, 53), 5, "a", 5)
    write(table, new, overwrite={"dt": "a"})
    model.overwrite(new, {"dt": "a"}, dynamic=True)
    assert table_rows(table) == model.rows()

    # full spec with typed values given as text
    new = rows_of(range(60, 62), 6, "b", 1)
    write(table, new, overwrite={"dt": "b", "hr": "1"})
    model.overwrite(new, {"dt": "b", "hr": 1}, dynamic=True)
    assert table_rows(table) == model.rows()


@pytest.mark.parametrize("kind", list(KINDS))
def test_static_overwrite_with_no_data_empties_the_partition(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind)
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)
    before = table.snapshot_manager.latest_id()

    ids = write(table, [], overwrite={"dt": "c", "hr": 7})
    model.overwrite([], {"dt": "c", "hr": 7}, dynamic=True)

    assert ids == [before + 1]  # type: ignore[operator]
    assert table.snapshot_manager.snapshot(ids[0]).commit_kind == "OVERWRITE"
    assert table_rows(table) == model.rows()
    assert not any(r["dt"] == "c" for r in table_rows(table))


def test_dynamic_overwrite_with_no_data_commits_nothing(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "unaware")
    model = Model(("dt", "hr"), False)
    seed(table, model)
    before = table.snapshot_manager.latest_id()
    assert write(table, [], overwrite={}) == []
    assert table.snapshot_manager.latest_id() == before
    assert table_rows(table) == model.rows()


@pytest.mark.parametrize("kind", list(KINDS))
def test_whole_table_overwrite_without_dynamic_partition_overwrite(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind, **{"dynamic-partition-overwrite": "false"})
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)
    new = rows_of(range(300, 304), 3, "z", 0)
    write(table, new, overwrite={})
    model.overwrite(new, None, dynamic=False)
    assert table_rows(table) == model.rows() == sort_rows(pa.Table.from_pylist(new))


@pytest.mark.parametrize("kind", list(KINDS))
def test_unpartitioned_overwrite_replaces_the_whole_table(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind, partition_keys=())
    model = Model((), kind == "pk")
    seed(table, model)
    new = rows_of(range(3, 7), 4, "x", 1)
    write(table, new, overwrite={})
    model.overwrite(new, None, dynamic=True)
    assert table_rows(table) == model.rows()
    # then a plain append on top, continuing normally
    more = rows_of(range(5, 9), 5, "y", 2)
    write(table, more)
    model.append(more)
    assert table_rows(table) == model.rows()


def test_static_overwrite_refuses_data_outside_its_partition(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "unaware")
    model = Model(("dt", "hr"), False)
    seed(table, model)
    before = table.snapshot_manager.latest_id()
    with pytest.raises(CommitError, match=r"trying to overwrite partition dt='a'.*dt='b'"):
        write(table, rows_of(range(2), 1, "b", 1), overwrite={"dt": "a"})
    assert table.snapshot_manager.latest_id() == before
    assert table_rows(table) == model.rows()


def test_overwritten_fixed_buckets_restart_sequence_numbers(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "fixed")
    model = Model(("dt", "hr"), False)
    seed(table, model)
    write(table, rows_of(range(0, 4), 7, "a", 1), overwrite={})
    latest = table.snapshot_manager.latest()
    assert latest is not None
    files = [
        e.file
        for e in table.manifest_io.live_entries(latest)
        if table.partition_rel_path(["a", 1]) == _rel(table, e.partition)
    ]
    assert files and min(f.min_sequence_number for f in files) == 0


def _rel(table: FileStoreTable, partition: bytes) -> str:
    return table.partition_rel_path(deserialize_with_arity(partition, table.partition_types))


# --- primary-key tables: overwrite-upgrade -------------------------------------------------


def _levels(table: FileStoreTable) -> list[int]:
    latest = table.snapshot_manager.latest()
    assert latest is not None
    return sorted({e.file.level for e in table.manifest_io.live_entries(latest)})


def test_pk_overwrite_upgrades_non_overlapping_files_to_the_top_level(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "pk", partition_keys=())
    model = Model((), True)
    seed(table, model)
    assert _levels(table) == [0]
    new = rows_of(range(0, 40), 8, "a", 1)
    write(table, new, overwrite={})
    model.overwrite(new, None, dynamic=True)
    assert _levels(table) == [5]  # num-levels 6 (compaction trigger 5 + 1) - 1
    assert table_rows(table) == model.rows()
    # upserts on top merge with the upgraded files
    more = rows_of(range(30, 45), 9, "b", 2)
    write(table, more)
    model.append(more)
    assert table_rows(table) == model.rows()


def test_pk_overwrite_keeps_level_0_when_upgrade_is_off_or_runs_overlap(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "pk", partition_keys=(), **{"overwrite-upgrade": "false"})
    write(table, rows_of(range(0, 10), 1, "a", 1), overwrite={})
    assert _levels(table) == [0]

    other = catalog.get_table("db.t").copy({"overwrite-upgrade": "true", "num-levels": "3"})
    builder = other.new_batch_write_builder().overwrite()
    with builder.new_write() as w:  # two writers' runs over the same keys overlap
        w.write_arrow(pa.Table.from_pylist(rows_of(range(0, 10), 2, "a", 1), schema=SCHEMA))
        first = w.prepare_commit()
    with other.new_batch_write_builder().new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows_of(range(5, 15), 3, "a", 1), schema=SCHEMA))
        second = w.prepare_commit()
    builder.new_commit().commit(first + second)
    assert 0 in _levels(table)

    builder = other.new_batch_write_builder().overwrite()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows_of(range(0, 10), 4, "a", 1), schema=SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    assert _levels(table) == [2]


# --- static partition specs: typed values ------------------------------------------------


TYPED = pa.schema(
    [
        ("id", pa.int64()),
        ("d", pa.date32()),
        ("n", pa.int16()),
        ("s", pa.string()),
        ("dec", pa.decimal128(5, 2)),
        ("ts", pa.timestamp("us")),
    ]
)


def _typed_table(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table(
        "db.typed",
        Schema.from_pyarrow_schema(TYPED, partition_keys=["d", "n", "s", "dec", "ts"]),
    )
    return catalog.get_table("db.typed")


@pytest.mark.parametrize(
    ("spec", "key", "shown"),
    [
        ({"n": "ten"}, "n", "'ten'"),
        ({"n": 40000}, "n", "40000"),
        ({"n": True}, "n", "True"),
        ({"d": "2026-13-01"}, "d", "'2026-13-01'"),
        ({"d": 20260626}, "d", "20260626"),
        ({"s": 5}, "s", "5"),
        ({"dec": "1234.5"}, "dec", "'1234.5'"),
        ({"ts": "yesterday"}, "ts", "'yesterday'"),
    ],
)
def test_static_partition_value_of_the_wrong_type_names_key_and_value(
    catalog: FileSystemCatalog, spec: dict[str, Any], key: str, shown: str
) -> None:
    table = _typed_table(catalog)
    with pytest.raises(PartitionSpecError) as info:
        table.new_batch_write_builder().overwrite(spec)
    message = str(info.value)
    assert f"key '{key}'" in message and shown in message and "db.typed" in message


def test_static_partition_key_that_is_not_a_partition_key_is_refused(
    catalog: FileSystemCatalog,
) -> None:
    table = _typed_table(catalog)
    with pytest.raises(PartitionSpecError, match=r"'id' \(value 3\) is not a partition key"):
        table.new_batch_write_builder().overwrite({"id": 3})


def test_static_partition_values_as_python_values_or_text_replace_the_same_partition(
    catalog: FileSystemCatalog,
) -> None:
    table = _typed_table(catalog)
    row = {
        "id": 1,
        "d": dt.date(2026, 6, 26),
        "n": 10,
        "s": "x",
        "dec": decimal.Decimal("1.50"),
        "ts": dt.datetime(2026, 6, 26, 10, 0),
    }
    other = {**row, "id": 2, "n": 11}
    specs: list[dict[str, Any]] = [
        {k: row[k] for k in ("d", "n", "s", "dec", "ts")},
        {"d": "2026-06-26", "n": "10", "s": "x", "dec": "1.5", "ts": "2026-06-26 10:00:00"},
        {"d": "2026-06-26", "n": 10, "dec": 1.5, "ts": "2026-06-26T10:00"},
    ]
    for spec in specs:
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(pa.Table.from_pylist([row, other], schema=TYPED))
            builder.new_commit().commit(w.prepare_commit())
        builder = table.new_batch_write_builder().overwrite(spec)
        builder.new_commit().commit([])
        assert [r["id"] for r in read_all(table).to_pylist()] == [2] * (specs.index(spec) + 1)


def test_static_partition_null_value_replaces_the_default_partition(
    catalog: FileSystemCatalog,
) -> None:
    table = make_table(catalog, "unaware")
    write(table, [*rows_of(range(3), 1, "a", 1), {"id": 9, "v": 1, "dt": None, "hr": 1}])
    write(table, [], overwrite={"dt": "__DEFAULT_PARTITION__"})
    assert sorted(r["id"] for r in table_rows(table)) == [0, 1, 2]
    write(table, [{"id": 8, "v": 1, "dt": None, "hr": 2}])
    write(table, [], overwrite={"dt": None, "hr": 2})
    assert sorted(r["id"] for r in table_rows(table)) == [0, 1, 2]


# --- concurrent writers -------------------------------------------------------------------


def _prepare(table: FileStoreTable, rows: list[Row], overwrite: Any = None) -> Any:
    builder = table.new_batch_write_builder()
    if overwrite is not None:
        builder.overwrite(overwrite or None)
    w = builder.new_write()
    w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
    messages = w.prepare_commit()
    w.close()
    return builder, messages


@pytest.mark.parametrize("kind", list(KINDS))
def test_overwrite_of_a_keeps_rows_another_writer_appended_to_b_meanwhile(
    catalog: FileSystemCatalog, kind: str
) -> None:
    table = make_table(catalog, kind)
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)
    new_a = rows_of(range(500, 504), 5, "a", 1)
    overwriter, ow_messages = _prepare(table, new_a, overwrite={})  # planned first
    new_b = rows_of(range(600, 603), 6, "b", 1)
    appender, ap_messages = _prepare(table, new_b)
    appender.new_commit().commit(ap_messages)  # commits first
    model.append(new_b)

    ids = overwriter.new_commit().commit(ow_messages)
    model.overwrite(new_a, None, dynamic=True)
    assert len(ids) == 1
    assert table_rows(table) == model.rows()
    assert {r["id"] for r in table_rows(table)} >= {600, 601, 602}


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("static", [False, True])
def test_overwrite_of_a_fails_when_another_writer_appended_to_a_meanwhile(
    catalog: FileSystemCatalog, kind: str, static: bool
) -> None:
    table = make_table(catalog, kind)
    model = Model(("dt", "hr"), kind == "pk")
    seed(table, model)
    new_a = rows_of(range(500, 504), 5, "a", 1)
    spec = {"dt": "a"} if static else {}
    overwriter, ow_messages = _prepare(table, new_a, overwrite=spec)
    concurrent = rows_of(range(700, 702), 7, "a", 2 if static else 1)
    appender, ap_messages = _prepare(table, concurrent)
    appended = appender.new_commit().commit(ap_messages)
    model.append(concurrent)

    with pytest.raises(CommitConflictError, match=rf"snapshot {appended[0]} \(APPEND"):
        overwriter.new_commit().commit(ow_messages)
    assert table.snapshot_manager.latest_id() == appended[0]
    assert table_rows(table) == model.rows()  # nothing lost, nothing half-committed


def test_appends_committed_before_the_overwrite_was_planned_are_replaced(
    catalog: FileSystemCatalog,
) -> None:
    """Java's rule: an overwrite replaces what its partitions hold when it is planned."""
    table = make_table(catalog, "unaware")
    model = Model(("dt", "hr"), False)
    seed(table, model)
    earlier = rows_of(range(700, 702), 7, "a", 1)
    write(table, earlier)
    model.append(earlier)
    new_a = rows_of(range(500, 504), 5, "a", 1)
    write(table, new_a, overwrite={})
    model.overwrite(new_a, None, dynamic=True)
    assert table_rows(table) == model.rows()


def _race_once(monkeypatch: pytest.MonkeyPatch, concurrent: Callable[[], object]) -> None:
    """Run ``concurrent`` between an attempt's read of LATEST and its publish, once."""
    real = FileStoreCommit._try_commit_once
    fired = []

    def racing(self: FileStoreCommit, *args: Any, **kwargs: Any) -> Any:
        if not fired:
            fired.append(1)
            concurrent()
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FileStoreCommit, "_try_commit_once", racing)


def test_overwrite_retry_recomputes_deletes_from_the_new_latest(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = make_table(catalog, "fixed")
    model = Model(("dt", "hr"), False)
    seed(table, model)
    new_a = rows_of(range(500, 504), 5, "a", 1)
    overwriter, ow_messages = _prepare(table, new_a, overwrite={})
    new_b = rows_of(range(600, 603), 6, "b", 1)
    appender, ap_messages = _prepare(table, new_b)
    _race_once(monkeypatch, lambda: appender.new_commit().commit(ap_messages))

    ids = overwriter.new_commit().commit(ow_messages)  # loses the id, retries on the new latest
    model.append(new_b)
    model.overwrite(new_a, None, dynamic=True)
    assert ids == [table.snapshot_manager.latest_id()]
    assert table_rows(table) == model.rows()


def test_overwrite_retry_fails_when_the_racing_commit_touched_its_partition(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = make_table(catalog, "pk")
    model = Model(("dt", "hr"), True)
    seed(table, model)
    new_a = rows_of(range(500, 504), 5, "a", 1)
    overwriter, ow_messages = _prepare(table, new_a, overwrite={})
    racing_rows = rows_of(range(0, 3), 6, "a", 1)
    appender, ap_messages = _prepare(table, racing_rows)
    _race_once(monkeypatch, lambda: appender.new_commit().commit(ap_messages))

    with pytest.raises(CommitConflictError, match="overwrite conflict"):
        overwriter.new_commit().commit(ow_messages)
    model.append(racing_rows)
    assert table_rows(table) == model.rows()


def test_overwrite_messages_must_not_delete_files(catalog: FileSystemCatalog) -> None:
    table = make_table(catalog, "unaware")
    write(table, rows_of(range(3), 1, "a", 1))
    latest = table.snapshot_manager.latest()
    assert latest is not None
    entry = table.manifest_io.live_entries(latest)[0]
    message = CommitMessage(
        entry.partition, entry.bucket, None, DataIncrement(deleted_files=(entry.file,))
    )
    with pytest.raises(CommitError, match="cannot also delete files"):
        table.new_batch_write_builder().overwrite().new_commit().commit([message])
