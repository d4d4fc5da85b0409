"""Tags: create, replace, rename, delete, and roll a table back to a snapshot or a tag.

Mirrors the tag half of org.apache.paimon.table.AbstractFileStoreTable (createTag, replaceTag,
renameTag, findSnapshot, deleteTag, rollbackTo), org.apache.paimon.utils.TagManager (createTag,
replaceTag, renameTag, deleteTag with doClean),
org.apache.paimon.operation.TagDeletion and org.apache.paimon.table.RollbackHelper.

Java's rules: a blank name is refused; an existing name is refused unless ``ignore_if_exists``;
the snapshot is the latest one, or ``snapshot_id`` if that snapshot exists, else a tag's
snapshot of that id (so an expired snapshot can be tagged again); numeric names are allowed.
Ours on top: a name that is not one path component (a separator, a control character, longer
than a file name may be) is refused, and the tag file is published create-if-absent, so two
racing creators cannot both win a name (Java checks, then overwrites).

Deleting a tag whose snapshot still exists deletes the tag file only. If the snapshot has
expired, the tag was what kept its files: after the tag file, the data files and metadata of the
tagged snapshot that no snapshot and no other tag uses go too (Java's doClean; Java protects
the neighbouring tags and the earliest snapshot, we protect every tag, the earliest snapshot
and every later delta, a superset, as snapshot expiration does). A long-lived changelog of the
same id keeps what it reads: its changelog files and list, or its delta's files and lists
(Java's TagDeletion keeps changelog files and lists, but not the delta's files).

Rollback (Java's RollbackHelper.cleanLargerThan and createSnapshotFileIfNeeded), in an order
where a crash at any point leaves every snapshot and tag still there whole:

1. rolling back to a tag whose snapshot has expired: its snapshot file is published first
   (Java writes it last, so a crash in between would leave a table without a snapshot);
2. the ``LATEST`` hint is set to the target, then the snapshots after it are deleted, newest
   first (each step leaves a whole latest snapshot), then the tags after it;
3. ``EARLIEST`` is set to a recreated target;
4. only then the files the deleted snapshots and tags reached and nothing left reaches: data
   and changelog files, then manifests, manifest lists, index files and statistics. Java 1.4.2
   leaves these to ``remove_orphan_files``; a crash here leaves orphans, never a broken table.
   If a commit landed after the target meanwhile, no file is deleted.

Long-lived changelogs (``changelog/changelog-<id>``, store/changelog_manager.py) after the target
go with the snapshots, newest first, after ``changelog/LATEST`` is set below them (Java's
cleanLongLivedChangelogs); their files are left to ``remove_orphan_files``, as in Java.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

from paimon_pyspark.errors import (
    CorruptTableError,
    InvalidArgumentError,
    TagAlreadyExistError,
    TagNotExistError,
    describe,
)
from paimon_pyspark.maintenance.branches import branch_anchors, changelogs_of_other_branches
from paimon_pyspark.maintenance.snapshot_deletion import DataFileCandidate, SnapshotDeletion
from paimon_pyspark.options import parse_duration_ms
from paimon_pyspark.spec import manifest as mf
from paimon_pyspark.spec.manifest import ManifestEntry
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.managers import TAG_PREFIX

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

TAG_DEFAULT_TIME_RETAINED = "tag.default-time-retained"
_MAX_FILE_NAME_BYTES = 255


def check_tag_name(name: object, table: str, call: str) -> str:
    """``name`` if it can name a tag of ``table``; InvalidArgumentError otherwise."""
    if not isinstance(name, str):
        raise InvalidArgumentError(
            f"Table '{table}': {call} takes a tag name (str), got {describe(name)}."
        )
    if not name.strip():
        raise InvalidArgumentError(f"Table '{table}': Tag name shouldn't be blank ({name!r}).")
    bad = [c for c in name if c in "/\\" or ord(c) < 0x20 or ord(c) == 0x7F]
    if bad:
        raise InvalidArgumentError(
            f"Table '{table}': tag name {name!r} has the character {bad[0]!r}; a tag name is one "
            "file name (no separator or control character)."
        )
    if len((TAG_PREFIX + name).encode("utf-8")) > _MAX_FILE_NAME_BYTES:
        raise InvalidArgumentError(
            f"Table '{table}': tag name {name[:40]!r}... is too long: 'tag-<name>' must fit in "
            f"{_MAX_FILE_NAME_BYTES} bytes."
        )
    return name


def _check_snapshot_id(snapshot_id: object, table: str, call: str) -> int:
    if isinstance(snapshot_id, bool) or not isinstance(snapshot_id, int):
        raise InvalidArgumentError(
            f"Table '{table}': {call} takes a snapshot id (int), got {describe(snapshot_id)}."
        )
    return snapshot_id


# --- create ----------------------------------------------------------------------------------


def find_snapshot(store: FileStore, snapshot_id: int) -> Snapshot:
    """Snapshot ``snapshot_id``, or a tag's snapshot of that id if it expired (findSnapshot)."""
    snapshot = store.snapshot_manager.snapshot_if_exists(snapshot_id)
    if snapshot is None:
        for tagged in store.tag_manager.tagged_snapshots():
            if tagged.id == snapshot_id:
                snapshot = tagged
                break
    if snapshot is None:
        raise InvalidArgumentError(
            f"Table '{store.name}': Cannot create tag because given snapshot #{snapshot_id} "
            "doesn't exist."
        )
    return snapshot


