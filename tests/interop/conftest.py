"""Session fixtures for the compatibility oracles (Java Paimon and pypaimon), built by ``make``."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
JAVA_DIR = PROJECT_ROOT / ".cache" / "java"
PAIMON_JAVA_VERSION = "1.4.2"
PAIMON_JAR = JAVA_DIR / f"paimon-bundle-{PAIMON_JAVA_VERSION}.jar"
ORACLE_CLASSES = JAVA_DIR / "classes"
ORACLE_CLASS_FILE = ORACLE_CLASSES / "paimonoracle" / "PaimonOracle.class"
# one per pytest process: make test runs two at once
ORACLE_JVM_LOG = JAVA_DIR / f"oracle-jvm-{os.getpid()}.log"

# Test modules here import the helper as a top-level module (tests/ has no __init__.py).
if str(Path(__file__).parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).parent))

from java_oracle import JavaOracle  # noqa: E402
from pypaimon_oracle import PypaimonOracle, pypaimon_oracle_fixture  # noqa: E402


@pytest.fixture(scope="session")
def pypaimon_oracle() -> Iterator[PypaimonOracle]:
    """pypaimon 2.1 in its own venv; a missing venv fails (see ``pypaimon_oracle_fixture``)."""
    oracle = pypaimon_oracle_fixture()
    try:
        yield oracle
    finally:
        oracle.close()


@pytest.fixture(scope="session")
def java_oracle() -> Iterator[JavaOracle]:
    """One JVM per session; a missing build is a failure, never a skip, so CI cannot go green."""
    missing = [str(p) for p in (PAIMON_JAR, ORACLE_CLASS_FILE) if not p.is_file()]
    if missing:
        pytest.fail(
            f"Java Paimon oracle not built (missing {', '.join(missing)}); run `make test`",
            pytrace=False,
        )
    oracle = JavaOracle(PAIMON_JAR, ORACLE_CLASSES, log_path=ORACLE_JVM_LOG)
    try:
        yield oracle
    finally:
        oracle.close()
