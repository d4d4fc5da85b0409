"""Branches: create (empty or from a tag), drop, rename, fast-forward and list them.

Mirrors org.apache.paimon.utils.FileSystemBranchManager and the branch calls of
AbstractFileStoreTable. A branch ``b`` is the directory ``branch/branch-b/`` with its own
``schema/``, ``snapshot/``, ``tag/`` (store/branches.py); data files and manifests stay in the
table directory, shared by every branch. Every call acts from the branch of the handle it is
given (Java's manager is built from the current branch's snapshot, schema and tag managers):
a tag is looked up there, and ``fast_forward`` publishes into it.

Java's file layout is kept; the order of the file operations is ours where Java's can leave a
broken table after a crash (each function says which), and every call can be rerun to finish
what a crash interrupted:

- create: schemas newest first (a branch is readable with its latest schema from the first
  file on), then the tag's snapshot, then the tag file last. Java writes the tag first and the
  schemas last, so a crash leaves a branch without schemas, which orphan cleaning refuses.
  Rerunning the same ``create_branch`` on such a half-made branch completes it.
- drop: tags, snapshots (oldest first), changelogs and consumers, then schemas (oldest first,
  so the latest stays the latest), then the directory. Java deletes the directory in one
  recursive call whose order the store picks.
- rename: one directory rename on a local disk (Java's); elsewhere the target is marked with
  the source's name, the files are copied (schemas last), the source is deleted (schemas
  first), then the mark: a rerun sees the mark and finishes.
- fast-forward: main's tags from the branch's earliest snapshot on, then main's snapshots from
  there on, newest first, but for those the branch holds byte for byte (the snapshot of the tag
  it was made from), so main reads as a snapshot of its own at every step, then the
  branch's schemas, snapshots (oldest first: main reads as a prefix of the branch's history)
  and tags, then ``LATEST``. Java deletes first and copies after in the same way but deletes
  main's schemas too, which main's remaining snapshots may still use.

Files a branch reads that another wrote (a branch from a tag reads the tagged snapshot's files,
main after a fast-forward the branch's) are protected by :func:`branch_anchors` (every retained
snapshot and tag of every other branch) in snapshot expiry, tag deletion and rollback; Java
1.4.2 protects nothing, so deleting on main the tag a branch was made from, once its snapshot
expired, deletes files the branch reads. Orphan cleaning walks every branch
(maintenance/orphan_files.py, as Java's).
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import TYPE_CHECKING

from paimon_pyspark.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    CorruptTableError,
    InvalidArgumentError,
    TagNotExistError,
)
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.branches import (
    BRANCH_DIR,
    BRANCH_PREFIX,
    MAIN_BRANCH,
    branch_path,
    check_branch_path_name,
    check_new_branch_name,
    is_main_branch,
)
from paimon_pyspark.store.managers import SchemaManager, SnapshotManager, TagManager

if TYPE_CHECKING:
    from paimon_pyspark.fs.file_io import FileIO
    from paimon_pyspark.store.file_store import FileStore

LOG = logging.getLogger(__name__)

SCAN_FALLBACK_BRANCH = "scan.fallback-branch"
SCAN_PRIMARY_BRANCH = "scan.primary-branch"


# --- listing ---------------------------------------------------------------------------------


def branches(store: FileStore) -> list[str]:
    """Every branch but ``main``, sorted by name (Java lists them in directory order)."""
    names = store.file_io.list_dirs(os.path.join(store.path, BRANCH_DIR))
    out = []
    for name in names:
        name = os.path.basename(name.rstrip("/"))
        if not name.startswith(BRANCH_PREFIX):
            continue
        branch = name[len(BRANCH_PREFIX) :]
        with contextlib.suppress(InvalidArgumentError):
            out.append(check_branch_path_name(branch, store.name))
    return sorted(out)


def branch_exists(store: FileStore, branch: str) -> bool:
    """Whether ``branch``'s directory exists (Java's test); ``main`` always does."""
    if is_main_branch(branch):
        return True
    return store.file_io.exists(_dir(store, branch))


def _dir(store: FileStore, branch: str) -> str:
    return branch_path(store.path, check_branch_path_name(branch, store.name))


def _managers(store: FileStore, branch: str) -> tuple[SchemaManager, SnapshotManager, TagManager]:
    path = branch_path(store.path, branch)
    io = store.file_io
    return SchemaManager(io, path), SnapshotManager(io, path), TagManager(io, path)


def _copy(io: FileIO, source: str, target: str) -> None:
    """Copy a small JSON file (Java copies with overwrite): published durably when ``target``
    is new; replaced in one step when it holds other bytes; left alone when it holds these."""
    _put(io, target, io.read_bytes(source))


def _put(io: FileIO, target: str, data: bytes) -> None:
    if io.try_write_atomic(target, data):
        return
    if io.read_bytes(target) != data:
        io.overwrite_hint(target, data.decode("utf-8"))


# --- create ----------------------------------------------------------------------------------


def create_branch(
    store: FileStore,
    branch: str,
    tag_name: str | None = None,
    ignore_if_exists: bool = False,
) -> None:
    """Create ``branch`` empty (the current schemas, no snapshot: like a new table) or from tag
    ``tag_name`` of the handle's branch (the tag, its snapshot and the schemas up to its
    schema id). An existing branch raises BranchAlreadyExistError unless ``ignore_if_exists``;
    a missing tag TagNotExistError; a bad name InvalidArgumentError."""
    if not isinstance(branch, str):
        check_new_branch_name(branch, store.name)
    if ignore_if_exists and branch_exists(store, branch):
        return
    check_new_branch_name(branch, store.name)
    source_schemas, _, source_tags = _managers(store, store.branch)
    tagged: Snapshot | None = None
    if tag_name is not None:
        if not isinstance(tag_name, str) or not tag_name.strip():
            raise InvalidArgumentError(
                f"Table '{store.name}': create_branch takes a tag name, got {tag_name!r}."
            )
        tagged = source_tags.get(tag_name)
        if tagged is None:
            raise TagNotExistError(tag_name, store.name)
        top = tagged.schema_id
    else:
        latest = source_schemas.latest()
        if latest is None:
            raise CorruptTableError(f"Table '{store.name}' has no schema.")
        top = latest.id
    schema_ids = [i for i in source_schemas.list_ids() if i <= top]
    if branch_exists(store, branch) and not _half_made(store, branch, schema_ids, tagged, tag_name):
        raise BranchAlreadyExistError(branch, store.name)

    io = store.file_io
    schemas, snapshots, tags = _managers(store, branch)
    io.mkdirs(schemas.schema_dir)
    for i in reversed(schema_ids):
        _copy(io, source_schemas.schema_path(i), schemas.schema_path(i))
    if tagged is not None and tag_name is not None:
        io.mkdirs(snapshots.snapshot_dir)
        source_snapshot = SnapshotManager(io, store.branch_path).snapshot_path(tagged.id)
        try:
            _copy(io, source_snapshot, snapshots.snapshot_path(tagged.id))
        except CorruptTableError:
            # expired, the tag keeps it: Java's copy fails here, the tag's snapshot serves
            _put(io, snapshots.snapshot_path(tagged.id), tagged.to_json().encode("utf-8"))
        io.mkdirs(tags.tag_dir)
        _copy(io, source_tags.tag_path(tag_name), tags.tag_path(tag_name))
    LOG.info("Table '%s': created branch '%s' (from tag %s)", store.name, branch, tag_name)


def _half_made(
    store: FileStore,
    branch: str,
    schema_ids: list[int],
    tagged: Snapshot | None,
    tag_name: str | None,
) -> bool:
    """Whether ``branch`` is what a crash inside the same :func:`create_branch` leaves: no tag,
    and either the tag's snapshot alone (the tag file, written last, missing) or no snapshot
    and the lowest schema, written last of the schemas, missing. A crash between the schemas
    and the snapshot leaves what an empty branch is: a rerun then raises "already exists"."""
    schemas, snapshots, tags = _managers(store, branch)
    if tags.tag_names():
        return False
    ids = snapshots.list_ids()
    if tagged is not None and tag_name is not None and ids == [tagged.id]:
        return True
    return not ids and bool(schema_ids) and schema_ids[0] not in schemas.list_ids()


# --- drop ------------------------------------------------------------------------------------


def drop_branch(store: FileStore, branch: str) -> None:
    """Delete ``branch``'s directory: its snapshots, schemas, tags, consumers and changelogs.
    Its data files stay until ``remove_orphan_files`` (Java's). BranchNotExistError when there
    is no such branch; a branch named by ``scan.fallback-branch`` / ``scan.primary-branch`` is
    refused (Java's deleteBranch)."""
    check_branch_path_name(branch, store.name)
    for key in (SCAN_FALLBACK_BRANCH, SCAN_PRIMARY_BRANCH):
        configured = (store.options.get(key) or "").strip()
        if configured and configured == branch:
            raise InvalidArgumentError(
                f"Table '{store.name}': cannot delete branch '{branch}' because it is configured "
                f"as '{key}'. Unset '{key}' first."
            )
    if is_main_branch(branch) or not branch_exists(store, branch):
        raise BranchNotExistError(branch, store.name)
    _delete_branch_dir(store, branch)
    LOG.info("Table '%s': dropped branch '%s'", store.name, branch)


def drop_branches(store: FileStore, names: str) -> list[str]:
    """Drop each of the comma-separated branches (Java's Table.deleteBranches)."""
    dropped = []
    for name in names.split(","):
        drop_branch(store, name.strip())
        dropped.append(name.strip())
    return dropped


def _delete_branch_dir(store: FileStore, branch: str) -> None:
    io = store.file_io
    base = _dir(store, branch)
    schemas, snapshots, tags = _managers(store, branch)
    for name in tags.tag_names():
        tags.delete(name)
    for name in ("LATEST", "EARLIEST"):
        io.delete_quietly(os.path.join(snapshots.snapshot_dir, name))
    for i in snapshots.list_ids():
        snapshots.delete_snapshot(i)
    for sub in ("changelog", "consumer"):
        io.delete_dir(os.path.join(base, sub))
    for i in schemas.list_ids():
        io.delete_quietly(schemas.schema_path(i))
    io.delete_dir(base)


# --- rename ----------------------------------------------------------------------------------


RENAME_MARKER = ".renaming"
"""In the target of a copying rename until it is done, naming the source: a rerun finishes."""


def rename_branch(store: FileStore, from_branch: str, to_branch: str) -> None:
    """Rename a branch (Java's renameBranch: not ``main``; the source exists, the target does
    not and is a valid new name). One directory rename on local disk, as Java; elsewhere the
    target is marked (``.renaming``, naming the source), the files copied (schemas last), the
    source deleted (schemas first), the mark removed; a rerun after a crash finishes."""
    if from_branch == MAIN_BRANCH:
        raise InvalidArgumentError(f"Table '{store.name}': cannot rename the main branch.")
    check_branch_path_name(from_branch, store.name)
    check_new_branch_name(to_branch, store.name)
    io = store.file_io
    source, target = _dir(store, from_branch), _dir(store, to_branch)
    marker = os.path.join(target, RENAME_MARKER)
    if _read_marker(io, marker) != from_branch:
        if io.exists(target) and _walk(io, target):  # an empty directory is a crash's
            raise BranchAlreadyExistError(to_branch, store.name)
        if not io.exists(source) or not _has_schema(store, from_branch):
            raise BranchNotExistError(from_branch, store.name)
        if io.is_local:
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(target)
            os.rename(source, target)
            LOG.info("Table '%s': renamed branch '%s' to '%s'", store.name, from_branch, to_branch)
            return
        io.mkdirs(target)
        io.overwrite_hint(marker, from_branch)
    if io.exists(source):
        if _has_schema(store, from_branch):
            _copy_tree(io, source, target)
        _delete_for_rename(store, from_branch)
    io.delete_quietly(marker)
    LOG.info("Table '%s': renamed branch '%s' to '%s'", store.name, from_branch, to_branch)


def _read_marker(io: FileIO, path: str) -> str | None:
    try:
        return io.read_text(path)
    except CorruptTableError:
        return None


def _has_schema(store: FileStore, branch: str) -> bool:
    return bool(_managers(store, branch)[0].list_ids())


def _copy_tree(io: FileIO, source: str, target: str) -> None:
    """Every file under ``source`` to the same place under ``target``, ``schema/`` last: the
    target is a branch only once its schemas are there."""
    files = _walk(io, source)
    files.sort(key=lambda rel: rel.startswith("schema" + os.sep))
    for rel in files:
        dst = os.path.join(target, rel)
        io.mkdirs(os.path.dirname(dst))
        _put(io, dst, io.read_bytes(os.path.join(source, rel)))


def _delete_for_rename(store: FileStore, branch: str) -> None:
    """The source of a copy-rename: its schemas first (it stops being a branch), then all."""
    schemas = _managers(store, branch)[0]
    for i in schemas.list_ids():
        store.file_io.delete_quietly(schemas.schema_path(i))
    store.file_io.delete_dir(_dir(store, branch))


def _walk(io: FileIO, root: str) -> list[str]:
    out: list[str] = []
    dirs = {os.path.basename(d.rstrip("/")) for d in io.list_dirs(root)}
    for name in io.list_names(root):
        if name in dirs:
            out.extend(os.path.join(name, rel) for rel in _walk(io, os.path.join(root, name)))
        else:
            out.append(name)
    return out


# --- fast-forward ----------------------------------------------------------------------------


def check_fast_forward(branch: object, current: str, table: str) -> str:
    """Java's fastForwardValidate: not ``main``, not blank, not the current branch."""
    if not isinstance(branch, str) or not branch.strip():
        raise InvalidArgumentError(f"Table '{table}': branch name {branch!r} is blank.")
    if branch == MAIN_BRANCH:
        raise InvalidArgumentError(
            f"Table '{table}': branch name '{branch}' do not use in fast-forward."
        )
    if branch == current:
        raise InvalidArgumentError(
            f"Table '{table}': fast-forward from the current branch '{branch}' is not allowed."
        )
    return check_branch_path_name(branch, table)


def fast_forward(store: FileStore, branch: str) -> None:
    """Make the handle's branch (main, usually) what ``branch`` is: its snapshots, schemas and
    tags from ``branch``'s earliest snapshot on replace the handle's own (Java's fastForward).
    The handle's snapshots and tags from that id on go; their files stay until
    ``remove_orphan_files``, as in Java."""
    check_fast_forward(branch, store.branch, store.name)
    if not branch_exists(store, branch):
        raise BranchNotExistError(branch, store.name)
    io = store.file_io
    b_schemas, b_snapshots, b_tags = _managers(store, branch)
    earliest = b_snapshots.earliest_id()
    if earliest is None:
        raise InvalidArgumentError(
            f"Table '{store.name}': cannot fast forward branch {branch}, because it does not "
            "have snapshot."
        )
    earliest_schema = b_snapshots.snapshot(earliest).schema_id
    schemas, snapshots, tags = _managers(store, store.branch)

    for name, tagged in tags.tags().items():
        if tagged.id >= earliest:
            tags.delete(name)
    io.delete_quietly(os.path.join(snapshots.snapshot_dir, "LATEST"))
    for i in reversed(snapshots.list_ids()):
        if i >= earliest and not _same_file(io, snapshots, b_snapshots, i):
            snapshots.delete_snapshot(i)

    branch_schema_ids = b_schemas.list_ids()
    io.mkdirs(schemas.schema_dir)
    for i in branch_schema_ids:
        if i >= earliest_schema:
            _copy(io, b_schemas.schema_path(i), schemas.schema_path(i))
    for i in schemas.list_ids():
        if i > earliest_schema and i not in branch_schema_ids:
            io.delete_quietly(schemas.schema_path(i))
    io.mkdirs(snapshots.snapshot_dir)
    latest = None
    for i in b_snapshots.list_ids():
        _copy(io, b_snapshots.snapshot_path(i), snapshots.snapshot_path(i))
        latest = i
    names = b_tags.tag_names()
    if names:
        io.mkdirs(tags.tag_dir)
    for name in names:
        _copy(io, b_tags.tag_path(name), tags.tag_path(name))
    if latest is not None:
        snapshots.write_latest_hint(latest)
    LOG.info(
        "Table '%s': fast-forwarded branch '%s' to '%s' from snapshot %d",
        store.name,
        store.branch,
        branch,
        earliest,
    )


def _same_file(io: FileIO, main: SnapshotManager, branch: SnapshotManager, i: int) -> bool:
    """Whether snapshot ``i`` is byte for byte the branch's (the tag a branch was made from):
    it stays, so main never goes without a snapshot when the branch starts at main's earliest."""
    try:
        return io.read_bytes(main.snapshot_path(i)) == io.read_bytes(branch.snapshot_path(i))
    except CorruptTableError:
        return False


# --- what other branches read ----------------------------------------------------------------


def branch_anchors(store: FileStore) -> list[Snapshot]:
    """Snapshots whose files the branches other than ``store``'s read: every retained snapshot
    of each and its tags. A file two branches share came from the snapshot one was made from,
    and each may still hold it in any retained snapshot: the branch made from a tag holds it
    from its earliest snapshot on, but the branch it came from may hold it in retained
    snapshots after its earliest and drop it before its latest (time travel still reads them),
    and a fast-forward gives main the branch's newer files the same way. Empty, after one
    listing, when the table has no branch; manifests are read once per name (ManifestIO)."""
    others = [b for b in branches(store) if b != store.branch]
    if not is_main_branch(store.branch):
        others.append(MAIN_BRANCH)
    out: list[Snapshot] = []
    for b in others:
        _, snapshots, tags = _managers(store, b)
        for sid in snapshots.list_ids():
            snapshot = snapshots.snapshot_if_exists(sid)
            if snapshot is not None:
                out.append(snapshot)
        out.extend(tags.tagged_snapshots())
    return out


def changelogs_of_other_branches(store: FileStore, snapshots: list[Snapshot]) -> set[str]:
    """The changelog manifest lists of ``snapshots`` that another branch's snapshot of the same
    id, or one of its tags, also names: a branch made from a tag holds a copy of the tagged
    snapshot, changelog included, and its expiry must not delete what the other still reads."""
    lists = {s.changelog_manifest_list for s in snapshots if s.changelog_manifest_list}
    if not lists:
        return set()
    others = [b for b in branches(store) if b != store.branch]
    if not is_main_branch(store.branch):
        others.append(MAIN_BRANCH)
    shared: set[str] = set()
    for b in others:
        _, snapshot_manager, tags = _managers(store, b)
        found = [snapshot_manager.snapshot_if_exists(s.id) for s in snapshots]
        for other in [*found, *tags.tagged_snapshots()]:
            if other is not None and other.changelog_manifest_list in lists:
                shared.add(other.changelog_manifest_list)
    return shared


__all__ = [
    "branch_anchors",
    "branch_exists",
    "branches",
    "changelogs_of_other_branches",
    "check_fast_forward",
    "create_branch",
    "drop_branch",
    "drop_branches",
    "fast_forward",
    "rename_branch",
]
