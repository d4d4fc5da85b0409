"""What the fuzz tests share: outcome counts, a sandbox with a sentinel beside the warehouse,
the checks every example ends with, and values compared the way the table stores them.

Every example's outcome is counted per test ("ok", or the class of the PaimonError that ended
it); tests/fuzz/conftest.py writes the counts to a JSON summary when the session ends.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import shutil
import struct
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import HealthCheck, settings

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog
from paimon_pyspark.errors import PaimonError

T = TypeVar("T")

COUNTS: defaultdict[str, Counter[str]] = defaultdict(Counter)
"""test name -> outcome -> examples; read by the conftest's session-finish hook."""


def fuzz_settings(max_examples: int) -> settings:
    """Settings of every fuzz test: no deadline (a commit fsyncs), no example database (the
    runs must not depend on what an earlier run found), and no health check on the slow or
    filtered examples a file-writing test has."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


class Outcome:
    """The outcome of one example: the first PaimonError a step raised, else ok."""

    def __init__(self, test: str) -> None:
        self.test = test
        self.first_error: str | None = None

    def step(self, fn: Callable[[], T]) -> tuple[T | None, PaimonError | None]:
        """Run one public call: its result, or the PaimonError it raised. Any other exception
        propagates, which fails the example: every failure must be a PaimonError."""
        try:
            return fn(), None
        except PaimonError as e:
            if self.first_error is None:
                self.first_error = type(e).__name__
            return None, e

    def record(self) -> None:
        COUNTS[self.test][self.first_error or "ok"] += 1


# --- sandbox ----------------------------------------------------------------------------------


@dataclass
class Sandbox:
    """``root/warehouse`` and ``root/sentinel``; nothing but these two may ever be under root,
    and the sentinel's files must never change."""

    root: Path
    warehouse: Path
    sentinel: Path
    catalog: FileSystemCatalog
    sentinel_digest: str = ""
    counter: Iterator[int] = field(default_factory=lambda: iter(range(10**9)))

    @staticmethod
    def create(root: Path) -> Sandbox:
        warehouse, sentinel = root / "warehouse", root / "sentinel"
        catalog = CatalogFactory.create({"warehouse": str(warehouse)})
        catalog.create_database("db")
        box = Sandbox(root, warehouse, sentinel, catalog)
        box._plant_sentinel()
        box.sentinel_digest = tree_digest(sentinel)
        return box

    def _plant_sentinel(self) -> None:
        (self.sentinel / "inner").mkdir(parents=True)
        (self.sentinel / "victim.parquet").write_bytes(b"not paimon's")
        (self.sentinel / "inner" / "snapshot-1").write_text("{}")

    def fresh_name(self, prefix: str) -> str:
        return f"{prefix}{next(self.counter)}"

    def inside(self, path: str) -> bool:
        """Whether ``path`` (normalized, not resolved) stays under the sandbox root: a name
        that would lead anywhere else is never handed to the catalog."""
        root = os.path.normpath(self.root)
        return os.path.normpath(path).startswith(root + os.sep)

    @contextmanager
    def contained(self) -> Iterator[None]:
        """Around one example: afterwards nothing was created or changed outside the
        warehouse. A breach is undone even when the example raised, so the next example (and
        hypothesis's replay while shrinking) starts clean."""
        try:
            yield
        finally:
            extra = sorted(set(os.listdir(self.root)) - {"sentinel", "warehouse"})
            changed = tree_digest(self.sentinel) != self.sentinel_digest
            for name in extra:
                path = self.root / name
                shutil.rmtree(path) if path.is_dir() else path.unlink()
            if changed:
                shutil.rmtree(self.sentinel, ignore_errors=True)
                self._plant_sentinel()
        assert not extra, f"created beside the warehouse: {extra}"
        assert not changed, "the sentinel beside the warehouse changed"


SHM = "/dev/shm"


