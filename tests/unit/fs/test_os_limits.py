"""The operating system's limits reach the user as StoreError (an OSError and a PaimonError)
that keeps the errno and names the path, met for real: a 300-character name, a full device
(/dev/full), a process out of file descriptors, a read-only directory (not as root, whom
permissions do not stop). A missing or existing file keeps the errors internal code relies on.
"""

from __future__ import annotations

import errno
import os
import resource
import stat
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import CorruptTableError, PaimonError, StoreError
from paimon_pyspark.fs.local import LocalFileIO

LONG = "x" * 300


def _assert_store_error(info: pytest.ExceptionInfo[StoreError], code: int, path: str) -> None:
    e = info.value
    assert isinstance(e, OSError) and isinstance(e, PaimonError)
    assert e.errno == code, e
    assert e.filename == path and path in str(e)


@pytest.mark.parametrize(
    "call",
    [
        lambda io, p: io.write_bytes(p, b"x"),
        lambda io, p: io.open_output(p),
        lambda io, p: io.mkdirs(os.path.join(p, "sub")),
        lambda io, p: io.read_bytes(p),
        lambda io, p: io.open_input(p),
        lambda io, p: io.mtime(p),
        lambda io, p: io.list_names(p),
        lambda io, p: io.try_write_atomic(p, b"x"),
        lambda io, p: io.overwrite_hint(p, "1"),
    ],
    ids=[
        "write_bytes",
        "open_output",
        "mkdirs",
        "read_bytes",
        "open_input",
        "mtime",
        "list_names",
        "try_write_atomic",
        "overwrite_hint",
    ],
)
def test_a_name_too_long_is_a_store_error_naming_the_path(
    tmp_path: Path, call: Callable[[LocalFileIO, str], object]
) -> None:
    path = str(tmp_path / LONG)
    with pytest.raises(StoreError) as info:
        call(LocalFileIO(), path)
    assert info.value.errno == errno.ENAMETOOLONG
    assert LONG in str(info.value)
    assert os.listdir(tmp_path) == []  # no temp file left behind either


def test_a_partition_value_too_long_for_a_directory_name(catalog: FileSystemCatalog) -> None:
    """Through the public API: the partition directory ``dt=<300 chars>`` cannot exist."""
    schema = pa.schema([("id", pa.int64()), ("dt", pa.string())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, partition_keys=["dt"]))
    table = catalog.get_table("db.t")
    builder = table.new_batch_write_builder()
    with pytest.raises(StoreError) as info, builder.new_write() as write:
        write.write_arrow(pa.table({"id": [1], "dt": [LONG]}, schema=schema))
        write.prepare_commit()
    assert info.value.errno == errno.ENAMETOOLONG and f"dt={LONG}" in str(info.value)
    assert table.snapshot_manager.latest() is None


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("streamed", [False, True], ids=["write_bytes", "open_output"])
def test_no_space_left_is_a_store_error(streamed: bool) -> None:
    """/dev/full answers every write with ENOSPC, as a full disk does."""
    io = LocalFileIO()
    with pytest.raises(StoreError) as info:
        if streamed:
            out = io.open_output("/dev/full")
            out.write(b"x" * (2 << 20))  # more than the buffer: the write reaches the device
            out.close()
        else:
            io.write_bytes("/dev/full", b"x")
    _assert_store_error(info, errno.ENOSPC, "/dev/full")


def test_too_many_open_files_is_a_store_error(tmp_path: Path) -> None:
    io = LocalFileIO()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    opened = []
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 8, hard))
    try:
        with pytest.raises(StoreError) as info:
            for i in range(64):
                opened.append(io.open_output(str(tmp_path / f"f{i}")))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        for out in opened:
            out.close()
    _assert_store_error(info, errno.EMFILE, str(tmp_path / f"f{len(opened)}"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores permissions")
def test_a_read_only_table_directory_is_a_store_error(catalog: FileSystemCatalog) -> None:
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema))
    table = catalog.get_table("db.t")
    os.chmod(table.path, stat.S_IRUSR | stat.S_IXUSR)
    try:
        builder = table.new_batch_write_builder()
        with pytest.raises(StoreError) as info, builder.new_write() as write:
            write.write_arrow(pa.table({"id": [1]}, schema=schema))
            builder.new_commit().commit(write.prepare_commit())
    finally:
        os.chmod(table.path, stat.S_IRWXU)
    assert info.value.errno == errno.EACCES and table.path in str(info.value)


def test_missing_and_existing_files_keep_their_errors(tmp_path: Path) -> None:
    io = LocalFileIO()
    missing = str(tmp_path / "missing")
    with pytest.raises(CorruptTableError, match="missing"):
        io.read_bytes(missing)
    with pytest.raises(FileNotFoundError):
        io.mtime(missing)
    with pytest.raises(FileNotFoundError):
        io.open_input(missing)
    assert io.list_names(missing) == [] and io.list_dirs(missing) == []
    (tmp_path / "file").write_bytes(b"")
    assert io.list_names(str(tmp_path / "file")) == []  # not a directory: nothing under it
    assert io.try_write_atomic(str(tmp_path / "one"), b"1")
    assert not io.try_write_atomic(str(tmp_path / "one"), b"2")
    assert (tmp_path / "one").read_bytes() == b"1"
    assert sorted(os.listdir(tmp_path)) == ["file", "one"]
    io.delete_quietly(str(tmp_path / LONG))  # quiet stays quiet, whatever the error
