"""File names and paths that come from outside the engine, checked before they are used.

A table names each of its files relative to one of its directories (a data file and its extra
files to their bucket directory, an index file to ``index/``, a manifest to ``manifest/``), so
a name that is not bare (a separator, ``.`` or ``..``, empty, a NUL) reaches some other
directory, inside the table or outside it, and an external path can be anywhere. Java takes
both as they come; we check them where they enter:

- commit messages (CommitMessageSerializer bytes, objects a user passes to ``TableCommit``, a
  Spark job's staging records): :func:`check_commit_messages` refuses the whole call with
  InvalidCommitMessageError before anything is written or deleted;
- manifests and snapshots on disk (another engine's, or tampered with): a scan and compaction
  planning refuse a data file whose name or extra file is not bare (:func:`check_listed_file`,
  CorruptTableError), every reader refuses such a name again where it makes the file's path
  (store/external_paths.py ``data_file_path``), the hash-index and deletion-vector readers
  refuse an index file's (:func:`index_file_path`), and expiry deletes only bare names and
  paths inside the table (:func:`is_inside`), skipping any other entry with a warning;
- external paths (``data-file.external-paths``): a commit message's or a manifest's, of a data
  or an index file, must lie under one of the table's configured roots
  (store/external_paths.py); a read raises ExternalPathError for any other, expiry skips it;
- splits (a DataSplit built by hand, or decoded from bytes on a Spark executor or a Ray
  worker): :func:`check_split_paths` refuses, with InvalidSplitError before anything is opened,
  a bucket directory outside the table, a file name that is not bare, an external path or a
  deletion-vector file outside the table and its roots.

Each check costs a few string operations per file, never per row.
"""

from __future__ import annotations

import numbers
import posixpath
import struct
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NoReturn

from paimon_pyspark.errors import (
    CorruptTableError,
    ExternalPathError,
    InvalidCommitMessageError,
    InvalidSplitError,
    PaimonError,
)
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import IndexFileMeta

if TYPE_CHECKING:
    from paimon_pyspark.store.external_paths import ExternalPaths
    from paimon_pyspark.store.file_store import FileStore


def name_problem(name: object) -> str | None:
    """Why ``name`` is not a bare file name, or None when it is one."""
    if not isinstance(name, str):
        return f"not a bare file name (a {type(name).__name__}, not a string)"
    if not name:
        return "not a bare file name (empty)"
    if name in (".", ".."):
        return "not a bare file name (a directory reference)"
    if "/" in name or "\\" in name:
        return "not a bare file name (it has a path separator)"
    if "\0" in name:
        return "not a bare file name (it has a NUL character)"
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return "not a file name (it is not valid text: a lone surrogate)"
    return None


def is_inside(path: str, root: str) -> bool:
    """Whether ``path`` lies under the directory ``root``, by their normalized text.

    Paths are FileIO's scheme-less strings (``/abs`` or ``bucket/key``); a path with a scheme
    (``s3://...``, ``file:/...``, as external paths are written) is never inside a scheme-less
    root.
    """
    if "\0" in path or ":" in path.split("/", 1)[0]:
        return False
    norm_root = posixpath.normpath(root)
    norm = posixpath.normpath(path)
    return norm != norm_root and norm.startswith(norm_root.rstrip("/") + "/")


def external_roots(store: FileStore) -> tuple[str, ...]:
    """The directories (FileIO paths) of the table's ``data-file.external-paths`` on its own
    filesystem (store/external_paths.py); none when the option is unset."""
    paths = store.external_paths
    return () if paths is None else paths.allowed


def is_table_path(store: FileStore, path: str) -> bool:
    """Whether ``path`` (a FileIO path) is a file the table may delete: under its directory
    or an external root."""
    return any(is_inside(path, root) for root in (store.path, *external_roots(store)))


def external_io_path(store: FileStore, uri: str) -> str | None:
    """The FileIO path of an external path a manifest records, or None when it lies under
    none of the table's configured roots."""
    paths = store.external_paths
    if paths is None:
        return None
    try:
        return paths.check_uri(uri, "a file")
    except ExternalPathError:
        return None


