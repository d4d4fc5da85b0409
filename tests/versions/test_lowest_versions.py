"""The lowest-versions leg inside ``make test``, in .venv-pyspark41, where pyspark, pyarrow, numpy,
pandas, fastavro and sqlglot are the lowest pyproject.toml admits
(tests/versions/pyspark41-requirements.txt) and the package is its wheel with the ``spark`` extra,
installed by pip after them (mk/pyspark_matrix.mk):

- that install changed nothing in the venv (and, in every other pyspark line, changed nothing
  that was there and added only the package's dependencies);
- a fast part of the core tests (Arrow, numpy and pandas at work: merge engines, compaction's
  sort keys, types, BinaryRow, buckets, append and primary-key tables, Avro codecs, pandas in
  and out) passes there.

Spark at these versions: tests/versions/test_pyspark_versions.py runs every door (both writes,
reads with filters, options and time travel, primary keys, a stream from our source to our sink)
in one SparkSession per matrix venv. ``make test-matrix`` runs the whole suites there. A missing
venv skips, except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tests.venvs import missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LEG = ROOT / ".venv-pyspark41" / "bin" / "python"
HERE = Path(__file__).resolve().parent
PINS = HERE / "pyspark41-requirements.txt"
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
CHECKED = (
    "pyspark",
    "pyarrow",
    "numpy",
    "pandas",
    "fastavro",
    "sqlglot",
    "pyroaring",
    "datasketches",
    "xxhash",
)


def _leg() -> Path:
    if not LEG.exists():
        missing(f"{LEG} is missing (make pyspark-matrix builds it)")
    return LEG


def _env(python: Path = LEG) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(python)
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


def _freeze(path: Path) -> dict[str, str]:
    return {
        canonicalize_name(n): v
        for n, v in re.findall(r"^([\w.-]+)==(\S+)$", path.read_text(), re.M)
    }


def _spark_extra_closure(venv: Path) -> set[str]:
    """The installed distributions ``paimon-pyspark[spark]`` requires in ``venv``, directly or
    through others (markers evaluated for this interpreter, which made the venv)."""
    (site,) = (venv / "lib").glob("python*/site-packages")
    dists = {
        canonicalize_name(d.metadata["Name"]): d
        for d in importlib.metadata.distributions(path=[str(site)])
    }
    todo, seen = [("paimon-pyspark", "spark")], set()
    while todo:
        name, extra = todo.pop()
        if (name, extra) in seen or name not in dists:
            continue
        seen.add((name, extra))
        for text in dists[name].requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": extra}):
                dep = canonicalize_name(req.name)
                todo += [(dep, ""), *((dep, e) for e in req.extras)]
    return {name for name, _ in seen} - {"paimon-pyspark"}


@pytest.mark.parametrize(
    "line", sorted(p.name.split("-")[0][7:] for p in HERE.glob("pyspark*-requirements.txt"))
)
def test_installing_the_wheel_with_its_spark_extra_kept_the_venvs_pyspark(line: str) -> None:
    """``pip install 'paimon-pyspark[spark]'`` into a venv that has a pyspark in range keeps
    that pyspark and every other package there; in the lowest-versions leg, where everything is
    pinned, it changes nothing. The other lines pin pyspark (and py4j, and the 3.5 line pytest)
    alone, as a cluster's venv may: pyspark pins no pyarrow, numpy or pandas (its ``sql`` extra
    names them, and pip installs no extra unasked), so the install adds the package's
    dependencies, and only those."""
    venv = ROOT / f".venv-pyspark{line}"
    if not (venv / ".wheel").exists():
        missing(f"{venv} has no installed wheel (make pyspark-matrix installs it)")
    before, after = _freeze(venv / "freeze-before.txt"), _freeze(venv / "freeze-after.txt")
    pins = _freeze(HERE / f"pyspark{line}-requirements.txt")
    assert before["pyspark"] == after["pyspark"] == pins["pyspark"]
    assert before.get("py4j") == after.get("py4j") == pins["py4j"]
    assert "paimon-pyspark" not in before
    assert {n: before.get(n) for n in pins} == pins
    if venv.name == LEG.parents[1].name:
        assert after == before  # (make test-matrix may have added its packages to both)
    else:
        assert {n: after.get(n) for n in before} == before, "the install changed a package"
        added = set(after) - set(before)
        assert added <= _spark_extra_closure(venv), added - _spark_extra_closure(venv)
    meta = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "show", "-f", "paimon-pyspark"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert meta.returncode == 0, meta.stderr
    assert "Editable project location" not in meta.stdout, "the leg runs the wheel, not src/"


def _pytest_in_leg(tests: list[str], deselect: list[str], marks: str, timeout: int) -> str:
    return pytest_in_venv(_leg(), tests, deselect, marks, timeout)


def pytest_in_venv(
    python: Path, tests: list[str], deselect: list[str], marks: str, timeout: int
) -> str:
    """Run ``tests`` with pytest in the venv of ``python``, on the package's wheel installed
    there (not src/); its summary line, or a failure with the end of its output."""
    where = subprocess.run(
        [str(python), "-c", "import paimon_pyspark as p; print(p.__file__)"],
        cwd=ROOT,
        env=_env(python),
        capture_output=True,
        text=True,
        check=False,
    )
    assert where.returncode == 0, where.stderr
    assert Path(where.stdout.strip()).is_relative_to(python.parents[1]), where.stdout
    args = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", marks]
    args += [a for p in deselect for a in ("--deselect", p)]
    done = subprocess.run(
        [*args, *tests],
        cwd=ROOT,
        env=_env(python),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    assert done.returncode == 0, f"{summary}\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    return summary


def test_core_subset_passes_at_the_lowest_versions() -> None:
    summary = _pytest_in_leg(SUBSET, SLOW_PROPERTIES, "not slow", timeout=600)
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) > 200, summary
