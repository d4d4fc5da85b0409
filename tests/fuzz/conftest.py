"""Fuzz-suite session hooks: the examples each fuzz test ran, by outcome, and its seconds,
written as JSON to ``$FUZZ_SUMMARY`` (default /tmp/fuzz-summary.json) when the session ends."""

from __future__ import annotations

import json
import os

import pytest
from tests.fuzz.fuzz_support import COUNTS

_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.nodeid.startswith("tests/fuzz/"):
        _SECONDS[report.nodeid] = round(report.duration, 2)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not COUNTS:
        return
    summary = {
        "examples": sum(sum(c.values()) for c in COUNTS.values()),
        "seconds": round(sum(_SECONDS.values()), 2),
        "tests": {name: dict(sorted(c.items())) for name, c in sorted(COUNTS.items())},
        "test_seconds": dict(sorted(_SECONDS.items())),
    }
    path = os.environ.get("FUZZ_SUMMARY", "/tmp/fuzz-summary.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