@contextmanager
def sandbox(tmp_path_factory: Any, name: str) -> Iterator[Sandbox]:
    """A sandbox on tmpfs (/dev/shm) where there is one: every commit fsyncs its files, and the
    fuzz tests are about what a call does, not about durability, which a disk makes cost ~10 ms
    per file. Else under pytest's temporary directory."""
    if os.path.isdir(SHM) and os.access(SHM, os.W_OK):
        root = Path(tempfile.mkdtemp(prefix=f"paimon-{name}-", dir=SHM))
        try:
            yield Sandbox.create(root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
    else:
        yield Sandbox.create(tmp_path_factory.mktemp(name))


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        h.update(os.path.relpath(dirpath, root).encode() + b"/\0")
        for name in sorted(filenames):
            h.update(name.encode() + b"\0")
            h.update(Path(dirpath, name).read_bytes())
    return h.hexdigest()


def table_path(box: Sandbox, name: str) -> Path:
    return box.warehouse / "db.db" / name


# --- snapshots --------------------------------------------------------------------------------

_SNAPSHOT = re.compile(r"^snapshot-(\d+)$")


def snapshot_files(table_dir: Path) -> dict[int, bytes]:
    """Every ``snapshot-<id>`` file of a table, by id (leftover temporary files excluded)."""
    out: dict[int, bytes] = {}
    directory = table_dir / "snapshot"
    if directory.is_dir():
        for name in os.listdir(directory):
            m = _SNAPSHOT.match(name)
            if m:
                out[int(m.group(1))] = (directory / name).read_bytes()
    return out


def check_snapshots(table_dir: Path, ignore: frozenset[int] = frozenset()) -> list[int]:
    """No partial snapshot: every snapshot file (but those in ``ignore``, damaged on purpose)
    is a whole JSON document naming its own id, and the ids have no gap. Returns the ids."""
    files = snapshot_files(table_dir)
    for sid, data in files.items():
        if sid in ignore:
            continue
        assert data, f"snapshot-{sid} is empty"
        doc = json.loads(data)
        assert doc["id"] == sid, f"snapshot-{sid} holds id {doc['id']}"
    ids = sorted(files)
    assert ids == list(range(ids[0], ids[0] + len(ids))) if ids else True, f"id gap: {ids}"
    return ids


# --- logged tracebacks ------------------------------------------------------------------------


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info:
            self.records.append(record)


@contextmanager
def logged_tracebacks() -> Iterator[list[logging.LogRecord]]:
    """The warnings with a traceback that paimon_pyspark logs inside the block: a failure
    swallowed after a commit (expiry) that the caller never sees as an error."""
    handler = _Tracebacks()
    logger = logging.getLogger("paimon_pyspark")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


# --- rows as the table stores them ------------------------------------------------------------


def canon(value: Any) -> Any:
    """A hashable, exactly comparable form: floats by their bits (every NaN one value, -0.0
    apart from 0.0), nested values as tuples."""
    if isinstance(value, float):
        return ("nan",) if math.isnan(value) else ("f", struct.pack(">d", value))
    if isinstance(value, dict):
        return ("row", tuple((k, canon(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return tuple(canon(v) for v in value)
    if isinstance(value, Decimal):
        return ("d", str(value))
    return value


def _plain(column: pa.ChunkedArray | pa.Array) -> list[Any]:
    t = column.type
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_date(t):
        return pc.cast(column, pa.int32() if t.bit_width == 32 else pa.int64()).to_pylist()
    return column.to_pylist()


def canon_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    """Rows of ``table`` in canon form, temporal values as their integers (no datetime
    conversion, whose range is smaller than the stored one)."""
    columns = [_plain(table.column(i)) for i in range(table.num_columns)]
    return [tuple(canon(c[r]) for c in columns) for r in range(table.num_rows)]


def read_all(table: FileStoreTable) -> pa.Table:
    rb = table.new_read_builder()
    plan = rb.new_scan().plan()
    for split in plan.splits():
        for path in split.file_paths:
            assert os.path.normpath(path).startswith(os.path.normpath(table.path) + os.sep), path
    return rb.new_read().to_arrow(plan.splits())
