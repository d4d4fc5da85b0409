"""Reading and publishing a table's schema files and snapshots; reading its tags and consumers.

Mirrors org.apache.paimon.schema.SchemaManager, org.apache.paimon.utils.SnapshotManager (LATEST
and EARLIEST are hints only, verified against the snapshot directory before use),
org.apache.paimon.utils.TagManager (``tag/tag-<name>``: a snapshot's JSON plus the tag's own
fields) and org.apache.paimon.consumer.ConsumerManager (``consumer/consumer-<id>``:
``{"nextSnapshot": n}``), the two that keep snapshots from expiring.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from paimon_pyspark.errors import (
    CorruptTableError,
    FileMissingError,
    InvalidArgumentError,
    TableNotExistError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.snapshot import (
    BATCH_COMMIT_IDENTIFIER,
    CommitLedger,
    Snapshot,
    commit_ledger,
    recorded_identifiers,
)
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store import clock
from paimon_pyspark.store.schema_change import SchemaChange, apply_changes
from paimon_pyspark.store.snapshot_commit import SnapshotCommit

_SNAPSHOT_RE = re.compile(r"^snapshot-(\d+)$")
_SCHEMA_RE = re.compile(r"^schema-(\d+)$")
TAG_PREFIX = "tag-"
CONSUMER_PREFIX = "consumer-"


class SchemaManager:
    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.schema_dir = os.path.join(table_path, "schema")
        self._cache: dict[int, TableSchema] = {}

    def schema_path(self, schema_id: int) -> str:
        return os.path.join(self.schema_dir, f"schema-{schema_id}")

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.schema_dir):
            m = _SCHEMA_RE.match(name)
            if m:
                ids.append(int(m.group(1)))
        return sorted(ids)

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def latest_from(self, known: int) -> TableSchema:
        """The latest schema, given that schema ``known`` exists: schema ids are published in
        order, so probing the next ids (one HEAD each) replaces listing the directory."""
        while self.file_io.is_file(self.schema_path(known + 1)):
            known += 1
        return self.schema(known)

    def schema(self, schema_id: int) -> TableSchema:
        cached = self._cache.get(schema_id)
        if cached is None:
            path = self.schema_path(schema_id)
            cached = TableSchema.from_json(self.file_io.read_text(path), path)
            self._cache[schema_id] = cached
        return cached

    def commit_new(self, schema: TableSchema) -> bool:
        """Publish schema file ``schema.id``; False when that id is taken."""
        self.file_io.mkdirs(self.schema_dir)
        return self.file_io.try_write_atomic(
            self.schema_path(schema.id), schema.to_json().encode("utf-8")
        )

    def commit_changes(
        self,
        changes: Sequence[SchemaChange],
        table: str,
        has_snapshots: Callable[[], bool],
        finish: Callable[[TableSchema], TableSchema],
    ) -> TableSchema:
        """Publish the next schema file with ``changes`` applied; the published schema.

        Java's commitChanges: generate from the latest schema, publish ``schema-<id+1>`` with
        create-if-absent, and when another ALTER took that id, start again from the winner's
        schema (its changes are kept, ours are applied and checked again on top). ``finish``
        normalizes and validates a generated schema as CREATE TABLE does (it lives above the
        store layer); it and the change rules raise before anything is written.
        """
        latest = self.latest()
        while True:
            if latest is None:
                raise TableNotExistError(table)
            new = finish(apply_changes(latest, changes, has_snapshots, table))
            if self.commit_new(new):
                self._cache[new.id] = new
                return new
            # the id is taken, so it exists: probe on from it rather than list again
            latest = self.latest_from(new.id)


class SnapshotManager:
    def __init__(
        self,
        file_io: FileIO,
        table_path: str,
        snapshot_commit: SnapshotCommit | None = None,
        branch: str = "main",
    ) -> None:
        self.file_io = file_io
        self.snapshot_dir = os.path.join(table_path, "snapshot")
        self.snapshot_commit = snapshot_commit
        """How :meth:`try_publish` puts a snapshot in: None for the store's create-if-absent,
        else the catalog's (store/snapshot_commit.py)."""
        self.branch = branch

    def snapshot_path(self, snapshot_id: int) -> str:
        return os.path.join(self.snapshot_dir, f"snapshot-{snapshot_id}")

    def snapshot(self, snapshot_id: int) -> Snapshot:
        snapshot = self.snapshot_if_exists(snapshot_id)
        if snapshot is None:
            path = self.snapshot_path(snapshot_id)
            raise CorruptTableError(f"Snapshot {snapshot_id} does not exist ({path}).")
        return snapshot

    def snapshot_if_exists(self, snapshot_id: int) -> Snapshot | None:
        """The snapshot, or None if it is not there: one request on an object store."""
        path = self.snapshot_path(snapshot_id)
        try:
            text = self.file_io.read_text(path)
        except CorruptTableError:
            return None
        if not text.strip():
            # never ours (published fsynced, fs/local.py): a store that lost the bytes
            raise CorruptTableError(f"Snapshot file {path} is empty.")
        return Snapshot.from_json(text, path)

    def snapshot_exists(self, snapshot_id: int) -> bool:
        return self.file_io.is_file(self.snapshot_path(snapshot_id))

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.snapshot_dir):
            m = _SNAPSHOT_RE.match(name)
            if m:
                ids.append(int(m.group(1)))
        return sorted(ids)

    def latest_id(self) -> int | None:
        hint = self._read_hint("LATEST")
        if hint is not None and self.snapshot_exists(hint) and not self.snapshot_exists(hint + 1):
            return hint
        ids = self.list_ids()
        return ids[-1] if ids else None

    def earliest_id(self) -> int | None:
        return self.earliest_id_and_hint()[0]

    def earliest_id_and_hint(self) -> tuple[int | None, bool]:
        """The earliest id, and whether an EARLIEST hint was there (expiry writes a missing one;
        one read of the hint serves both). Ids start at 1, so a hint of 1 needs no probe below."""
        hint = self._read_hint("EARLIEST")
        if (
            hint is not None
            and self.snapshot_exists(hint)
            and (hint <= 1 or not self.snapshot_exists(hint - 1))
        ):
            return hint, True
        ids = self.list_ids()
        return (ids[0] if ids else None), hint is not None

    def latest(self) -> Snapshot | None:
        """As :meth:`latest_id`, reading the hinted snapshot instead of probing it first."""
        hint = self._read_hint("LATEST")
        if hint is not None:
            snapshot = self.snapshot_if_exists(hint)
            if snapshot is not None and not self.snapshot_exists(hint + 1):
                return snapshot
        ids = self.list_ids()
        return self.snapshot(ids[-1]) if ids else None

    def latest_snapshot_of_user(self, commit_user: str) -> Snapshot | None:
        """The newest snapshot committed by ``commit_user``, scanning back from the latest.

        Mirrors SnapshotManager.latestSnapshotOfUser: the scan stops at the first missing
        (expired) snapshot, since nothing older can be newer than what was already passed.
        """
        for snapshot in self.walk_back(self.latest()):
            if snapshot.commit_user == commit_user:
                return snapshot
        return None

    def walk_back(self, start: Snapshot | None) -> Iterator[Snapshot]:
        """``start`` and the snapshots before it, newest first, up to the first missing one:
        snapshots expire from the oldest up, so nothing older is on the chain."""
        snapshot = start
        while snapshot is not None:
            yield snapshot
            snapshot = self.snapshot_if_exists(snapshot.id - 1) if snapshot.id > 1 else None

    def listed_latest(self) -> Snapshot | None:
        """The snapshot of the highest id in the directory, without the LATEST hint.

        The hint can name a snapshot file that is no longer on the table's chain: one published
        at an expired id by a writer that died before withdrawing it (commit/file_store_commit.py
        says how that happens). The highest id is always on the chain: expiry never deletes the
        newest snapshot, so a stale publish can only land below it.
        """
        while True:
            ids = self.list_ids()
            if not ids:
                return None
            snapshot = self.snapshot_if_exists(ids[-1])
            if snapshot is not None:
                return snapshot  # else expired between the listing and the read: list again

    def last_identifier_of_user(self, commit_user: str) -> int | None:
        """The identifier of ``commit_user``'s newest commit, or None if the table does not know.

        Walks back from the newest snapshot (never from the hint, see :meth:`listed_latest`):
        the first snapshot of that user, or the first carrying the record of committed
        identifiers (spec/snapshot.py), answers. The record outlives the user's own snapshots,
        so a writer restarted after they expired still skips what it committed. The walk stops
        at the first expired snapshot, as Java's latestSnapshotOfUser does.
        """
        for snapshot in self.walk_back(self.listed_latest()):
            if snapshot.commit_user == commit_user:
                return snapshot.commit_identifier
            record = recorded_identifiers(snapshot)
            if record is not None:
                return record.get(commit_user)
        return None

    def commit_records(self, base: Snapshot | None) -> tuple[dict[str, int], CommitLedger]:
        """What the records of a snapshot committed on ``base`` start from (spec/snapshot.py):
        the committed-identifiers record and the commit ledger of the chain ending at ``base``.

        Each is ``base``'s own or, for snapshots written without one (by Java), their commits on
        top of the newest one before them, newest first. The walk stops at the first expired
        snapshot: a ledger it did not reach is complete only from the oldest snapshot walked.
        """
        found: dict[str, int] = {}
        newest: dict[str, int] = {}
        record: dict[str, int] | None = None
        ledger: CommitLedger | None = None
        oldest = base.id + 1 if base is not None else 1
        for snapshot in self.walk_back(base):
            oldest = snapshot.id
            if record is None:
                record = recorded_identifiers(snapshot)
                if record is None and snapshot.commit_identifier != BATCH_COMMIT_IDENTIFIER:
                    found.setdefault(snapshot.commit_user, snapshot.commit_identifier)
            if ledger is None:
                ledger = commit_ledger(snapshot)
                if ledger is None:
                    newest.setdefault(snapshot.commit_user, snapshot.id)
            if record is not None and ledger is not None:
                break
        for user, identifier in (record or {}).items():
            found.setdefault(user, identifier)
        if ledger is None:
            ledger = CommitLedger(oldest, {})
        for user, snapshot_id in sorted(newest.items(), key=lambda item: item[1]):
            ledger = ledger.with_snapshot(user, snapshot_id)
        return found, ledger

    def _read_hint(self, name: str) -> int | None:
        path = os.path.join(self.snapshot_dir, name)
        try:
            return int(self.file_io.read_text(path).strip())
        except (CorruptTableError, ValueError, OSError):
            return None

    def try_publish(self, snapshot: Snapshot) -> bool:
        """Put ``snapshot`` in at its id, the catalog's way if it has one; False if another
        writer took the id."""
        if self.snapshot_commit is not None:
            return self.snapshot_commit.commit(self, snapshot, self.branch)
        return self.publish_file(snapshot)

    def publish_file(self, snapshot: Snapshot) -> bool:
        """Atomically create ``snapshot-<id>``; False if another writer took the id."""
        self.file_io.mkdirs(self.snapshot_dir)
        return self.file_io.try_write_atomic(
            self.snapshot_path(snapshot.id), snapshot.to_json().encode("utf-8")
        )

    def write_latest_hint(self, snapshot_id: int) -> None:
        # A hint only: readers verify it and fall back to listing the directory.
        with contextlib.suppress(OSError):
            self.file_io.overwrite_hint(os.path.join(self.snapshot_dir, "LATEST"), str(snapshot_id))

    def earliest_hint_exists(self) -> bool:
        return self._read_hint("EARLIEST") is not None

    def write_earliest_hint(self, snapshot_id: int) -> None:
        """Overwrite ``EARLIEST`` (written by snapshot expiration, as Java's commitEarliestHint)."""
        self.file_io.overwrite_hint(os.path.join(self.snapshot_dir, "EARLIEST"), str(snapshot_id))

    def delete_snapshot(self, snapshot_id: int) -> None:
        self.file_io.delete_quietly(self.snapshot_path(snapshot_id))