def create_tag(
    store: FileStore,
    tag_name: str,
    snapshot_id: int | None = None,
    ignore_if_exists: bool = False,
    time_retained: str | None = None,
    default_retained: bool = True,
) -> None:
    """Tag the latest snapshot, or ``snapshot_id``; ``time_retained`` (``'1 d'``, else the
    table's ``tag.default-time-retained`` unless ``default_retained`` is False, as Java's
    ``ALTER TABLE ... CREATE TAG`` without RETAIN) is written into the tag as Java's Tag does."""
    call = "create_tag"
    snapshot = _snapshot_to_tag(store, snapshot_id, call, "create")
    name = check_tag_name(tag_name, store.name, call)
    if time_retained is None:
        default = store.options.get(TAG_DEFAULT_TIME_RETAINED) if default_retained else None
        retained_ms = (
            None
            if default is None
            else parse_duration_ms(default, TAG_DEFAULT_TIME_RETAINED, store.name)
        )
    else:
        retained_ms = _retained_ms(store, time_retained, call)
    tags = store.tag_manager
    if tags.tag_exists(name) or not tags.try_create(snapshot, name, retained_ms):
        if ignore_if_exists:
            return
        raise _tag_taken(store, name)


def _snapshot_to_tag(store: FileStore, snapshot_id: int | None, call: str, verb: str) -> Snapshot:
    """Snapshot ``snapshot_id`` (a tag's, if it expired), or the latest: what a tag points at."""
    if snapshot_id is not None:
        return find_snapshot(store, _check_snapshot_id(snapshot_id, store.name, call))
    snapshot = store.snapshot_manager.latest()
    if snapshot is None:
        raise InvalidArgumentError(
            f"Table '{store.name}': Cannot {verb} tag because latest snapshot doesn't exist."
        )
    return snapshot


def _retained_ms(store: FileStore, time_retained: str | None, call: str) -> int | None:
    if time_retained is None:
        return None
    if not isinstance(time_retained, str):
        raise InvalidArgumentError(
            f"Table '{store.name}': {call} takes time_retained as a duration string "
            f"('1 d', '12 h'), got {describe(time_retained)}."
        )
    return parse_duration_ms(time_retained, "time_retained", store.name)


def _tag_missing(store: FileStore, name: str) -> TagNotExistError:
    error = TagNotExistError(name, store.name)
    error.args = (f"Table '{store.name}': Tag '{name}' doesn't exist.",)
    return error


def _tag_taken(store: FileStore, name: str) -> TagAlreadyExistError:
    error = TagAlreadyExistError(name, store.name)
    error.args = (f"Table '{store.name}': Tag '{name}' already exists.",)
    return error


# --- replace and rename ----------------------------------------------------------------------


def replace_tag(
    store: FileStore,
    tag_name: str,
    snapshot_id: int | None = None,
    time_retained: str | None = None,
) -> None:
    """Point the existing tag ``tag_name`` at the latest snapshot, or ``snapshot_id``, with
    ``time_retained`` (None: no retention; Java's replaceTag does not apply the table's
    default). Java's checks and order: the snapshot first, then the tag must exist. The files
    only the old tagged snapshot kept are left to ``remove_orphan_files``, as in Java."""
    call = "replace_tag"
    snapshot = _snapshot_to_tag(store, snapshot_id, call, "replace")
    name = check_tag_name(tag_name, store.name, call)
    retained_ms = _retained_ms(store, time_retained, call)
    tags = store.tag_manager
    if not tags.tag_exists(name):
        raise _tag_missing(store, name)
    tags.overwrite(snapshot, name, retained_ms)


def rename_tag(store: FileStore, tag_name: str, target_tag_name: str) -> None:
    """Rename tag ``tag_name`` to ``target_tag_name``; the tag file moves byte for byte.
    Java's refusals: a blank name, a missing tag, a target that exists."""
    call = "rename_tag"
    for label, value in (("Original tag", tag_name), ("New tag", target_tag_name)):
        if isinstance(value, str) and not value.strip():
            raise InvalidArgumentError(
                f"Table '{store.name}': {label} name shouldn't be blank ({value!r})."
            )
    name = check_tag_name(tag_name, store.name, call)
    target = check_tag_name(target_tag_name, store.name, call)
    tags = store.tag_manager
    if not tags.tag_exists(name):
        raise _tag_missing(store, name)
    if tags.tag_exists(target) or not tags.try_rename(name, target):
        raise _tag_taken(store, target)


