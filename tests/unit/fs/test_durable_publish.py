"""Durable publish on local disk, seen from the system calls a real write makes.

A subprocess creates a table and commits to it twice, under strace when it can trace (else
with os.fsync, os.link and os.replace wrapped to record each call and its file before making
it: real I/O either way). The order shows what a crash or a power loss can leave: every file a
snapshot references is fsynced before the snapshot's link, the snapshot's bytes are fsynced
before the link makes them visible, and its directory after. Also: reads stay robust where a
crash of another writer (or a disk) left an empty or garbled file.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError

WRITER = """
import sys
import pyarrow as pa
from paimon_pyspark import CatalogFactory, Schema

catalog = CatalogFactory.create({"warehouse": sys.argv[1]})
catalog.create_database("db")
schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("dt", pa.string())])
catalog.create_table(
    "db.t", Schema.from_pyarrow_schema(schema, ["dt"], ["id", "dt"], {"bucket": "2"})
)
table = catalog.get_table("db.t")
for i in range(2):
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table({"id": [i, i + 10], "dt": ["a", "b"]}, schema=schema))
        builder.new_commit().commit(write.prepare_commit())
"""

RECORDER = """
import os, sys

events = open(sys.argv[2], "w", buffering=1)
real_fsync, real_link, real_replace = os.fsync, os.link, os.replace

def fsync(fd):
    events.write(f"fsync\\t{os.readlink(f'/proc/self/fd/{fd}')}\\n")
    return real_fsync(fd)

def link(src, dst, **kw):
    real_link(src, dst, **kw)
    events.write(f"link\\t{os.path.abspath(src)}\\t{os.path.abspath(dst)}\\n")

def replace(src, dst, **kw):
    real_replace(src, dst, **kw)
    events.write(f"rename\\t{os.path.abspath(src)}\\t{os.path.abspath(dst)}\\n")

