"""The command line's SparkSession: quiet unless ``--verbose``, and never two per process.

An in-process caller (a notebook, the tests) keeps its own active session, which the command
neither configures nor stops. A session of our own is started with Spark's console noise off:
log level ERROR (a log4j2 configuration given to the driver JVM, so not even the startup lines
are logged), no console progress bar, and the JVM's own stderr (the launcher's banner, JDK
warnings) sent to a log file named in the error if the start fails.

With ``--remote sc://host:port`` (or ``$SPARK_REMOTE``) the session is a Spark Connect client
of that server instead: no JVM here, the server's logs stay the server's, and the commands run
the same jobs through it. Driver-side planning and commits still run in this process, which
reaches the warehouse directly.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark import SparkConf, SparkContext
from pyspark.java_gateway import launch_gateway
from pyspark.sql import SparkSession

from paimon_pyspark.spark import register
from paimon_pyspark.spark.cluster import is_connect

_MAX_BYTES_PER_BATCH = "spark.sql.execution.arrow.maxBytesPerBatch"

QUIET_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex
"""


def _quiet_log4j2() -> Path:
    path = Path(tempfile.gettempdir()) / "paimon-pyspark-log4j2-quiet.properties"
    if not path.exists() or path.read_text("utf-8") != QUIET_LOG4J2:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(QUIET_LOG4J2, "utf-8")
        tmp.replace(path)
    return path


def _conf(app: str, master: str, verbose: bool) -> SparkConf:
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName(app)
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "true" if verbose else "false")
        .set("spark.sql.shuffle.partitions", "8")
        # no per-row Arrow size check: it halves the speed of writes through Python
        .set(_MAX_BYTES_PER_BATCH, str(2**31 - 1))
    )
    if not verbose:
        conf.set(
            "spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{_quiet_log4j2()}"
        )
    return conf


def _connect(app: str, remote: str) -> SparkSession:
    """A Spark Connect client session of the server at ``remote``."""
    builder = SparkSession.builder.remote(remote).appName(app)
    spark = builder.config(_MAX_BYTES_PER_BATCH, str(2**31 - 1)).getOrCreate()
    register(spark)
    return spark


def _start(app: str, master: str, verbose: bool) -> SparkSession:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    conf = _conf(app, master, verbose)
    if verbose or SparkContext._active_spark_context is not None:
        spark = SparkSession.builder.config(conf=conf).getOrCreate()
    else:
        log = Path(tempfile.gettempdir()) / f"paimon-pyspark-{os.getpid()}.log"
        with log.open("ab") as sink:
            try:
                gateway = launch_gateway(conf, popen_kwargs={"stderr": sink})  # type: ignore[no-untyped-call]
            except Exception as e:
                tail = log.read_text("utf-8", errors="replace").strip().splitlines()[-1:]
                raise RuntimeError(
                    f"Spark did not start ({e}); its log: {log}" + (f": {tail[0]}" if tail else "")
                ) from e
        SparkContext(conf=conf, gateway=gateway)
        spark = SparkSession.builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN" if verbose else "ERROR")
    register(spark)
    return spark


def remote_url(remote: str | None) -> str | None:
    """The Spark Connect server to use: ``--remote``, else ``$SPARK_REMOTE``, else none."""
    return remote or os.environ.get("SPARK_REMOTE") or None


@contextmanager
def spark_session(
    app: str, master: str, verbose: bool, remote: str | None = None
) -> Iterator[SparkSession]:
    """The active session as it is (a Spark Connect one if ``remote`` is asked for), or a new
    one (stopped at exit): a client of ``remote`` (:func:`remote_url`), else on ``master``."""
    url = remote_url(remote)
    active = SparkSession.getActiveSession()
    if active is not None and (url is None or is_connect(active)):
        yield active
        return
    spark = _connect(app, url) if url is not None else _start(app, master, verbose)
    try:
        yield spark
    finally:
        spark.stop()