# --- delete ----------------------------------------------------------------------------------


def delete_tag(store: FileStore, tag_name: str) -> bool:
    """Delete tag ``tag_name``; False (and a warning) if there is none, as Java's deleteTag."""
    name = check_tag_name(tag_name, store.name, "delete_tag")
    tags = store.tag_manager
    tagged = tags.get(name)
    if tagged is None:
        LOG.warning("Table '%s': Tag '%s' doesn't exist.", store.name, name)
        return False
    if store.snapshot_manager.snapshot_exists(tagged.id):
        tags.delete(name)
        return True
    # the tag file is what finds the tag: read the others before it goes
    others = {n: s for n, s in tags.tags().items() if n != name}
    tags.delete(name)
    if any(s.id == tagged.id for s in others.values()):
        return True
    _clean_unused(store, [tagged], list(others.values()))
    return True


def delete_tags(store: FileStore, tags: str) -> list[str]:
    """Java's ``Table.deleteTags``: comma-separated names, each trimmed; the names it found.
    Every name is checked before any tag goes (Java stops at a blank one half-way)."""
    names = [check_tag_name(p.strip(), store.name, "delete_tag") for p in tags.split(",")]
    return [n for n in names if delete_tag(store, n)]


# --- rollback --------------------------------------------------------------------------------


def rollback_to(store: FileStore, target: int | str) -> int:
    """Roll back to snapshot ``target`` (int) or tag ``target`` (str); the snapshot id the table
    is at afterwards. A snapshot id that expired is found through a tag of that id."""
    if isinstance(target, str):
        return rollback_to_tag(store, target)
    snapshot_id = _check_snapshot_id(target, store.name, "rollback_to")
    snapshot = store.snapshot_manager.snapshot_if_exists(snapshot_id)
    if snapshot is not None:
        _rollback(store, snapshot)
        return snapshot.id
    tagged = store.tag_manager.tags()
    for name in sorted(tagged, key=lambda n: (tagged[n].id, n)):
        if tagged[name].id == snapshot_id:
            return rollback_to_tag(store, name)
    raise InvalidArgumentError(
        f"Table '{store.name}': Rollback snapshot '{snapshot_id}' doesn't exist."
    )


def rollback_to_tag(store: FileStore, tag_name: str) -> int:
    name = check_tag_name(tag_name, store.name, "rollback_to")
    tagged = store.tag_manager.get(name)
    if tagged is None:
        raise _tag_missing(store, name)
    _rollback(store, tagged)
    return tagged.id


def _rollback(store: FileStore, target: Snapshot) -> None:
    sm = store.snapshot_manager
    tags = store.tag_manager
    earliest = sm.earliest_id()
    becomes_earliest = False
    if not sm.snapshot_exists(target.id):
        sm.try_publish(target)  # another rollback may have published it: same content
        becomes_earliest = earliest is None or earliest > target.id
    # one listing, not a probe per id: a crashed rollback may have left a gap above the target
    later = sorted((i for i in sm.list_ids() if i > target.id), reverse=True)
    removed = [s for s in (sm.snapshot_if_exists(i) for i in later) if s is not None]
    all_tags = tags.tags()
    removed_tags = {n: s for n, s in all_tags.items() if s.id > target.id}
    kept_tags = [s for s in all_tags.values() if s.id <= target.id]

    sm.write_latest_hint(target.id)
    for s in removed:  # newest first: every step leaves a whole latest snapshot
        sm.delete_snapshot(s.id)
    _drop_changelogs_after(store, target.id)
    for name in removed_tags:
        tags.delete(name)
    if becomes_earliest:
        sm.write_earliest_hint(target.id)

    if sm.latest_id() != target.id:
        LOG.warning(
            "Table '%s': a snapshot was committed after %d during the rollback; the files of "
            "the rolled back snapshots are left to remove_orphan_files.",
            store.name,
            target.id,
        )
        return
    gone = {s.id: s for s in [*removed, *removed_tags.values()]}
    _clean_unused(store, [gone[i] for i in sorted(gone)], kept_tags)


def _drop_changelogs_after(store: FileStore, snapshot_id: int) -> None:
    changelogs = store.changelog_manager
    later = [i for i in changelogs.list_ids() if i > snapshot_id]
    if not later:
        return
    earliest = changelogs.list_ids()[0]
    changelogs.commit_long_lived_changelog_latest_hint(
        snapshot_id if snapshot_id >= earliest else -1
    )
    for i in reversed(later):
        changelogs.delete_changelog(i)