def check_listed_file(store: FileStore, f: DataFileMeta, where: str) -> None:
    """Refuse a data file a manifest lists (``where``: which snapshot) unless its name and
    extra files are bare names and its external path lies under a configured root: the scan's
    check, and compaction planning's, before a task or split names the file."""
    named = [("data file", f.file_name)]
    named += [(f"extra file of data file {f.file_name!r}", x) for x in f.extra_files]
    for what, name in named:
        problem = name_problem(name)
        if problem is not None:
            raise CorruptTableError(
                f"Table '{store.name}': {where} lists {what} {name!r}, which is {problem}; it "
                "is not read."
            )
    if f.external_path is not None:
        _external_or_raise(
            store.external_paths, f.external_path, f"data file {f.file_name!r}", store.name
        )


def index_file_path(
    index_dir: str, paths: ExternalPaths | None, meta: IndexFileMeta, table: str
) -> str:
    """Where index file ``meta`` (from an index manifest) is read: its bare name in the
    table's ``index_dir``, or its external path under a configured root; CorruptTableError for
    any other name, ExternalPathError for any other external path, before anything is opened."""
    problem = name_problem(meta.file_name)
    if problem is not None:
        raise CorruptTableError(
            f"Table '{table}': {meta.index_type} index file name {meta.file_name!r} under "
            f"{index_dir} is {problem}; it is not read."
        )
    if meta.external_path is None:
        return posixpath.join(index_dir, meta.file_name)
    what = f"{meta.index_type} index file {meta.file_name!r}"
    return _external_or_raise(paths, meta.external_path, what, table)


def _external_or_raise(paths: ExternalPaths | None, uri: str, what: str, table: str) -> str:
    if paths is None:
        raise ExternalPathError(
            f"Table '{table}': {what} has external path {uri!r}, but the table configures no "
            "'data-file.external-paths'; it is not read."
        )
    return paths.check_uri(uri, what)


def check_split_paths(
    store: FileStore,
    bucket: int,
    bucket_path: object,
    files: Iterable[DataFileMeta],
    deletion_paths: Iterable[str],
) -> None:
    """Refuse a split (hand-built, or decoded in another process) that names anything but the
    table's files: its bucket directory must lie inside the table and be a bucket's (the
    scan's ``<table>/<partition>/bucket-<n>``), every data and extra file name must be bare,
    every external path under a configured root, every deletion-vector file inside the table's
    ``index/`` or under a root. InvalidSplitError naming the table and the path, raised before
    the read opens any file."""

    def refuse(what: str) -> NoReturn:
        raise InvalidSplitError(
            f"Table '{store.name}': a DataSplit of bucket {bucket} {what}; a split must come "
            "from this table's scan, and nothing of it is read."
        )

    if not isinstance(bucket_path, str) or not (
        is_inside(bucket_path, store.path)
        and posixpath.basename(posixpath.normpath(bucket_path)).startswith("bucket-")
    ):
        refuse(f"has bucket directory {bucket_path!r}, which is not one of {store.path}")
    paths = store.external_paths
    for f in files:
        if not isinstance(f, DataFileMeta):
            refuse(f"holds a {type(f).__name__}, not a DataFileMeta")
        for name in (f.file_name, *f.extra_files):
            problem = name_problem(name)
            if problem is not None:
                refuse(f"names file {name!r} in {bucket_path}, which is {problem}")
        if f.external_path is not None and (
            paths is None or external_io_path(store, f.external_path) is None
        ):
            refuse(
                f"names data file {f.file_name!r} at external path {f.external_path!r}, which "
                "is under none of the table's 'data-file.external-paths'"
            )
    index_dir = posixpath.join(store.path, "index")
    for path in deletion_paths:
        if not isinstance(path, str) or not (
            is_inside(path, index_dir)
            or any(is_inside(path, root) for root in external_roots(store))
            or external_io_path(store, path) is not None
        ):
            refuse(
                f"reads a deletion vector from {path!r}, which is neither in {index_dir} nor "
                "under the table's 'data-file.external-paths'"
            )


