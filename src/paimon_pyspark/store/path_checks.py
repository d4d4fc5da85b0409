"""File names and paths that come from outside the engine, checked before they are used.

A table names each of its files relative to one of its directories (a data file and its extra
files to their bucket directory, an index file to ``index/``, a manifest to ``manifest/``), so
a name that is not bare (a separator, ``.`` or ``..``, empty, a NUL) reaches some other
directory, inside the table or outside it, and an external path can be anywhere. Java takes
both as they come; we check them where they enter:

- commit messages (CommitMessageSerializer bytes, objects a user passes to ``TableCommit``, a
  Spark job's staging records): :func:`check_commit_messages` refuses the whole call with
  InvalidCommitMessageError before anything is written or deleted;
- manifests and snapshots on disk (another engine's, or tampered with): a read refuses a data
  file whose name is not bare (CorruptTableError), and expiry deletes only bare names and paths
  inside the table (:func:`is_inside`), skipping any other entry with a warning;
- external paths (``data-file.external-paths``): a commit message's or a manifest's must lie
  under one of the table's configured roots (store/external_paths.py); a read raises
  ExternalPathError for any other, expiry skips it.
"""

from __future__ import annotations

import numbers
import posixpath
import struct
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, NoReturn

from paimon_pyspark.errors import ExternalPathError, InvalidCommitMessageError, PaimonError
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage, CompactIncrement, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import IndexFileMeta

if TYPE_CHECKING:
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
