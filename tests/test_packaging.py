"""The package as published: ``python -m build`` makes a wheel and an sdist that pass
``twine check``; the wheel's metadata declares pyproject.toml's ranges and extras, never an exact
pin; the package imports, with its version, from the unpacked wheel; and the wheel installed by
pip into a fresh venv with nothing else (.venv-wheel, mk/pyspark_matrix.mk) brings only its
runtime dependencies, imports, and answers ``paimon-pyspark --help``.

The build runs on a copy of the files the package is made of (no build/ or egg-info in the
repo) and without isolation: the build-system's pinned setuptools and wheel are in the test
venv (constraints.txt), so no download happens here.
"""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from tests.venvs import missing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("tree")
    for name in ("pyproject.toml", "README.md", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(
        ROOT / "src",
        tree / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"),
    )
    out = tmp_path_factory.mktemp("dist")
    _run(sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), ".", cwd=tree)
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, f"expected one {pattern} in {dist}, found {found}"
    return found[0]


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/METADATA")]
        return email.message_from_bytes(zf.read(name))


def test_wheel_and_sdist_pass_twine_check(dist: Path) -> None:
    wheel = _one(dist, "paimon_pyspark-*.whl")
    sdist = _one(dist, "paimon_pyspark-*.tar.gz")
    out = _run(sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist), cwd=dist)
    assert out.count("PASSED") == 2, out


def test_wheel_metadata_declares_the_ranges_and_extras_of_pyproject(dist: Path) -> None:
    meta = _metadata(_one(dist, "paimon_pyspark-*.whl"))
    assert meta["Version"] == PROJECT["version"]
    assert meta["Requires-Python"] == PROJECT["requires-python"]
    extras = PROJECT["optional-dependencies"]
    assert set(meta.get_all("Provides-Extra") or []) == set(extras)
    assert {"spark", "s3", "cli", "ray", "duckdb"} <= set(extras)

    declared = [Requirement(r) for r in meta.get_all("Requires-Dist") or []]
    runtime = [r for r in declared if r.marker is None]
    assert {str(r) for r in runtime} == {str(Requirement(r)) for r in PROJECT["dependencies"]}
    for extra, reqs in extras.items():
        in_wheel = {
            (canonicalize_name(r.name), str(r.specifier))
            for r in declared
            if r.marker is not None and r.marker.evaluate({"extra": extra})
        }
        expected = {
            (canonicalize_name(Requirement(r).name), str(Requirement(r).specifier)) for r in reqs
        }
        assert in_wheel == expected, extra
    pinned = [
        str(r)
        for r in runtime + [Requirement(r) for k, v in extras.items() if k != "test" for r in v]
        if any(s.operator in ("==", "===") for s in r.specifier)
    ]
    assert pinned == [], f"a library pins no exact version outside its test extra: {pinned}"


def test_the_package_imports_from_the_wheel(dist: Path, tmp_path: Path) -> None:
    """With only the unpacked wheel ahead of the test venv's site-packages (which gives the
    dependencies), the package, its version and its command line's help come from the wheel."""
    wheel = _one(dist, "paimon_pyspark-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(tmp_path)
        assert "paimon_pyspark/py.typed" in zf.namelist()
        (ep,) = [n for n in zf.namelist() if n.endswith(".dist-info/entry_points.txt")]
        assert "paimon-pyspark = paimon_pyspark.cli:main" in zf.read(ep).decode()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(tmp_path)
    out = _run(
        sys.executable,
        "-c",
        "import paimon_pyspark as p; print(p.__file__); print(p.__version__)",
        cwd=tmp_path,
        env=env,
    ).split()
    assert Path(out[0]).is_relative_to(tmp_path), out
    assert out[1] == PROJECT["version"]
    usage = _run(
        sys.executable,
        "-c",
        "import sys; from paimon_pyspark.cli import main; sys.argv[0] = 'paimon-pyspark'; main()",
        "--help",
        cwd=tmp_path,
        env=env,
    )
    assert "paimon-pyspark" in usage and "usage" in usage.lower(), usage


WHEEL_VENV = ROOT / ".venv-wheel"


def _wheel_venv() -> Path:
    if not (WHEEL_VENV / ".stamp").exists():
        missing(f"{WHEEL_VENV} is missing (make .venv-wheel/.stamp builds it)")
    return WHEEL_VENV / "bin"


def test_the_wheel_alone_in_a_fresh_venv_imports_and_answers_help(tmp_path: Path) -> None:
    bin_dir = _wheel_venv()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    frozen = _run(str(bin_dir / "python"), "-m", "pip", "freeze", cwd=tmp_path, env=env)
    installed = {
        canonicalize_name(Requirement(line.split(" @ ")[0]).name)
        for line in frozen.splitlines()
        if line.strip()
    }
    runtime = {canonicalize_name(Requirement(r).name) for r in PROJECT["dependencies"]}
    assert runtime | {"paimon-pyspark"} <= installed
    assert not installed & {"pyspark", "rich", "obstore", "ray", "duckdb"}, installed

    code = "import paimon_pyspark as p; print(p.__file__); print(p.__version__)"
    where, version = _run(str(bin_dir / "python"), "-c", code, cwd=tmp_path, env=env).split()
    assert Path(where).is_relative_to(WHEEL_VENV) and version == PROJECT["version"]

    usage = _run(str(bin_dir / "paimon-pyspark"), "--help", cwd=tmp_path, env=env)
    assert usage.startswith("usage: paimon-pyspark") and "load" in usage and "sql" in usage
    # a command that needs Spark says which extra to install, as one line with exit code 2
    done = subprocess.run(
        [str(bin_dir / "paimon-pyspark"), "tables", "--warehouse", str(tmp_path / "w")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done
    assert done.stderr.strip() == (
        "error: paimon-pyspark tables needs the command line's extra (rich is missing): "
        "pip install 'paimon-pyspark[cli]'"
    ), done.stderr