class TagManager:
    """The table's tags: ``tag/tag-<name>`` files, each a snapshot kept alive by its name.

    A tag file is the snapshot's JSON; one created with a retention also carries
    ``tagCreateTime`` (a LocalDateTime as Jackson writes it, ``[y, m, d, h, mi, s, nanos]``) and
    ``tagTimeRetained`` (seconds with nine decimals), Java's Tag. Readers take the snapshot
    fields and ignore the rest, as Java's ``Tag.trimToSnapshot`` does.
    """

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.tag_dir = os.path.join(table_path, "tag")

    def tag_path(self, tag_name: str) -> str:
        return os.path.join(self.tag_dir, TAG_PREFIX + tag_name)

    def tag_exists(self, tag_name: str) -> bool:
        return self.file_io.is_file(self.tag_path(tag_name))

    def get(self, tag_name: str) -> Snapshot | None:
        """The tagged snapshot, or None when there is no such tag."""
        path = self.tag_path(tag_name)
        try:
            text = self.file_io.read_text(path)
        except CorruptTableError:
            return None
        return Snapshot.from_json(text, path)

    def tags(self) -> dict[str, Snapshot]:
        """Every tag by name. An unreadable tag file raises: expiry must not guess around it."""
        out = {}
        for name in self.file_io.list_names(self.tag_dir):
            if not name.startswith(TAG_PREFIX):
                continue
            path = os.path.join(self.tag_dir, name)
            try:
                text = self.file_io.read_text(path)
            except CorruptTableError:
                continue  # deleted by another process meanwhile (Java skips it too)
            out[name[len(TAG_PREFIX) :]] = Snapshot.from_json(text, path)
        return out

    def tag_names(self) -> list[str]:
        """Every tag's name, sorted by name as Java's SHOW TAGS and ``$tags`` list them."""
        names = self.file_io.list_names(self.tag_dir)
        return sorted(n[len(TAG_PREFIX) :] for n in names if n.startswith(TAG_PREFIX))

    def tagged_snapshots(self) -> list[Snapshot]:
        """The snapshots of all tags, one per id, sorted by id (Java's taggedSnapshots)."""
        by_id = {s.id: s for s in self.tags().values()}
        return [by_id[i] for i in sorted(by_id)]

    def try_create(
        self,
        snapshot: Snapshot,
        name: str,
        time_retained_ms: int | None = None,
        create_time: dt.datetime | None = None,
    ) -> bool:
        """Publish ``tag/tag-<name>`` create-if-absent; False when the name is taken."""
        text = self.tag_json(snapshot, time_retained_ms, create_time)
        self.file_io.mkdirs(self.tag_dir)
        return self.file_io.try_write_atomic(self.tag_path(name), text.encode("utf-8"))

    def overwrite(self, snapshot: Snapshot, name: str, time_retained_ms: int | None) -> None:
        """Replace tag ``name``'s file in one step (Java's replaceTag overwrites it): a reader
        sees the old tag or the new one."""
        text = self.tag_json(snapshot, time_retained_ms)
        self.file_io.overwrite_hint(self.tag_path(name), text)

    def try_rename(self, name: str, target: str) -> bool:
        """Publish tag ``name``'s file, byte for byte, as ``target`` create-if-absent, then
        delete ``name``; False (nothing changed) when ``target`` is taken. Java renames the
        file, which may overwrite a target created meanwhile."""
        data = self.file_io.read_bytes(self.tag_path(name))
        if not self.file_io.try_write_atomic(self.tag_path(target), data):
            return False
        self.delete(name)
        return True

    @staticmethod
    def tag_json(
        snapshot: Snapshot, time_retained_ms: int | None, create_time: dt.datetime | None = None
    ) -> str:
        """A tag file's text. Without a retention it is the bare snapshot JSON, which Paimon
        0.7 and older can still read (Java's createOrReplaceTag writes it so for that reason).
        """
        text = snapshot.to_json()
        if time_retained_ms is not None:
            when = create_time or clock.now_local()
            stamp = [when.year, when.month, when.day, when.hour, when.minute]
            if when.second or when.microsecond:
                stamp.append(when.second)
            if when.microsecond:
                stamp.append(when.microsecond * 1000)
            seconds, millis = divmod(time_retained_ms, 1000)
            extra = (
                f'  "tagCreateTime" : [ {", ".join(str(v) for v in stamp)} ],\n'
                f'  "tagTimeRetained" : {seconds}.{millis:03d}000000\n'
            )
            body = text.rstrip()
            if not body.endswith("}"):
                raise CorruptTableError(f"Snapshot {snapshot.id} JSON does not end with '}}'.")
            text = body[:-1].rstrip() + ",\n" + extra + "}"
        return text

    def delete(self, name: str) -> None:
        self.file_io.delete_quietly(self.tag_path(name))


