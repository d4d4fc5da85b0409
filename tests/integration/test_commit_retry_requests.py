"""What a commit attempt asks the store after losing the race for a snapshot id.

A loser must not pay for the LATEST hint the winner has not rewritten yet (a stale hint makes
the reader list the snapshot directory) nor write manifests for an id already taken: the retry
reads the winner's snapshot directly, and an attempt that sees its id taken before writing
writes nothing for it. Racing S3 writers spend most of their requests on lost attempts. The one
listing of a commit is the check, once its snapshot is published, that it is on the chain.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import pyarrow as pa
import pytest
from faulty_file_io import FaultyFileIO
from table_helpers import read_all, write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.commit.file_store_commit import FileStoreCommit

SCHEMA = pa.schema([("id", pa.int64())])
FAST_RETRIES = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "2 ms"}


class RecordingFileIO(FaultyFileIO):
    """Every path the commit reads, probes, lists, writes or deletes, in order."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.paths: list[tuple[str, str]] = []

    def _record(self, name: str, path: str) -> None:
        if self.recording:
            self.paths.append((name, os.path.basename(path.rstrip("/"))))

    def is_file(self, path: str) -> bool:
        self._record("is_file", path)
        return super().is_file(path)

    def read_bytes(self, path: str) -> bytes:
        self._record("read", path)
        return super().read_bytes(path)

    def list_names(self, path: str) -> list[str]:
        self._record("list", path)
        return super().list_names(path)

    def write_bytes(self, path: str, data: bytes) -> None:
        self._record("write", path)
        super().write_bytes(path, data)

    def delete_quietly(self, path: str) -> None:
        self._record("delete", path)
        super().delete_quietly(path)


def _table(catalog: FileSystemCatalog) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=FAST_RETRIES))
    table = catalog.get_table("db.t")
    write_commit(table, pa.table({"id": [1]}, schema=SCHEMA))
    return table


def _recording(table: FileStoreTable) -> tuple[FileStoreTable, RecordingFileIO]:
    recording = RecordingFileIO(table.file_io)
    clone = FileStoreTable(
        recording, table.path, table.name, table.store.table_schema, dict(FAST_RETRIES)
    )
    return clone, recording


def _lose_the_first_attempt(
    monkeypatch: pytest.MonkeyPatch, table: FileStoreTable, stale_hint: bool
) -> None:
    """Another writer commits after the first attempt read its base; it may leave LATEST stale."""
    real = FileStoreCommit._try_commit_once
    fired: list[int] = []

    def racing(self: FileStoreCommit, *args: Any, **kwargs: Any) -> Any:
        if not fired:
            fired.append(1)
            write_commit(table, pa.table({"id": [2]}, schema=SCHEMA))
            if stale_hint:  # the winner died between its publish and its hint
                table.snapshot_manager.write_latest_hint(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(FileStoreCommit, "_try_commit_once", racing)


def _manifest_files(table: FileStoreTable) -> set[str]:
    return set(table.file_io.list_names(os.path.join(table.path, "manifest")))


def _referenced_manifests(table: FileStoreTable) -> set[str]:
    sm, mio = table.snapshot_manager, table.store.manifest_io
    names: set[str] = set()
    for sid in sm.list_ids():
        snapshot = sm.snapshot(sid)
        for lst in (snapshot.base_manifest_list, snapshot.delta_manifest_list):
            names.add(lst)
            names.update(m.file_name for m in mio.read_manifest_list(lst))
    return names


@pytest.mark.parametrize("stale_hint", [False, True], ids=["hint-updated", "hint-stale"])
def test_a_lost_attempt_writes_nothing_and_the_retry_reads_the_winner_directly(
    catalog: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch, stale_hint: bool
) -> None:
    table = _table(catalog)
    clone, recording = _recording(table)
    builder = clone.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table({"id": [3]}, schema=SCHEMA))
        messages = write.prepare_commit()
    _lose_the_first_attempt(monkeypatch, table, stale_hint)
    recording.arm(None)

    ids = builder.new_commit().commit(messages)

    assert ids == [3]
    assert sorted(read_all(catalog.get_table("db.t"))["id"].to_pylist()) == [1, 2, 3]
    paths = recording.paths
    # one read of the hint (the first attempt's), none after the lost race, and no listing
    # but the one that checks the published snapshot is on the chain (commit/chain_check.py)
    # and, after the commit, its maintenance's tag expiry (Java's TagTimeExpire lists the
    # tags at every commit)
    assert [p for p in paths if p[1] == "LATEST" and p[0] == "read"] == [("read", "LATEST")]
    assert [p for p in paths if p[0] == "list"] == [("list", "snapshot"), ("list", "tag")]
    assert paths.index(("list", "snapshot")) > paths.index(("is_file", "snapshot-2"))
    retry = paths.index(("read", "snapshot-2"))
    assert retry < paths.index(("list", "snapshot"))
    assert ("is_file", "snapshot-2") in paths[:retry]  # the first attempt saw its id taken
    # before the retry only the delta manifest and its list were written (the retry reuses
    # them), no base list: nothing had to be deleted, and every manifest file in the table
    # belongs to a snapshot
    lists = [p for p in paths[:retry] if p[0] == "write" and p[1].startswith("manifest-list")]
    assert len(lists) == 1
    assert not [p for p in paths if p[0] == "delete"]
    assert _manifest_files(table) == _referenced_manifests(table)


def test_the_commit_records_a_schema_published_after_the_table_was_loaded(
    catalog: FileSystemCatalog,
) -> None:
    table = _table(catalog)
    loaded = catalog.get_table("db.t")
    newer = dataclasses.replace(table.store.table_schema, id=1)
    assert table.schema_manager.commit_new(newer)

    ids = write_commit(loaded, pa.table({"id": [2]}, schema=SCHEMA))

    assert table.snapshot_manager.snapshot(ids[0]).schema_id == 1
    assert table.snapshot_manager.snapshot(ids[0] - 1).schema_id == 0
