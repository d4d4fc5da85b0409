"""The venvs `make test` builds beside the test venv (mk/pyspark_matrix.mk): a test that needs
one skips when it is missing, except under CI (``CI=true``), where a missing venv is a failure."""

from __future__ import annotations

import os

import pytest


def missing(where: str) -> None:
    """Skip (or, under CI, fail) the test with ``where``: what is missing and what builds it."""
    if os.environ.get("CI") == "true":
        pytest.fail(where)
    pytest.skip(where)