@dataclass(frozen=True)
class Consumer:
    """One consumer's progress: the next snapshot it will read (Java's Consumer, pypaimon's)."""

    next_snapshot: int

    def to_json(self) -> str:
        """Java's JsonSerdeUtil pretty print, byte for byte."""
        return '{\n  "nextSnapshot" : ' + str(self.next_snapshot) + "\n}"

    @staticmethod
    def from_json(json_str: str) -> Consumer:
        """The ``nextSnapshot`` of a consumer file (other fields ignored, as Java's Jackson)."""
        data = json.loads(json_str)
        value = data["nextSnapshot"] if isinstance(data, dict) else None
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"'nextSnapshot' is {value!r}, not a snapshot id")
        return Consumer(value)


class ConsumerManager:
    """Consumers (``consumer/consumer-<id>``): the next snapshot each one will read.

    Mirrors org.apache.paimon.consumer.ConsumerManager (and pypaimon's): a consumer file is
    replaced whole (readers see the old or the new one), expired by its modification time and
    cleared by Java regular expressions matched against the whole id.
    """

    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.consumer_dir = os.path.join(table_path, "consumer")

    def consumer_path(self, consumer_id: str) -> str:
        check_consumer_id(consumer_id)
        return os.path.join(self.consumer_dir, CONSUMER_PREFIX + consumer_id)

    def consumer(self, consumer_id: str) -> Consumer | None:
        """The consumer's progress, or None when it has no file."""
        return self._read(self.consumer_path(consumer_id))

    def reset_consumer(self, consumer_id: str, consumer: Consumer) -> None:
        """Write (or replace) the consumer's file."""
        path = self.consumer_path(consumer_id)
        self.file_io.mkdirs(self.consumer_dir)
        self.file_io.overwrite_hint(path, consumer.to_json())

    def delete_consumer(self, consumer_id: str) -> None:
        self.file_io.delete_quietly(self.consumer_path(consumer_id))

    def list_all_ids(self) -> list[str]:
        return sorted(
            name[len(CONSUMER_PREFIX) :]
            for name in self.file_io.list_names(self.consumer_dir)
            if name.startswith(CONSUMER_PREFIX) and len(name) > len(CONSUMER_PREFIX)
        )

    def consumers(self) -> dict[str, int]:
        """Every consumer's ``nextSnapshot`` by id (one deleted meanwhile is left out)."""
        found: dict[str, int] = {}
        for consumer_id in self.list_all_ids():
            consumer = self._read(os.path.join(self.consumer_dir, CONSUMER_PREFIX + consumer_id))
            if consumer is not None:
                found[consumer_id] = consumer.next_snapshot
        return found

    def min_next_snapshot(self) -> int | None:
        """The smallest ``nextSnapshot`` of all consumers (Java's minNextSnapshot), or None."""
        found = self.consumers().values()
        return min(found) if found else None

    def expire(self, expire_datetime: dt.datetime | float) -> list[str]:
        """Delete the consumers whose file was last modified before ``expire_datetime`` (a
        datetime, naive meaning local time as Java's LocalDateTime, or epoch seconds); returns
        their ids."""
        if isinstance(expire_datetime, dt.datetime):
            cutoff = expire_datetime.timestamp()
        else:
            cutoff = float(expire_datetime)
        expired = []
        for consumer_id in self.list_all_ids():
            path = os.path.join(self.consumer_dir, CONSUMER_PREFIX + consumer_id)
            try:
                modified = self.file_io.mtime(path)
            except (OSError, CorruptTableError):
                continue  # deleted meanwhile
            if modified < cutoff:
                self.file_io.delete_quietly(path)
                expired.append(consumer_id)
        return expired

    def clear_consumers(
        self, including_pattern: str | None = None, excluding_pattern: str | None = None
    ) -> list[str]:
        """Delete the consumers whose id matches ``including_pattern`` whole (every consumer
        when it is None or blank) and not ``excluding_pattern``; returns their ids."""
        including = _consumer_pattern(including_pattern) or re.compile(".*", re.DOTALL)
        excluding = _consumer_pattern(excluding_pattern)
        cleared = []
        for consumer_id in self.list_all_ids():
            if including.fullmatch(consumer_id) and not (
                excluding is not None and excluding.fullmatch(consumer_id)
            ):
                self.file_io.delete_quietly(
                    os.path.join(self.consumer_dir, CONSUMER_PREFIX + consumer_id)
                )
                cleared.append(consumer_id)
        return cleared

    def _read(self, path: str) -> Consumer | None:
        try:
            text = self.file_io.read_text(path)
        except FileMissingError:
            return None
        try:
            return Consumer.from_json(text)
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptTableError(f"Consumer file {path} is not valid: {e}") from e


def check_consumer_id(consumer_id: object) -> str:
    """A consumer id names a file: a non-empty string without a path separator, not ``.`` or
    ``..`` (Java refuses only the empty id; the rest keeps the file in ``consumer/``)."""
    if (
        not isinstance(consumer_id, str)
        or not consumer_id
        or "/" in consumer_id
        or "\\" in consumer_id
        or consumer_id in (".", "..")
    ):
        raise InvalidArgumentError(
            f"A consumer id is a non-empty name without '/' or '\\', got {consumer_id!r}."
        )
    return consumer_id


def _consumer_pattern(pattern: str | None) -> re.Pattern[str] | None:
    if pattern is None or not pattern.strip():
        return None
    try:
        return re.compile(pattern)
    except re.error as e:
        raise InvalidArgumentError(
            f"Consumer pattern {pattern!r} is not a regular expression: {e}."
        ) from e
