"""Data files written outside the table directory: ``data-file.external-paths``.

Mirrors org.apache.paimon.AbstractFileStore#createExternalPaths (which roots a table writes
under, by ``data-file.external-paths.strategy`` and ``.specific-fs``),
org.apache.paimon.fs.ExternalPathProvider with RoundRobinExternalPathProvider,
WeightedExternalPathProvider and EntropyInjectExternalPathProvider (which root and directory
each new file goes to), and
DataFilePathFactory#toPath (a file whose manifest entry has an external path is read there).

A new data file of bucket ``<partition>/bucket-<n>`` goes to ``<root>/<partition>/bucket-<n>/``
and its manifest entry records the full path with its scheme (Java writes ``file:/...`` for a
local root); its separate index files lie beside it. A read follows the recorded path, but only
if it lies under one of the roots the table's options configure now: any other path in a
manifest (another engine's mistake, or tampering) raises :class:`ExternalPathError` and
nothing is read from it; expiry skips it (store/path_checks.py, issue 14's hardening).

Roots must be on the table's own filesystem (the local disk for a local table, the same object
store scheme for an object-store table): one FileIO serves the table. ``entropy-inject`` puts
each file in directories named by bits of its name's murmur3 hash
(EntropyInjectExternalPathProvider).
"""

from __future__ import annotations