os.fsync, os.link, os.replace = fsync, link, replace
sys.argv = sys.argv[:2]
"""


@dataclass(frozen=True)
class Call:
    op: str  # fsync, link or rename
    path: str
    target: str = ""


def _strace_works() -> bool:
    strace = shutil.which("strace")
    if strace is None:
        return False
    done = subprocess.run([strace, "-o", os.devnull, "true"], capture_output=True)
    return done.returncode == 0


_STRACE_LINE = re.compile(
    r"^(?:\d+\s+)?(?P<op>fsync|fdatasync|link|linkat|rename|renameat2?)\((?P<args>.*)\)\s+=\s+0"
)


def _parse_strace(text: str) -> Iterator[Call]:
    """Completed calls in completion order (a call interrupted by another thread is put back
    together from its ``<unfinished ...>`` and ``resumed>`` lines)."""
    pending: dict[str, str] = {}
    for line in text.splitlines():
        pid = line.split(None, 1)[0]
        if line.endswith("<unfinished ...>"):
            pending[pid] = line[: -len("<unfinished ...>")].rstrip()
            continue
        resumed = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", line)
        if resumed:
            line = pending.pop(resumed.group(1), "") + resumed.group(2)
        m = _STRACE_LINE.match(line)
        if m is None:
            continue
        op, args = m.group("op"), m.group("args")
        if op in ("fsync", "fdatasync"):
            path = re.search(r"<(.*)>", args)
            assert path is not None, line
            yield Call("fsync", path.group(1))
        else:
            src, dst = re.findall(r'"([^"]*)"', args)[:2]
            yield Call("link" if op.startswith("link") else "rename", src, dst)


def _run_writer(tmp_path: Path) -> tuple[list[Call], Path]:
    warehouse = tmp_path / "wh"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if _strace_works():
        log = tmp_path / "strace.log"
        trace = "fsync,fdatasync,link,linkat,rename,renameat,renameat2"
        cmd = ["strace", "-f", "-y", "-qq", "-o", str(log), "-e", f"trace={trace}"]
        cmd += [sys.executable, "-c", WRITER, str(warehouse)]
        subprocess.run(cmd, check=True, env=env, cwd=tmp_path, timeout=120)
        calls = list(_parse_strace(log.read_text()))
    else:
        log = tmp_path / "calls.log"
        code = RECORDER + WRITER
        cmd = [sys.executable, "-c", code, str(warehouse), str(log)]
        subprocess.run(cmd, check=True, env=env, cwd=tmp_path, timeout=120)
        calls = [Call(*line.split("\t")) for line in log.read_text().splitlines()]
    table = warehouse / "db.db" / "t"
    return [c for c in calls if c.path.startswith(str(warehouse))], table


def _first(calls: list[Call], op: str, path: str | Path, target: str | Path = "") -> int:
    for i, c in enumerate(calls):
        if c.op == op and c.path == str(path) and (not target or c.target == str(target)):
            return i
    raise AssertionError(f"no {op} of {path} {target} in {calls}")


def _published(calls: list[Call], target: Path) -> tuple[int, str]:
    """The index of the link or rename that made ``target`` visible, and its temp file."""
    for i, c in enumerate(calls):
        if c.op in ("link", "rename") and c.target == str(target):
            return i, c.path
    raise AssertionError(f"{target} was never published: {calls}")


def test_every_publish_is_durable_before_and_after_it_becomes_visible(tmp_path: Path) -> None:
    calls, table = _run_writer(tmp_path)
    published = [
        table / "schema" / "schema-0",
        table / "snapshot" / "snapshot-1",
        table / "snapshot" / "snapshot-2",
    ]  # not LATEST: a hint, ignored when a crash leaves it empty (test below)
    for target in published:
        at, tmp = _published(calls, target)
        assert Path(tmp).parent == target.parent and Path(tmp).name.endswith(".tmp")
        assert _first(calls, "fsync", tmp) < at, f"{target}: bytes not durable before visible"
        after = [c for c in calls[at + 1 :] if c.op == "fsync"]
        assert Call("fsync", str(target.parent)) in after, f"{target}: directory not synced"

    snapshot_1, _ = _published(calls, table / "snapshot" / "snapshot-1")
    snapshot_2, _ = _published(calls, table / "snapshot" / "snapshot-2")
    synced_data = [c for c in calls[:snapshot_1] if c.op == "fsync" and "/data-" in c.path]
    assert len(synced_data) == 2  # the first commit's two files, before its snapshot
    data = sorted(table.glob("dt=*/bucket-*/data-*.parquet"))
    manifests = sorted((table / "manifest").glob("manifest-*"))
    assert len(data) == 4 and len(manifests) >= 4
    for path in [*data, *manifests]:
        assert _first(calls, "fsync", path) < snapshot_2, f"{path} not durable before commit"
    # a new directory (the table's, a partition's, a bucket's) is durable in its parent
    for directory in (table, table / "dt=a", table / "dt=a" / "bucket-0", table / "snapshot"):
        assert _first(calls, "fsync", directory.parent) < snapshot_2


@pytest.fixture
def table_dir(catalog: FileSystemCatalog) -> Iterator[Path]:
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    for i in range(2):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": [i]}, schema=schema))
            builder.new_commit().commit(write.prepare_commit())
    yield Path(table.path)


@pytest.mark.parametrize(
    "hint", [b"", b"   ", b"garbage", b"\xff\xfe", b"99999999999999999999", b"-1"]
)
def test_a_broken_latest_hint_is_ignored(
    catalog: FileSystemCatalog, table_dir: Path, hint: bytes
) -> None:
    (table_dir / "snapshot" / "LATEST").write_bytes(hint)
    table = catalog.get_table("db.t")
    assert table.snapshot_manager.latest_id() == 2
    latest = table.snapshot_manager.latest()
    assert latest is not None and latest.id == 2
    rb = table.new_read_builder()
    assert sorted(rb.new_read().to_arrow(rb.new_scan().plan().splits())["id"].to_pylist()) == [0, 1]


def test_an_empty_snapshot_file_is_a_corrupt_table_naming_it(
    catalog: FileSystemCatalog, table_dir: Path
) -> None:
    empty = table_dir / "snapshot" / "snapshot-2"
    empty.write_bytes(b"")
    table = catalog.get_table("db.t")
    with pytest.raises(CorruptTableError, match=re.escape(f"{empty} is empty")):
        table.new_read_builder().new_scan().plan()


WRITE_BIG = """
import sys
from paimon_pyspark.fs.local import LocalFileIO

with LocalFileIO().open_output(sys.argv[1]) as out:
    for i in range(7):
        out.write(bytes([i]) * (512 * 1024 + 7))
"""


@pytest.mark.skipif(not _strace_works(), reason="needs strace")
def test_a_data_file_is_handed_to_the_disk_while_it_is_written(tmp_path: Path) -> None:
    """Writeback of a long file starts every megabyte (sync_file_range), and its close still
    ends with the fsync that makes it durable."""
    path = tmp_path / "data-0.parquet"
    log = tmp_path / "strace.log"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = ["strace", "-f", "-y", "-qq", "-o", str(log), "-e", "trace=sync_file_range,fsync"]
    subprocess.run([*cmd, sys.executable, "-c", WRITE_BIG, str(path)], check=True, env=env)
    calls = [line for line in log.read_text().splitlines() if str(path) in line]
    ranges = [c for c in calls if "sync_file_range(" in c]
    assert len(ranges) >= 2, calls
    assert all(c.endswith("= 0") for c in ranges), ranges
    assert "fsync(" in calls[-1], calls
    expected = b"".join(bytes([i]) * (512 * 1024 + 7) for i in range(7))
    assert path.read_bytes() == expected
