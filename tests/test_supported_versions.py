"""The README's "Supported versions" table, pyproject.toml's ranges and the venvs that test them
agree: every runtime dependency and pyspark has a row whose range is pyproject's; the lowest
version a row says it is tested on is the range's lower bound and the pin of the venv that tests
it: pyspark's is the 3.5 line's (tests/versions/pyspark35-requirements.txt), the other packages'
the lowest-versions leg's (tests/versions/pyspark41-requirements.txt, whose pyspark is the
lowest 4.x line); the highest is the test venv's (constraints.txt). pyspark's row lists exactly
the pyspark of every matrix venv and of the test venv.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
VERSIONS = ROOT / "tests" / "versions"
LOWEST_LEG = VERSIONS / "pyspark41-requirements.txt"
LOWEST_PYSPARK = VERSIONS / "pyspark35-requirements.txt"
CONSTRAINTS = ROOT / "constraints.txt"
ROW = re.compile(r"^\|\s*([^|]+?)\s*\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|$")


def _rows() -> dict[str, tuple[SpecifierSet, list[Version]]]:
    """Name -> (range, versions tested on), from the README's section."""
    text = (ROOT / "README.md").read_text()
    assert "\n## Supported versions\n" in text, "README.md has no 'Supported versions' section"
    section = text.split("\n## Supported versions\n", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, tuple[SpecifierSet, list[Version]]] = {}
    for line in section.splitlines():
        m = ROW.match(line)
        if m:
            name = canonicalize_name(m.group(1).split()[0])
            tested = [Version(v.strip()) for v in m.group(3).split(",")]
            rows[name] = (SpecifierSet(m.group(2)), tested)
    return rows


def _pins(path: Path) -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in path.read_text().splitlines():
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==")
            pins[canonicalize_name(name.split("[")[0])] = Version(version.strip())
    return pins


def _declared() -> dict[str, SpecifierSet]:
    """Runtime dependencies and pyspark (one range in every extra that names it)."""
    out: dict[str, SpecifierSet] = {
        canonicalize_name(Requirement(r).name): Requirement(r).specifier
        for r in PROJECT["dependencies"]
    }
    pyspark = {
        str(Requirement(r).specifier)
        for extra, reqs in PROJECT["optional-dependencies"].items()
        if extra != "test"
        for r in reqs
        if canonicalize_name(Requirement(r).name) == "pyspark"
    }
    assert len(pyspark) == 1, f"the extras name pyspark with different ranges: {pyspark}"
    out["pyspark"] = SpecifierSet(pyspark.pop())
    return out


def _lower_bound(spec: SpecifierSet) -> Version:
    (low,) = [Version(s.version) for s in spec if s.operator == ">="]
    return low


def test_readme_lists_every_declared_range() -> None:
    rows = _rows()
    declared = _declared()
    assert set(declared) | {"python"} == set(rows)
    for name, spec in declared.items():
        assert rows[name][0] == spec, f"{name}: README {rows[name][0]}, pyproject {spec}"
    assert rows["python"][0] == SpecifierSet(PROJECT["requires-python"])


def test_lowest_and_highest_tested_versions_are_the_legs_pins() -> None:
    rows = _rows()
    highest = _pins(CONSTRAINTS)
    lowest = {**_pins(LOWEST_LEG), "pyspark": _pins(LOWEST_PYSPARK)["pyspark"]}
    for name, spec in _declared().items():
        tested = rows[name][1]
        assert tested == sorted(tested), f"{name}: list the versions oldest first"
        assert all(v in spec for v in tested), f"{name}: {tested} outside {spec}"
        assert tested[0] == _lower_bound(spec) == lowest[name], (
            f"{name}: lowest tested {tested[0]}, range {spec}, lowest pin {lowest.get(name)}"
        )
        assert tested[-1] == highest[name], f"{name}: newest tested {tested[-1]} vs constraints"
    lines = [_pins(path)["pyspark"] for path in VERSIONS.glob("pyspark*-requirements.txt")]
    assert sorted({*lines, highest["pyspark"]}) == rows["pyspark"][1], (
        f"pyspark: README lists {rows['pyspark'][1]}, the venvs pin {sorted(lines)} and "
        f"{highest['pyspark']}"
    )
    leg = _pins(LOWEST_LEG)["pyspark"]
    assert leg == min(v for v in lines if v.major >= 4), (
        f"the lowest-versions leg pins pyspark {leg}, not the lowest 4.x line"
    )


def test_python_tested_is_the_one_the_venvs_are_made_with() -> None:
    made_with = re.search(r"^PYTHON \?= python(\d+\.\d+)$", (ROOT / "Makefile").read_text(), re.M)
    assert made_with is not None
    assert _rows()["python"][1] == [Version(made_with.group(1))]
    assert Version(made_with.group(1)) in SpecifierSet(PROJECT["requires-python"])
