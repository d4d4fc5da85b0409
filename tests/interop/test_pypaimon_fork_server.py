"""The pypaimon fork server keeps the isolation and failure reports of one process per call.

The server imports pypaimon once; these tests pin what that must not change: every call runs in
a process of its own that is gone when the call returns, a hung call is killed at the timeout
and reported, and the server outlives both, serving the next call.
"""

from __future__ import annotations

import errno
import os
import signal
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pypaimon_oracle import PypaimonOracle

pytestmark = pytest.mark.pypaimon

SCHEMA = pa.schema([pa.field("id", pa.int64())])


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_every_call_runs_in_its_own_process_that_exits(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"

    first = pypaimon_oracle.create_table(warehouse, "db.a", SCHEMA)
    second = pypaimon_oracle.create_table(warehouse, "db.b", SCHEMA)

    assert first["pid"] != second["pid"]
    assert os.getpid() not in (first["pid"], second["pid"])
    assert not _process_exists(first["pid"])
    assert not _process_exists(second["pid"])


def test_a_hung_call_is_killed_at_the_timeout_and_the_next_call_works(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    warehouse = tmp_path / "warehouse"
    pypaimon_oracle.create_table(warehouse, "db.t", SCHEMA)
    # A FIFO in place of the schema file blocks pypaimon's open() until a writer comes.
    schema_file = warehouse / "db.db" / "t" / "schema" / "schema-0"
    schema_file.unlink()
    os.mkfifo(schema_file)
    monkeypatch.setattr(pypaimon_oracle, "timeout", 2.0)

    with pytest.raises(AssertionError, match=r"pypaimon read timed out after 2.0s"):
        pypaimon_oracle.read(warehouse, "db.t")

    # No process holds the FIFO open for reading any more: the hung child was killed.
    with pytest.raises(OSError) as no_reader:
        os.open(schema_file, os.O_WRONLY | os.O_NONBLOCK)
    assert no_reader.value.errno == errno.ENXIO
    monkeypatch.undo()
    pypaimon_oracle.create_table(warehouse, "db.u", SCHEMA)
    pypaimon_oracle.write(warehouse, "db.u", pa.table({"id": [7]}, schema=SCHEMA))
    assert pypaimon_oracle.read(warehouse, "db.u").column("id").to_pylist() == [7]


def test_a_child_killed_by_a_signal_is_reported_with_its_exit_code(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "warehouse"
    pypaimon_oracle.create_table(warehouse, "db.t", SCHEMA)
    schema_file = warehouse / "db.db" / "t" / "schema" / "schema-0"
    schema_file.unlink()
    os.mkfifo(schema_file)
    server_pid = pypaimon_oracle._fork_server().pid
    failures: list[AssertionError] = []

    def read() -> None:
        try:
            pypaimon_oracle.read(warehouse, "db.t")
        except AssertionError as error:
            failures.append(error)

    reader = threading.Thread(target=read)
    reader.start()
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children")
    deadline = time.monotonic() + 60
    while not children.read_text().split() and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = children.read_text().split()
    os.kill(int(child), signal.SIGKILL)
    reader.join(60)

    assert not reader.is_alive()
    assert len(failures) == 1
    assert "pypaimon read failed (exit -9)" in str(failures[0])
