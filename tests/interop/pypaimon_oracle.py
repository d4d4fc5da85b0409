"""Second compatibility oracle: pypaimon 2.1, the Apache Paimon project's own Python engine.

pypaimon pins pyarrow<20 while the product needs pyarrow 26, so it runs in a separate venv
(``.venv-pypaimon``, built by ``make test``) behind ``pypaimon_driver.py``. Rows cross the
process boundary as Arrow IPC files, which both pyarrow versions read and write losslessly.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc

PROJECT_ROOT = Path(__file__).resolve().parents[2]
DRIVER = Path(__file__).resolve().with_name("pypaimon_driver.py")
DEFAULT_PYTHON = PROJECT_ROOT / ".venv-pypaimon" / "bin" / "python"
PYTHON_ENV_VAR = "PYPAIMON_PYTHON"


def pypaimon_python() -> Path:
    """The interpreter of the pypaimon venv; ``PYPAIMON_PYTHON`` overrides it for experiments."""
    override = os.environ.get(PYTHON_ENV_VAR)
    return Path(override) if override else DEFAULT_PYTHON


def _write_ipc(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_ipc(path: Path) -> pa.Table:
    # read_all copies out of the file, so the temporary directory can go right after.
    with pa.OSFile(str(path), "rb") as source:
        return pyarrow.ipc.open_file(source).read_all()


class PypaimonOracle:
    """Creates, writes and reads Paimon tables with pypaimon, one subprocess per call.

    Each call is a fresh process so no pypaimon state (caches, commit users) leaks between
    test steps, the same way two independent engines would meet on a shared warehouse.
    """

    def __init__(self, python: Path | str | None = None, timeout: float = 300.0) -> None:
        self.python = Path(python) if python is not None else pypaimon_python()
        self.timeout = timeout

    def read(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        snapshot_id: int | None = None,
        projection: Sequence[str] | None = None,
    ) -> pa.Table:
        """Read ``db.t`` (latest snapshot, or ``snapshot_id``) with pypaimon's batch reader."""
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            output = Path(tmp) / "result.arrow"
            self._run(
                {
                    "cmd": "read",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "snapshot_id": snapshot_id,
                    "projection": None if projection is None else list(projection),
                    "output": str(output),
                }
            )
            return _read_ipc(output)

    def create_table(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        schema: pa.Schema,
        partition_keys: Sequence[str] = (),
        primary_keys: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Create ``db.t`` (and its database) from an Arrow schema via pypaimon's type mapping.

        Returns the driver's reply; ``reply["fields"]`` lists ``[name, paimon_type]`` as
        pypaimon stored them, which shows how an Arrow type was mapped. pypaimon's mapping has
        traps: ``large_binary`` becomes BLOB (rejected without row tracking), every Arrow time
        type becomes ``TIME(0)``, and CHAR/VARCHAR/MULTISET cannot be expressed at all.
        """
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            schema_path = Path(tmp) / "schema.arrow"
            _write_ipc(schema_path, schema.empty_table())
            return self._run(
                {
                    "cmd": "create",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "schema": str(schema_path),
                    "partition_keys": list(partition_keys),
                    "primary_keys": list(primary_keys),
                    "options": {str(k): str(v) for k, v in (options or {}).items()},
                }
            )

    def write(
        self,
        warehouse: str | os.PathLike[str],
        table: str,
        data: pa.Table,
        commits: int = 1,
        overwrite: bool = False,
        static_partition: Mapping[str, Any] | None = None,
    ) -> list[int]:
        """Write ``data`` in ``commits`` consecutive slices, one snapshot each.

        Returns the snapshot id after each commit. ``overwrite`` applies to every commit
        (pypaimon's default is dynamic partition overwrite); ``static_partition`` narrows it.
        """
        partition = None if static_partition is None else dict(static_partition)
        with tempfile.TemporaryDirectory(prefix="pypaimon-oracle-") as tmp:
            data_path = Path(tmp) / "data.arrow"
            _write_ipc(data_path, data)
            reply = self._run(
                {
                    "cmd": "write",
                    "warehouse": os.fspath(warehouse),
                    "table": table,
                    "data": str(data_path),
                    "commits": commits,
                    "mode": "overwrite" if overwrite else "append",
                    "static_partition": partition,
                }
            )
        return [int(snapshot) for snapshot in reply["snapshots"]]

    def _run(self, command: dict[str, Any]) -> dict[str, Any]:
        """Run one driver command; any failure becomes an AssertionError with pypaimon's stderr."""
        argv = [str(self.python), str(DRIVER), json.dumps(command)]
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=self.timeout, check=False
            )
        except subprocess.TimeoutExpired as error:
            # TimeoutExpired carries bytes even with text=True.
            raw = error.stderr or b""
            stderr = raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
            raise AssertionError(
                f"pypaimon {command['cmd']} timed out after {self.timeout}s\n"
                f"command: {json.dumps(command)}\nstderr:\n{stderr}"
            ) from error
        if done.returncode != 0:
            raise AssertionError(
                f"pypaimon {command['cmd']} failed (exit {done.returncode})\n"
                f"command: {json.dumps(command)}\nstderr:\n{_describe_stderr(done.stderr)}"
            )
        lines = done.stdout.strip().splitlines()
        try:
            reply: dict[str, Any] = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError) as error:
            raise AssertionError(
                f"pypaimon {command['cmd']} printed no JSON reply\nstdout:\n{done.stdout}\n"
                f"stderr:\n{done.stderr}"
            ) from error
        return reply


def _describe_stderr(stderr: str) -> str:
    """Put pypaimon's traceback first; keep any log lines printed before the JSON error."""
    lines = stderr.rstrip().splitlines()
    try:
        payload = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        return stderr
    logs = "\n".join(lines[:-1])
    message = f"{payload.get('type')}: {payload.get('error')}\n{payload.get('traceback', '')}"
    return f"{message}\n{logs}" if logs else message


def pypaimon_oracle_fixture() -> PypaimonOracle:
    """Body of the session fixture: a missing venv is a broken setup, never a skip."""
    import pytest

    python = pypaimon_python()
    if not python.exists():
        pytest.fail(
            f"pypaimon venv interpreter not found at {python}. Run `make test` (it builds "
            f".venv-pypaimon from tests/interop/pypaimon-requirements.txt), or point "
            f"{PYTHON_ENV_VAR} at a Python with pypaimon==2.1.0 installed.",
            pytrace=False,
        )
    return PypaimonOracle(python)
