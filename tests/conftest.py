"""Shared fixtures: a fresh warehouse and catalog per test on the real local filesystem, and
one SparkSession for the whole run (starting one takes ~10 s).

Every test that uses the ``spark`` fixture, and every test under ``tests/spark/`` (the
standalone-cluster test runs its Spark in subprocesses), is marked ``uses_spark`` at
collection, so ``make test`` runs them and the others as two processes at once: one
SparkSession in the first, none in the second. Tests marked ``spark_half`` need no Spark but go
with the first, to even out the two.

Tests marked ``datasource`` need the Python Data Source API (``register``, ``format("paimon")``,
Structured Streaming); on a pyspark without it (3.5: tests/versions/test_pyspark35.py and
``make test-matrix`` run tests/spark there) they skip, naming what is missing, and the
``spark`` session has no source registered.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession
from tests.catalogs.hive_metastore import hive_metastore  # noqa: F401  (one per session)
from tests.catalogs.postgres import postgres_server  # noqa: F401  (one per session)
from tests.catalogs.rest_server import rest_server  # noqa: F401  (one REST server per module)
from tests.fault_s3_proxy import FaultProxy
from tests.fault_s3_proxy import start as start_fault_proxy
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileSystemCatalog
from paimon_pyspark.spark import compat, register

# Every Spark driver the tests start, in this process or a child (CLI, examples, the
# lowest-versions leg), compiles with C1 only and collects with the serial collector: the tests'
# JVMs live seconds to minutes, where C2's compiler threads cost more CPU than they win back
# (a third of the Spark tests' CPU on 2 cores). tests/interop/java_oracle.py does the same.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "uses_spark: uses the session's SparkSession (set at collection), or runs Spark in a "
        "subprocess and goes with those tests (set by hand)",
    )
    config.addinivalue_line(
        "markers",
        "spark_half: needs no Spark, but runs in make test's Spark half to balance the two "
        "processes (the core half ran alone for its last 200 s)",
    )
    config.addinivalue_line(
        "markers",
        "own_job: minutes long, much of it waiting on other processes (the short soak, the "
        "standalone cluster): make test runs these as a third process beside the two halves",
    )
    config.addinivalue_line(
        "markers",
        'datasource: needs the Python Data Source API (register, format("paimon"), Structured '
        "Streaming); skipped where the installed pyspark lacks it (3.5)",
    )
    # pyspark 3.5's own calls that warn: distutils' LooseVersion (its version checks of pandas
    # and pyarrow) and pandas' is_categorical_dtype (createDataFrame of a pandas frame)
    for message in ("distutils Version classes are deprecated", "is_categorical_dtype is deprec"):
        config.addinivalue_line("filterwarnings", f"ignore:{message}:DeprecationWarning")


@pytest.hookimpl(tryfirst=True)  # before -m deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        in_spark_dir = "spark" in Path(str(item.path)).parent.parts[-1:]
        if "spark" in getattr(item, "fixturenames", ()) or in_spark_dir:
            item.add_marker(pytest.mark.uses_spark)
        if item.get_closest_marker("datasource") and _MISSING_DATASOURCE_API:
            item.add_marker(pytest.mark.skip(reason=_NO_DATASOURCE))


_MISSING_DATASOURCE_API = compat.missing_datasource_api()
_NO_DATASOURCE = (
    f"pyspark {pyspark.__version__} has no {', '.join(_MISSING_DATASOURCE_API)} in "
    "pyspark.sql.datasource: the test needs the Python Data Source"
)


_RAY_MODULES: set[Path] = set()
"""Files with a test on ``ray_cluster``: one local Ray serves them while they run in a row."""


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    _RAY_MODULES.update(
        Path(str(item.path)) for item in session.items if "ray_cluster" in item.fixturenames
    )


@pytest.fixture
def ray_cluster() -> float:
    """A local Ray (2 CPUs, no dashboard), started by the first test that asks and shut down
    once the next test is in a file that does not use it; returns its startup time (0 when
    already running). Ray's start is a few CPU-seconds spent once, not once per file."""
    import ray
    import ray.data

    if ray.is_initialized():
        return 0.0
    start = time.monotonic()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    return time.monotonic() - start


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return
    if nextitem is None or Path(str(nextitem.path)) not in _RAY_MODULES:
        ray.shutdown()


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    return str(tmp_path / "warehouse")


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    cat = CatalogFactory.create({"warehouse": warehouse})
    cat.create_database("db", ignore_if_exists=True)
    return cat


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # Python workers must run this interpreter, where paimon_pyspark is installed.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2,3]")  # 2 cores, a task may be tried 3 times
        .appName("paimon_pyspark-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.warehouse.dir", tempfile.mkdtemp(prefix="spark-warehouse-"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    if compat.has_datasource_api():  # pyspark 3.5 has the other doors only
        register(session)
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server on 127.0.0.1 (a free port), one per run."""
    server = S3Server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server: S3Server) -> str:
    return s3_server.new_bucket()


@pytest.fixture
def s3_faults(s3_server: S3Server) -> Iterator[FaultProxy]:
    """A fault-injecting proxy in front of moto (tests/fault_s3_proxy.py), faults off until a
    test sets ``rate``; its seed is drawn per test (printed) or taken from PAIMON_FAULT_SEED."""
    seed = os.environ.get("PAIMON_FAULT_SEED")
    _, proxy = start_fault_proxy(s3_server.endpoint, seed=None if seed is None else int(seed))
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def s3_catalog(s3_server: S3Server, s3_bucket: str) -> FileSystemCatalog:
    cat = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **s3_server.options()})
    cat.create_database("db", ignore_if_exists=True)
    return cat