import os
import posixpath
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from paimon_pyspark.errors import (
    CorruptTableError,
    ExternalPathError,
    OptionError,
    UnsupportedOptionError,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.murmur import murmur3_32
from paimon_pyspark.store.path_checks import name_problem

EXTERNAL_PATHS = "data-file.external-paths"
EXTERNAL_PATHS_STRATEGY = "data-file.external-paths.strategy"
EXTERNAL_PATHS_SPECIFIC_FS = "data-file.external-paths.specific-fs"
EXTERNAL_PATHS_WEIGHTS = "data-file.external-paths.weights"
STRATEGIES = ("none", "specific-fs", "round-robin", "entropy-inject", "weight-robin")


def _where(table: str) -> str:
    return f"Table '{table}': " if table else ""


def _scheme(uri: str) -> str | None:
    head = uri.split("/", 1)[0]
    return head[:-1].lower() if head.endswith(":") and len(head) > 1 else None


def fs_scheme(file_io: FileIO) -> str:
    """The scheme of ``file_io``'s paths: ``file`` locally, else the object store's."""
    return "file" if file_io.is_local else str(getattr(file_io, "scheme", ""))


def _to_path(scheme: str, uri: str) -> str | None:
    """``uri`` as a scheme-less path of a FileIO of ``scheme``, or None when it is on another
    filesystem, has no scheme or is not text a path can be."""
    if _scheme(uri) != scheme or "\0" in uri:
        return None
    if scheme == "file":
        return posixpath.normpath("/" + uri[len("file:") :].lstrip("/"))
    if "://" not in uri:
        return None
    return posixpath.normpath(uri.split("://", 1)[1])


def io_path(file_io: FileIO, uri: str) -> str | None:
    """``uri`` as a path of ``file_io`` (scheme-less), or None when it is on another
    filesystem or has no scheme."""
    return _to_path(fs_scheme(file_io), uri)


def uri_of(file_io: FileIO, path: str) -> str:
    """The text a manifest records for ``path`` of ``file_io``: ``file:/abs`` locally (as Java's
    Path prints a local path), ``scheme://bucket/key`` on an object store."""
    if file_io.is_local:
        return "file:" + path
    return f"{getattr(file_io, 'scheme', '')}://{path}"


def _inside(path: str, root: str) -> bool:
    return path.startswith(root.rstrip("/") + "/") and path != root


@dataclass(frozen=True)
class ExternalPaths:
    """The roots new data files go to, and the roots an external path read back must be under
    (both: the table's configured roots as paths of its FileIO)."""

    table: str
    table_path: str
    roots: tuple[str, ...]
    """Io paths of the roots new files go to (after ``specific-fs`` filtering), in order;
    empty for strategy ``none``."""
    allowed: tuple[str, ...]
    """Io paths of every configured root on the table's filesystem: where reads may go."""
    strategy: str
    scheme: str
    """The table filesystem's scheme (``file`` locally): the only one an external path may
    have."""
    weights: tuple[int, ...] | None = None

    def check(self, f: DataFileMeta) -> str:
        """The io path of ``f``'s external path; ExternalPathError when it is outside the
        configured roots."""
        assert f.external_path is not None
        return self.check_uri(f.external_path, f"data file {f.file_name!r}")

    def check_uri(self, uri: str, what: str) -> str:
        """The io path of ``uri``; ExternalPathError unless it is under a configured root."""
        path = _to_path(self.scheme, uri) if isinstance(uri, str) else None
        if path is None or not any(_inside(path, r) for r in self.allowed):
            configured = ", ".join(self.allowed) or "none is configured"
            raise ExternalPathError(
                f"{_where(self.table)}{what} has external path {uri!r}, which is not under the "
                f"table's '{EXTERNAL_PATHS}' ({configured}); it is not read."
            )
        return path

    def provider(self, bucket_path: str) -> ExternalPathProvider | None:
        """Where the new files of the bucket at ``bucket_path`` go (one per bucket writer, as
        Java makes one per DataFilePathFactory); None: in the bucket directory."""
        if not self.roots:
            return None
        rel = os.path.relpath(bucket_path, self.table_path)
        return ExternalPathProvider(self, rel)


class ExternalPathProvider:
    """RoundRobinExternalPathProvider (starting at a random root, as Java's); for
    ``weight-robin`` with two roots or more and weights, WeightedExternalPathProvider; for
    ``entropy-inject``, EntropyInjectExternalPathProvider (roots in turn from the second, the
    file in directories named by bits of its name's murmur3 hash)."""

    def __init__(self, paths: ExternalPaths, relative_bucket_path: str) -> None:
        self.paths = paths
        self.rel = relative_bucket_path
        entropy = paths.strategy == "entropy-inject"
        self.position = 0 if entropy else random.randrange(len(paths.roots))

    def next_dir(self, file_name: str) -> str:
        """The directory (io path) of the next new data file, ``file_name``."""
        roots = self.paths.roots
        weights = self.paths.weights
        if self.paths.strategy == "weight-robin" and weights is not None and len(roots) >= 2:
            root = random.choices(roots, weights=weights)[0]
        else:
            self.position = (self.position + 1) % len(roots)
            root = roots[self.position]
        if self.paths.strategy == "entropy-inject":
            return posixpath.join(root, self.rel, entropy_dirs(file_name))
        return posixpath.join(root, self.rel)


def entropy_dirs(file_name: str) -> str:
    """EntropyInjectExternalPathProvider#computeHash: the low 20 bits of the name's hash in
    binary, as directories of 4, 4, 4 and 8 digits."""
    bits = format(murmur3_32(file_name.encode("utf-8")) & 0xFFFFF, "020b")
    return f"{bits[0:4]}/{bits[4:8]}/{bits[8:12]}/{bits[12:]}"


def external_paths_of(
    options: Mapping[str, str], file_io: FileIO, table_path: str, table: str = ""
) -> ExternalPaths | None:
    """The table's external roots, or None when ``data-file.external-paths`` is unset.

    New files go to the roots Java's createExternalPaths picks (none for strategy ``none``);
    reads may follow a manifest's path under any configured root on the table's filesystem.
    OptionError where Java refuses (a root without a scheme, ``specific-fs`` without its
    scheme or matching no root, a weight that is not a positive int); UnsupportedOptionError
    for writing to a root on another filesystem than the table's.
    """
    raw = options.get(EXTERNAL_PATHS)
    strategy = (options.get(EXTERNAL_PATHS_STRATEGY) or "none").strip().lower()
    if strategy not in STRATEGIES:
        raise OptionError(
            f"{_where(table)}option '{EXTERNAL_PATHS_STRATEGY}' = "
            f"'{options.get(EXTERNAL_PATHS_STRATEGY)}' must be one of {', '.join(STRATEGIES)}."
        )
    if not raw:
        return None
    specific = options.get(EXTERNAL_PATHS_SPECIFIC_FS)
    if strategy == "specific-fs" and specific is None:
        raise OptionError(
            f"{_where(table)}option '{EXTERNAL_PATHS_SPECIFIC_FS}' must be set when "
            f"'{EXTERNAL_PATHS_STRATEGY}' is specific-fs (as in Java)."
        )
    roots: list[str] = []
    allowed: list[str] = []
    for text in raw.split(","):
        uri = text.strip()
        scheme = _scheme(uri)
        if scheme is None and strategy != "none":
            raise OptionError(
                f"{_where(table)}option '{EXTERNAL_PATHS}': '{uri}' has no scheme (such as "
                "file:/ or s3://), which Java requires."
            )
        path = io_path(file_io, uri)
        if path is not None:
            allowed.append(path)
        if strategy == "none" or (
            strategy == "specific-fs" and scheme != (specific or "").strip().lower()
        ):
            continue
        if path is None:
            raise UnsupportedOptionError(
                f"{_where(table)}option '{EXTERNAL_PATHS}': '{uri}' is on another filesystem "
                f"than the table ({file_io.describe(table_path)}); paimon_pyspark writes and "
                "reads external data files only on the table's own filesystem."
            )
        roots.append(path)
    if strategy != "none" and not roots:
        raise OptionError(
            f"{_where(table)}option '{EXTERNAL_PATHS}' = '{raw}' leaves no external path for "
            f"'{EXTERNAL_PATHS_SPECIFIC_FS}' = '{specific}' (as Java: they must not be empty)."
        )
    paths = ExternalPaths(
        table,
        table_path,
        tuple(roots),
        tuple(allowed),
        strategy,
        fs_scheme(file_io),
        _weights(options, table),
    )
    check_weights(paths)
    return paths


def _weights(options: Mapping[str, str], table: str) -> tuple[int, ...] | None:
    raw = options.get(EXTERNAL_PATHS_WEIGHTS)
    if raw is None:
        return None
    out = []
    for part in raw.split(","):
        try:
            w = int(part.strip())
        except ValueError:
            w = 0
        if w <= 0 or w > 2**31 - 1:
            raise OptionError(
                f"{_where(table)}option '{EXTERNAL_PATHS_WEIGHTS}' = '{raw}': every weight must "
                "be a positive int."
            )
        out.append(w)
    return tuple(out)


def check_weights(paths: ExternalPaths) -> None:
    """Java's WeightedExternalPathProvider: as many weights as roots."""
    if (
        paths.strategy == "weight-robin"
        and paths.weights is not None
        and len(paths.roots) >= 2
        and len(paths.weights) != len(paths.roots)
    ):
        raise OptionError(
            f"{_where(paths.table)}option '{EXTERNAL_PATHS_WEIGHTS}' has {len(paths.weights)} "
            f"weights for {len(paths.roots)} external paths; they must be as many."
        )


def data_file_path(
    paths: ExternalPaths | None, bucket_path: str, f: DataFileMeta, table: str = ""
) -> str:
    """Where data file ``f`` of the bucket at ``bucket_path`` is read: its checked external
    path, or its name in the bucket directory (Java's DataFilePathFactory#toPath). Every reader
    and compaction makes its paths here, so a name that is not bare (from a manifest or a
    split) is refused here too (store/path_checks.py), before anything is opened."""
    problem = name_problem(f.file_name)
    if problem is not None:
        raise CorruptTableError(
            f"{_where(table)}data file name {f.file_name!r} of {bucket_path} is {problem}; it "
            "is not read."
        )
    if f.external_path is None:
        return f"{bucket_path}/{f.file_name}"
    if paths is None:
        raise ExternalPathError(
            f"{_where(table)}data file {f.file_name!r} has external path {f.external_path!r}, "
            f"but the table configures no '{EXTERNAL_PATHS}'; it is not read."
        )
    return paths.check(f)


def planned_file_path(bucket_path: str, f: DataFileMeta) -> str:
    """Where a planned data file lies, for callers holding a split but not its store: its
    external path (already checked by the scan that planned it) without the scheme, or its
    name in the bucket directory."""
    if f.external_path is None:
        return f"{bucket_path}/{f.file_name}"
    scheme = _scheme(f.external_path) or ""
    return _to_path(scheme, f.external_path) or f.external_path


def extra_file_paths(file_path: str, f: DataFileMeta) -> Sequence[str]:
    """The extra files (separate indexes) of ``f``, beside it wherever it lies; a name that is
    not bare is refused as :func:`data_file_path` refuses one."""
    parent = posixpath.dirname(file_path)
    for x in f.extra_files:
        problem = name_problem(x)
        if problem is not None:
            raise CorruptTableError(
                f"Extra file {x!r} of data file {file_path} is {problem}; it is not read."
            )
    return [posixpath.join(parent, x) for x in f.extra_files]
