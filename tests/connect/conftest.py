"""One real Spark Connect server for the session (tests/connect/connect_server.py), and the
doors script run once through it.

Why the client is another process: a user's Connect client holds no JVM, and a Connect session
changes its whole process: building one sets ``SPARK_CONNECT_MODE_ENABLED``, after which pyspark
routes its functions and DataFrame helpers to their Connect forms, which would break pytest's
classic session in the Spark half and blur what a Connect-only process does.
``ConnectServer.run_client`` runs each client script in a fresh interpreter that connects with
``SparkSession.builder.remote(server.url)``; tests/doors_script.py reports that it never started
a JVM there.

Every test in this directory runs Spark (in the server's JVM, or a classic driver of its own
in a subprocess), so each is marked ``uses_spark`` and goes with the Spark half of
``make test``. The server starts once (about 10 s) for all of them, with the first test that
asks, and stops at the end.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from tests.connect.connect_server import (
    DOORS_SCRIPT,
    PROJECT_ROOT,
    PYSPARK35,
    ConnectServer,
    DoorsElsewhere,
    DoorsRun,
    Pending,
    start_connect_server,
    stop_process,
)
from tests.doors_script import results as doors_results
from tests.interop.java_oracle import JavaOracle

HERE = Path(__file__).resolve().parent
JAVA_DIR = PROJECT_ROOT / ".cache" / "java"
PAIMON_JAR = JAVA_DIR / "paimon-bundle-1.4.2.jar"
ORACLE_CLASSES = JAVA_DIR / "classes"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.uses_spark)


@pytest.fixture(scope="session")
def connect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ConnectServer]:
    """The session's Spark Connect server on 127.0.0.1 (see the module docstring)."""
    server = start_connect_server(tmp_path_factory.mktemp("connect-server"))
    try:
        yield server
    finally:
        stop_process(server.proc)


@pytest.fixture(scope="session")
def java_oracle() -> Iterator[JavaOracle]:
    """Java Paimon 1.4.2 in its own JVM, as tests/interop/conftest.py starts it (fixtures there
    are not seen here); a missing build fails, never skips."""
    class_file = ORACLE_CLASSES / "paimonoracle" / "PaimonOracle.class"
    absent = [str(p) for p in (PAIMON_JAR, class_file) if not p.is_file()]
    if absent:
        pytest.fail(f"Java Paimon oracle not built (missing {', '.join(absent)}); run `make test`")
    oracle = JavaOracle(
        PAIMON_JAR, ORACLE_CLASSES, log_path=JAVA_DIR / f"oracle-jvm-connect-{os.getpid()}.log"
    )
    try:
        yield oracle
    finally:
        oracle.close()


@pytest.fixture(scope="session")
def doors_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DoorsElsewhere]:
    """tests/doors_script.py on a classic pyspark 3.5 session (a driver of its own, in a
    warehouse of its own), started in the background so that it runs while the Connect client
    does. The classic 4.3 run needs no driver of its own (``doors_on_connect``)."""
    pyspark35 = None
    if PYSPARK35.is_file():
        workdir = tmp_path_factory.mktemp("doors-pyspark35")
        pyspark35 = Pending([PYSPARK35, DOORS_SCRIPT, "local", workdir], workdir, str(PYSPARK35))
    try:
        yield DoorsElsewhere(pyspark35)
    finally:
        if pyspark35 is not None:
            pyspark35.stop()


@pytest.fixture(scope="session")
def doors_on_connect(
    doors_elsewhere: DoorsElsewhere,
    connect_server: ConnectServer,
    spark: SparkSession,
    tmp_path_factory: pytest.TempPathFactory,
) -> DoorsRun:
    """tests/doors_script.py run once by a Connect client, for every test that checks it; the
    pyspark 3.5 run (``doors_elsewhere``) starts first, to run beside it. While the client
    runs, this process runs the script on the tests' own classic ``spark`` session, with the
    state other tests leave on it (its tables are in a warehouse of its own): a driver of its
    own would start and warm up another JVM for the same steps."""
    workdir = tmp_path_factory.mktemp("doors-connect")
    client = connect_server.start_client(DOORS_SCRIPT, str(workdir), cwd=workdir)
    try:
        classic = doors_results(spark, str(tmp_path_factory.mktemp("doors-classic")))
        results = client.result()
    finally:
        client.stop()
    return DoorsRun(results, workdir / "warehouse", classic)