def check_commit_messages(store: FileStore, messages: Iterable[object]) -> None:
    """Refuse messages that name anything but the table's own files.

    Every data file name, extra file, index file name and deletion vector's data file must be
    a bare name, every external path must lie under one of :func:`external_roots`, and the
    partition must decode with the table's partition types. Raises InvalidCommitMessageError
    naming the table, the file and the value at the first offence; called before a commit or an
    abort touches the store, so a refused call writes and deletes nothing.
    """
    roots = external_roots(store)
    for m in messages:
        if not isinstance(m, CommitMessage):
            _refuse(
                store,
                "commit messages must be CommitMessage objects from prepare_commit(), got a "
                f"{type(m).__name__}",
            )
        where = _check_bucket(store, m)
        for increment, fields in (
            (m.data_increment, ("new_files", "deleted_files", "changelog_files")),
            (m.compact_increment, ("compact_before", "compact_after", "changelog_files")),
        ):
            if not isinstance(increment, DataIncrement | CompactIncrement):
                _refuse(store, f"{where} holds a {type(increment).__name__}, not an increment")
            for attr in fields:
                for f in getattr(increment, attr):
                    _check_data_file(store, roots, f, f"{where} {attr}")
            for attr in ("new_index_files", "deleted_index_files"):
                for i in getattr(increment, attr):
                    _check_index_file(store, roots, i, f"{where} {attr}")


def _check_bucket(store: FileStore, m: CommitMessage) -> str:
    """Where the message's files live, for messages; refuses a bucket or partition that does
    not name one of the table's directories."""
    if not isinstance(m.bucket, numbers.Integral) or isinstance(m.bucket, bool):
        _refuse(store, f"a commit message's bucket is {m.bucket!r}, not an int")
    try:
        deserialize_with_arity(m.partition, store.partition_types)
    except (PaimonError, ValueError, TypeError, IndexError, struct.error) as e:
        _refuse(store, f"a commit message's partition {m.partition!r} does not decode: {e}")
    return f"a commit message (bucket {m.bucket}):"


def _check_data_file(store: FileStore, roots: Sequence[str], f: object, where: str) -> None:
    if not isinstance(f, DataFileMeta):
        _refuse(store, f"{where} holds a {type(f).__name__}, not a DataFileMeta")
    _check_name(store, f.file_name, f"{where} data file")
    extras = f.extra_files
    if not isinstance(extras, tuple | list):
        _refuse(store, f"{where} data file {f.file_name!r} has extra_files {extras!r}")
    for extra in extras:
        _check_name(store, extra, f"{where} extra file of data file {f.file_name!r}")
    _check_external(store, roots, f.external_path, f"{where} data file {f.file_name!r}")


def _check_index_file(store: FileStore, roots: Sequence[str], i: object, where: str) -> None:
    if not isinstance(i, IndexFileMeta):
        _refuse(store, f"{where} holds a {type(i).__name__}, not an IndexFileMeta")
    _check_name(store, i.file_name, f"{where} {i.index_type} index file")
    for r in i.dv_ranges or ():
        _check_name(
            store, r.data_file_name, f"{where} deletion vector of index file {i.file_name!r}"
        )
    _check_external(store, roots, i.external_path, f"{where} index file {i.file_name!r}")


def _check_name(store: FileStore, name: object, what: str) -> None:
    problem = name_problem(name)
    if problem is not None:
        _refuse(store, f"{what} {name!r} is {problem}")


def _check_external(store: FileStore, roots: Sequence[str], path: object, what: str) -> None:
    if path is None:
        return
    if not isinstance(path, str) or external_io_path(store, path) is None:
        configured = ", ".join(roots) or "none is configured"
        _refuse(
            store,
            f"{what} has external path {path!r}, which is not under the table's "
            f"'data-file.external-paths' ({configured})",
        )


def _refuse(store: FileStore, what: str) -> NoReturn:
    raise InvalidCommitMessageError(
        f"Table '{store.name}': {what}; nothing was committed or deleted."
    )
