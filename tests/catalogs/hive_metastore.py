"""A real Hive Metastore on 127.0.0.1, for the Hive catalog's tests.

Hive 2.3.10's metastore server, from pyspark's own jars (hive-metastore, datanucleus, Derby: the
very version Paimon 1.4.2's HiveCatalog is built against), started by the launcher
tests/interop/java/HmsMain.java (compiled with the oracle classes by ``make``) with embedded
Derby in a temp directory. :func:`running_hive_metastore` writes its hive-site.xml, starts it on
a free port, waits for the port, yields a :class:`HiveMetastore` and stops it; the fixture
``hive_metastore`` (one per session: the JVM takes 10-30 s to start) wraps it, and
tests/conftest.py imports it so every test can take it. Hive 2.3 has no bind-host option: the
server listens on every interface; clients use 127.0.0.1 only. Its log, Derby's and hive.log
stay in the temp directory (shown when it fails to start).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple
from xml.sax.saxutils import escape

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLASSES = ROOT / ".cache" / "java" / "classes"
LAUNCHER = "paimonoracle.HmsMain"
START_TIMEOUT_S = 180.0
JAVA_OPTS = [
    "-Xmx512m",
    "-Xshare:auto",
    "-XX:TieredStopAtLevel=1",  # C1 only: a test server starts, it does not run for hours
    "-XX:+UseSerialGC",
]


class HiveMetastore(NamedTuple):
    uri: str
    """``thrift://127.0.0.1:<port>``"""
    directory: str
    """The server's temp directory: Derby's database, its logs."""
    start_seconds: float
    """Wall seconds from the JVM's start to the open port."""

    @property
    def port(self) -> int:
        return int(self.uri.rsplit(":", 1)[1])

    def catalog_options(self, warehouse: str, **extra: str) -> dict[str, str]:
        """Options of a Hive catalog on this metastore, in Java's names."""
        return {"metastore": "hive", "uri": self.uri, "warehouse": warehouse, **extra}


def _pyspark_jars() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "jars"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _hive_site(directory: Path) -> str:
    props = {
        "javax.jdo.option.ConnectionURL": (
            f"jdbc:derby:;databaseName={directory / 'metastore_db'};create=true"
        ),
        "datanucleus.schema.autoCreateAll": "true",
        "hive.metastore.schema.verification": "false",
        "hive.metastore.warehouse.dir": (directory / "hive-warehouse").as_uri(),
        # the async logger needs lmax disruptor, which pyspark does not ship
        "hive.async.log.enabled": "false",
        # the default pool, BoneCP, is not in pyspark's jars either
        "datanucleus.connectionPoolingType": "DBCP",
    }
    body = "".join(
        f"  <property><name>{k}</name><value>{escape(v)}</value></property>\n"
        for k, v in props.items()
    )
    return f"<configuration>\n{body}</configuration>\n"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


@contextlib.contextmanager
def running_hive_metastore() -> Iterator[HiveMetastore]:
    """Start a metastore; stop it and delete its directory on exit."""
    launcher = CLASSES / "paimonoracle" / "HmsMain.class"
    if not launcher.is_file():
        raise RuntimeError(f"{launcher} is missing: run `make .cache/java/classes/.stamp`")
    java = shutil.which("java")
    if java is None:
        raise RuntimeError("no `java` on PATH for the Hive Metastore")
    directory = Path(tempfile.mkdtemp(prefix="hms-"))
    conf = directory / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(_hive_site(directory))
    port = _free_port()
    classpath = os.pathsep.join([str(conf), str(CLASSES), str(_pyspark_jars() / "*")])
    log_path = directory / "hms.log"
    command = [
        java,
        *JAVA_OPTS,
        f"-Dhive.log.dir={directory}",
        f"-Dderby.stream.error.file={directory / 'derby.log'}",
        "-cp",
        classpath,
        LAUNCHER,
        "-p",
        str(port),
    ]
    started = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=directory, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        while not _port_open(port):
            if process.poll() is not None or time.monotonic() - started > START_TIMEOUT_S:
                tail = log_path.read_text(errors="replace")[-3000:]
                raise RuntimeError(
                    f"Hive Metastore did not open port {port} (exit {process.poll()}); "
                    f"log {log_path}:\n{tail}"
                )
            time.sleep(0.2)
        yield HiveMetastore(
            f"thrift://127.0.0.1:{port}", str(directory), time.monotonic() - started
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def hive_metastore() -> Iterator[HiveMetastore]:
    """One metastore per pytest session; a missing build fails, never skips."""
    try:
        with running_hive_metastore() as hms:
            yield hms
    except RuntimeError as e:
        pytest.fail(str(e), pytrace=False)