# --- files -----------------------------------------------------------------------------------


def _clean_unused(store: FileStore, gone: list[Snapshot], kept_tags: list[Snapshot]) -> None:
    """Delete what ``gone`` (snapshots or tags no longer in the table) reach and no remaining
    snapshot or tag does: data and changelog files first, then metadata."""
    if not gone:
        return
    deletion = SnapshotDeletion(store)
    sm = store.snapshot_manager
    kept = [s for s in (sm.snapshot_if_exists(i) for i in sm.list_ids()) if s is not None]
    kept_tags = kept_tags + branch_anchors(store)  # what other branches read stays

    # a gone tag's id may be a long-lived changelog's, which reads the same files
    lived = set(store.changelog_manager.list_ids())
    candidates = _data_candidates(deletion, gone)
    protected = _protected_data_files(deletion, kept, kept_tags)
    if candidates is not None and protected is not None:
        try:
            protected |= deletion.long_lived_changelog_files()
        except (CorruptTableError, OSError) as e:
            LOG.info("Table '%s': skip cleaning data files, unreadable: %s", store.name, e)
            protected = None
    if candidates is not None and protected is not None:
        deletion.delete_data_files(c for c in candidates if c.file_name not in protected)
    shared = changelogs_of_other_branches(store, gone)
    for s in gone:
        changelog = s.changelog_manifest_list
        if changelog and s.id not in lived and changelog not in shared:
            deletion.delete_added_changelog_files(changelog)
    if store.options.snapshot_clean_empty_directories:
        deletion.clean_empty_directories()

    try:
        skip = deletion.manifest_skipping_set([*kept, *kept_tags])
    except (CorruptTableError, OSError) as e:
        LOG.info("Table '%s': skip cleaning manifests, skipping set failed: %s", store.name, e)
        return
    for s in gone:
        kept_as_changelog = s.id in lived
        deletion.clean_unused_manifests(
            s,
            skip,
            data_lists=not (kept_as_changelog and not s.changelog_manifest_list),
            changelog_list=not kept_as_changelog,
        )


def _reached(deletion: SnapshotDeletion, snapshots: list[Snapshot]) -> list[ManifestEntry]:
    """The data-file entries ``snapshots`` (sorted by id) reach: for each run of consecutive
    ids, the live files of its first and every ADD of its deltas, which covers every snapshot of
    the run and the files added and compacted away inside it (still on disk). Raises if a
    manifest cannot be read."""
    mio = deletion.store.manifest_io
    out: list[ManifestEntry] = []
    previous: int | None = None
    for s in snapshots:
        if previous is None or s.id != previous + 1:
            out.extend(mio.live_entries(s))
        delta = mio.read_entries(mio.read_manifest_list(s.delta_manifest_list))
        out.extend(e for e in delta if e.kind == mf.KIND_ADD)
        previous = s.id
    return out


def _data_candidates(
    deletion: SnapshotDeletion, gone: list[Snapshot]
) -> list[DataFileCandidate] | None:
    """Every data file ``gone`` reach, or None if a manifest cannot be read."""
    out: dict[str, DataFileCandidate] = {}
    try:
        entries = _reached(deletion, gone)
    except (CorruptTableError, OSError) as e:
        LOG.info("Table '%s': skip cleaning data files, unreadable: %s", deletion.store.name, e)
        return None
    for entry in entries:
        candidate = _candidate(deletion, entry)
        if candidate is not None:
            out.setdefault(candidate.path, candidate)
    return list(out.values())


def _candidate(deletion: SnapshotDeletion, e: ManifestEntry) -> DataFileCandidate | None:
    if not e.file.external_path and not deletion.bare(e.file.file_name, "data file"):
        return None
    path = deletion.data_file_path(e)
    parent = os.path.dirname(path)
    extras = [
        os.path.join(parent, x)
        for x in e.file.extra_files
        if deletion.bare(x, f"extra file of data file {e.file.file_name!r}")
    ]
    return DataFileCandidate(e.file.file_name, path, extras, e.partition, e.bucket)


def _protected_data_files(
    deletion: SnapshotDeletion, kept: list[Snapshot], kept_tags: list[Snapshot]
) -> set[str] | None:
    """Names of the data files a remaining snapshot or tag reads, or None if unknowable."""
    try:
        entries = _reached(deletion, kept)
        names = {e.file.file_name for e in entries}
        for tag in kept_tags:
            names |= deletion.live_file_names(tag)
    except (CorruptTableError, OSError) as e:
        LOG.info("Table '%s': skip cleaning data files, unreadable: %s", deletion.store.name, e)
        return None
    return names
