"""The same script, the same results (issue 42, item 4): tests/doors_script.py on a classic
pyspark 4.3 session, on a Spark Connect client (the run tests/connect/test_connect_doors.py
checks) and on a classic pyspark 3.5 session, where the package is installed as its wheel
(``.venv-pyspark35``, built by ``make test``).

Every step all three can run returns what doors_expected.py computes, so the three equal each
other. pyspark 3.5 has no Python Data Source: its steps through ``format("paimon")`` and
Structured Streaming must raise ``UnsupportedPysparkError`` naming what is missing and what to
use instead, and every other step must work there.

The 3.5 session is a subprocess started when the Connect run starts (conftest.py
``doors_elsewhere``), and the classic 4.3 run is the tests' own ``spark`` session, in this
process while the Connect client runs (conftest.py ``doors_on_connect``), with the state other
tests leave on it: the three run at once, and no third driver starts and warms up a JVM."""

from __future__ import annotations

from typing import Any

import pytest
from tests.connect.connect_server import PYSPARK35, DoorsElsewhere, DoorsRun
from tests.connect.doors_expected import EXPECTED, diff
from tests.venvs import missing

pytestmark = pytest.mark.slow


def _unexpected_errors(found: dict[str, Any], allowed: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        name: f"{step['error'][0]}: {step['error'][1][:600]}"
        for name, step in found["steps"].items()
        if "error" in step and name not in allowed
    }


def _on_connect(request: pytest.FixtureRequest) -> dict[str, Any]:
    """The Connect run's steps, asked for once this run's own checks passed (a failing Connect
    run then fails its own test, not this one's checks first)."""
    steps: dict[str, Any] = request.getfixturevalue("doors_on_connect").results["steps"]
    return steps


def test_classic_43_and_connect_give_the_same_results(
    doors_on_connect: DoorsRun, request: pytest.FixtureRequest
) -> None:
    classic = doors_on_connect.classic
    assert (classic["connect"], classic["datasource_api"]) == (False, True)
    assert classic["jvm_in_process"] is True  # the check the Connect run must fail
    assert classic["pyspark"].startswith("4."), classic["pyspark"]
    assert not _unexpected_errors(classic), _unexpected_errors(classic)
    assert diff(classic["steps"], EXPECTED) == {}
    assert classic["steps"] == _on_connect(request)


def test_pyspark35_gives_the_same_results_or_refuses_by_name(
    doors_elsewhere: DoorsElsewhere, request: pytest.FixtureRequest
) -> None:
    if doors_elsewhere.pyspark35 is None:
        missing(f"{PYSPARK35} is missing; `make .venv-pyspark35/.wheel` builds it")
    found = doors_elsewhere.pyspark35.result()
    assert found["pyspark"].startswith("3.5."), found["pyspark"]
    assert (found["connect"], found["datasource_api"]) == (False, False)
    refused = tuple(found["datasource_steps"])
    assert not _unexpected_errors(found, refused), _unexpected_errors(found, refused)
    for name in refused:
        error = found["steps"][name].get("error")
        assert error is not None, f"{name} ran on pyspark 3.5"
        kind, message = error
        assert kind == "UnsupportedPysparkError", (name, error)
        # what is missing, and what to use instead
        assert "DataSource" in message and "paimon_pyspark.spark.read" in message, message
    shared = {name: want for name, want in EXPECTED.items() if name not in refused}
    assert diff(found["steps"], shared) == {}
    on_connect = _on_connect(request)
    assert {name: found["steps"][name] for name in shared} == {
        name: on_connect[name] for name in shared
    }
