"""Automatic tags and tag expiry at every commit (maintenance/tag_automatic.py: Java's
TagAutoCreation, TagPeriodHandler, TagBatchCreation and TagTimeExpire), with an injected clock.

Each test drives commits with ``store.clock.ManualClock`` (no sleep) and checks which tags exist
and which snapshot each one holds, as Java names and places them. The crash test fails every
store call of the tag steps in turn and checks that the table still reads, that no file a
snapshot or tag uses is gone, and that the next run finishes the work.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from tests.cli.helpers import run_json
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError, OptionError
from paimon_pyspark.maintenance import tag_automatic
from paimon_pyspark.procedures import create_tag, expire_tags, trigger_tag_automatic_creation
from paimon_pyspark.store.clock import ManualClock, injected

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
START = dt.datetime(2024, 1, 1, 10, 0)


def _ms(local: dt.datetime) -> int:
    return int(local.timestamp() * 1000)


def make(catalog: FileSystemCatalog, options: dict[str, str], name: str = "t") -> FileStoreTable:
    catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, options=options))
    return catalog.get_table(f"db.{name}")


def commit(table: FileStoreTable, i: int) -> None:
    write_commit(table, pa.table({"id": [i], "v": [f"v{i}"]}, schema=SCHEMA))


def tags_of(table: FileStoreTable) -> dict[str, int]:
    return {n: s.id for n, s in table.store.tag_manager.tags().items()}


def test_daily_process_time_tags_keep_the_newest_and_carry_the_default_retention(
    catalog: FileSystemCatalog,
) -> None:
    """Each day's first snapshot tags the day before (Java's normalizeToPreviousTag); beyond
    tag.num-retained-max automatic tags the oldest go; a manual tag is no automatic one."""
    clock = ManualClock(_ms(START))
    table = make(
        catalog,
        {
            "tag.automatic-creation": "process-time",
            "tag.num-retained-max": "3",
            "tag.default-time-retained": "30 d",
        },
    )
    with injected(clock):
        for day in range(6):
            commit(table, day)
            if day == 1:
                commit(table, 100)  # a second snapshot on day 2 makes no tag
                create_tag(catalog, "db.t", "manual")
            clock.advance(days=1)
    assert tags_of(table) == {"2024-01-03": 5, "2024-01-04": 6, "2024-01-05": 7, "manual": 3}
    text = Path(table.store.tag_manager.tag_path("2024-01-05")).read_text()
    assert json.loads(text)["tagTimeRetained"] == 2592000.0
    assert json.loads(text)["tagCreateTime"][:3] == [2024, 1, 6]


def test_hourly_tags_with_delay_formatter_and_automatic_completion(
    catalog: FileSystemCatalog,
) -> None:
    """A tag waits for the period's end plus tag.creation-delay; with
    tag.automatic-completion the tag after a gap is the period after the last one."""
    base = {
        "tag.automatic-creation": "process-time",
        "tag.creation-period": "hourly",
        "tag.period-formatter": "without_dashes",
        "tag.creation-delay": "10 min",
    }
    plain = make(catalog, base, "plain")
    completed = make(catalog, {**base, "tag.automatic-completion": "true"}, "completed")
    clock = ManualClock(_ms(START.replace(minute=5)))
    with injected(clock):
        for minutes in (0, 60, 15, 250):  # 10:05, 11:05, 11:20, 15:30
            clock.advance(millis=minutes * 60_000)
            commit(plain, minutes)
            commit(completed, minutes)
    assert tags_of(plain) == {"20240101 09": 1, "20240101 10": 3, "20240101 14": 4}
    assert tags_of(completed) == {"20240101 09": 1, "20240101 10": 3, "20240101 11": 4}


def test_period_names_and_normalization_as_java() -> None:
    two_hours = tag_automatic.Period(dt.timedelta(hours=2), "hour")
    assert two_hours.normalize_to_previous_tag(dt.datetime(2024, 1, 1, 13, 59)) == dt.datetime(
        2024, 1, 1, 10
    )
    minutes = tag_automatic.Period(dt.timedelta(minutes=30), "minute")
    assert minutes.time_to_tag(dt.datetime(2024, 3, 9, 7, 30)) == "202403090730"
    daily = tag_automatic.Period(dt.timedelta(days=1), "day", daily=True)
    assert daily.tag_to_time("2024-02-29 extra") == dt.datetime(2024, 2, 29)  # Java splits
    for not_auto in (
        "2023-02-29",
        "2024-1-01",
        "v1",
        "\uff12\uff10\uff12\uff14-01-01",
        "2024-01-01x",
    ):
        assert daily.tag_to_time(not_auto) is None, not_auto


def test_batch_tags_replace_the_days_tag_and_keep_the_newest(
    catalog: FileSystemCatalog,
) -> None:
    """Java's TagBatchCreation: the latest snapshot is ``batch-write-<day>``, replacing a tag
    of that name; beyond tag.num-retained-max tags of any kind the oldest go; an empty commit
    changes nothing."""
    clock = ManualClock(_ms(START))
    table = make(catalog, {"tag.automatic-creation": "batch", "tag.num-retained-max": "2"})
    with injected(clock):
        commit(table, 0)
        commit(table, 1)  # the same day: the tag moves to snapshot 2
        assert tags_of(table) == {"batch-write-2024-01-01": 2}
        for day in (1, 2):
            clock.advance(days=1)
            commit(table, 10 + day)
        builder = table.new_batch_write_builder()
        builder.new_commit().commit([])
    assert tags_of(table) == {"batch-write-2024-01-02": 3, "batch-write-2024-01-03": 4}
    assert table.snapshot_manager.latest_id() == 4

    custom = make(
        catalog, {"tag.automatic-creation": "batch", "tag.batch.customized-name": "nightly"}, "c"
    )
    commit(custom, 0)
    commit(custom, 1)
    assert tags_of(custom) == {"nightly": 2}
    escape = make(
        catalog, {"tag.automatic-creation": "batch", "tag.batch.customized-name": "../x"}, "e"
    )
    commit(escape, 0)  # the name is refused (logged); the commit stands
    with pytest.raises(InvalidArgumentError, match="separator"):
        tag_automatic.create_batch_tag(escape.store)


def test_tags_expire_by_time_retained_and_by_older_than(catalog: FileSystemCatalog) -> None:
    clock = ManualClock(_ms(START))
    table = make(catalog, {})
    kept = make(catalog, {"tag.time-expire-enabled": "false"}, "kept")
    with injected(clock):
        for t in (table, kept):
            commit(t, 0)
            t.create_tag("short", time_retained="1 d")
            t.create_tag("long", time_retained="10 d")
            t.create_tag("forever")
        clock.advance(days=2)
        commit(table, 1)
        commit(kept, 1)
        assert sorted(tags_of(table)) == ["forever", "long"]
        assert sorted(tags_of(kept)) == ["forever", "long", "short"]
        # older_than takes tags created before it, a tag without a time by its file's age
        assert expire_tags(catalog, "db.kept") == ["short"]
        cutoff = (dt.datetime.now() + dt.timedelta(minutes=1)).strftime("%Y-%m-%d %H:%M:%S")
        assert expire_tags(catalog, "db.kept", cutoff) == ["forever", "long"]
        assert expire_tags(catalog, "db.kept", cutoff) == []


def test_trigger_creates_what_is_due_and_bad_options_are_refused(
    catalog: FileSystemCatalog,
) -> None:
    clock = ManualClock(_ms(START))
    table = make(catalog, {"write-only": "true", "tag.automatic-creation": "process-time"})
    with injected(clock):
        for day in range(3):
            commit(table, day)
            clock.advance(days=1)
        assert tags_of(table) == {}
        assert trigger_tag_automatic_creation(catalog, "db.t") is True
        # the tag of the 3rd is due since the 4th began: Flink would commit an empty snapshot
        assert tag_automatic.force_creating_snapshot(table.store)
    assert tags_of(table) == {"2023-12-31": 1, "2024-01-01": 2, "2024-01-02": 3}
    with pytest.raises(OptionError, match="tag.creation-period"):
        make(catalog, {"tag.creation-period": "weekly"}, "bad")
    late = make(
        catalog, {"tag.automatic-creation": "process-time", "tag.creation-delay": "1 d"}, "late"
    )
    commit(late, 0)  # Java refuses the delay at commit; the commit stands here, untagged
    assert tags_of(late) == {} and late.snapshot_manager.latest_id() == 1


def test_commits_within_a_period_do_not_look_at_its_snapshots_again(
    catalog: FileSystemCatalog,
) -> None:
    """Java's commit object remembers the snapshots it looked at; so do we, per table, so a
    stream of commits within one day reads a few files per commit, not the whole day."""
    clock = ManualClock(_ms(START))
    table = make(catalog, {"tag.automatic-creation": "process-time"})
    with injected(clock):
        for i in range(12):
            commit(table, i)
            clock.advance(millis=60_000)
        faulty = FaultyFileIO(table.file_io)
        clone = FileStoreTable(faulty, table.path, table.name, table.table_schema)
        faulty.arm(None)
        tag_automatic.create_tags_after_commit(clone.store)
        faulty.recording = False
    assert tags_of(table) == {"2023-12-31": 1}
    assert len(faulty.calls) < 8, faulty.calls


def test_tag_commands_of_the_cli(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    table = make(catalog, {"write-only": "true", "tag.automatic-creation": "process-time"})
    commit(table, 0)
    table.create_tag("v1", time_retained="1 s")
    common = ["--warehouse", warehouse, "--table", "db.t"]
    code, doc, _ = run_json(["trigger-tag-automatic-creation", *common], capsys)
    assert (code, doc["result"]) == (0, {"result": True})
    names = sorted(tags_of(table))
    assert len(names) == 2  # v1 and the day before the snapshot's
    code, doc, _ = run_json(["expire-tags", *common, "--older-than", "2999-01-01"], capsys)
    assert (code, doc["result"]) == (0, {"expired_tags": names})
    assert tags_of(table) == {}


def _used_files(table: FileStoreTable) -> set[str]:
    store = table.store
    snaps = [store.snapshot_manager.snapshot(i) for i in store.snapshot_manager.list_ids()]
    out = set()
    for s in [*snaps, *store.tag_manager.tags().values()]:
        for e in store.manifest_io.live_entries(s):
            out.add(e.file.file_name)
    return out


def _files_on_disk(table: FileStoreTable) -> set[str]:
    return {n for root, _, names in os.walk(table.path) for n in names if n.startswith("data-")}


def _steps(table: FileStoreTable) -> None:
    """The tag steps of a batch write's commit, in Java's order (the batch tag last)."""
    tag_automatic.create_tags_after_commit(table.store)
    tag_automatic.expire_tags_after_commit(table.store)
    tag_automatic.create_tag_after_batch_write(table.store)


@pytest.mark.parametrize("mode", ["batch", "process-time"])
def test_tag_steps_failing_at_any_store_call_lose_nothing_and_a_rerun_finishes(
    catalog: FileSystemCatalog, mode: str
) -> None:
    """Three days of commits, tags kept 2 and snapshots expired to 1 (so deleting the oldest
    tag deletes files), then a commit without maintenance; its tag steps fail at each store
    call in turn on a copy of the table. The copy reads whole with every used file there, and
    running the steps again gives the tags one clean run gives."""
    options = {
        "tag.automatic-creation": mode,
        "tag.num-retained-max": "2",
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "1",
        "tag.default-time-retained": "36 h",
    }
    clock = ManualClock(_ms(START))
    with injected(clock):
        table = make(catalog, options)
        for day in range(3):
            commit(table, day)
            clock.advance(days=1)
        # a batch write tags even under write-only (Java's writers): turn tags off for it
        commit(table.copy({"write-only": "true", "tag.automatic-creation": "none"}), 9)
        rows = read_all(table).num_rows

        def copy(name: str) -> FileStoreTable:
            shutil.copytree(table.path, os.path.join(os.path.dirname(table.path), name))
            return catalog.get_table(f"db.{name}")

        reference = copy("reference")
        _steps(reference)
        expected = tags_of(reference)
        assert len(expected) == 2 and max(expected.values()) == 4, expected
        k = 1
        while True:
            target = copy(f"t{k}")
            faulty = FaultyFileIO(target.file_io)
            clone = FileStoreTable(faulty, target.path, target.name, target.table_schema)
            faulty.arm(k)
            try:
                _steps(clone)
            except InjectedFault:
                pass
            finally:
                faulty.recording = False
            reopened = catalog.get_table(f"db.t{k}")
            assert read_all(reopened).num_rows == rows, f"call {k}"
            missing = _used_files(reopened) - _files_on_disk(reopened)
            assert not missing, f"call {k}: lost {missing}"
            _steps(reopened)
            assert tags_of(reopened) == expected, f"call {k}"
            shutil.rmtree(reopened.path)
            if len(faulty.calls) < k:
                break
            k += 1
        assert k > 5
