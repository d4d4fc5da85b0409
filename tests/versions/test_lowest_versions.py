"""The lowest-versions leg inside ``make test``: a fast part of the core tests (Arrow, numpy and
pandas at work: merge engines, compaction's sort keys, types, BinaryRow, buckets, append and
primary-key tables, Avro codecs, pandas in and out) runs in .venv-pyspark41, where pyspark,
pyarrow, numpy, pandas, fastavro and sqlglot are the lowest pyproject.toml admits
(tests/versions/pyspark41-requirements.txt). ``make test-matrix`` runs the whole suites there.

The property tests that take seconds each are left to ``make test-matrix``. A missing venv skips,
except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LEG = ROOT / ".venv-pyspark41" / "bin" / "python"
PINS = Path(__file__).resolve().parent / "pyspark41-requirements.txt"
SUBSET = [
    "tests/unit/merge",
    "tests/unit/compact",
    "tests/unit/types",
    "tests/unit/spec",
    "tests/unit/bucket",
    "tests/integration/test_append_table.py",
    "tests/integration/test_pk_table.py",
    "tests/integration/test_avro_snappy.py",
]
SLOW_PROPERTIES = [
    "tests/unit/merge/test_merge_properties.py",
    "tests/unit/spec/test_binary_row.py::test_round_trip_equals_pyarrow_as_py",
]
CHECKED = ("pyspark", "pyarrow", "numpy", "pandas", "fastavro", "sqlglot")


def _leg() -> Path:
    if not LEG.exists():
        where = f"{LEG} is missing (make pyspark-matrix builds it)"
        if os.environ.get("CI") == "true":
            pytest.fail(where)
        pytest.skip(where)
    return LEG


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(LEG)
    return env


def test_the_leg_runs_the_pinned_lowest_versions() -> None:
    python = _leg()
    code = (
        "import importlib.metadata as m, json; "
        f"print(json.dumps({{n: m.version(n) for n in {list(CHECKED)!r}}}))"
    )
    done = subprocess.run(
        [str(python), "-c", code], cwd=ROOT, env=_env(), capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    installed = json.loads(done.stdout)
    pins = dict(
        (canonicalize_name(n), v)
        for n, v in re.findall(r"^([\w.-]+)==(\S+)$", PINS.read_text(), re.M)
    )
    assert installed == {n: pins[n] for n in CHECKED}


def test_core_subset_passes_at_the_lowest_versions() -> None:
    python = _leg()
    args = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow"]
    args += [a for p in SLOW_PROPERTIES for a in ("--deselect", p)]
    done = subprocess.run(
        [*args, *SUBSET],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, f"{summary}\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) > 200, summary
