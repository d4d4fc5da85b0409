"""Times our package on another kind of session, for bench/spark_write_read.py and
bench/spark_read_queries.py: a Spark Connect client, and pyspark 3.5.

The benches time the classic pyspark 4 session in their own process. Their other legs run this
script in a subprocess, which calls the same bench functions on the session the command names
(so the queries and writes are defined once, in the bench scripts):

- ``"remote": "sc://127.0.0.1:PORT"``: a Spark Connect client of a server that
  :func:`connect_server` started from the project venv's pyspark with the classic session's
  master and settings; ``"server_pid"`` puts the server's process tree (JVM and Python workers)
  on the CPU clock beside this client's;
- no ``remote``: a classic ``local[2]`` session of this interpreter's pyspark, e.g.
  ``.venv-pyspark35`` (pyspark 3.5.9 and the package's wheel), where ``format("paimon")`` does
  not exist: the writes go through ``paimon_pyspark.spark.write`` and the reads through
  ``paimon_pyspark.spark.read``.

One JSON command in, one JSON object out (on the last stdout line; Spark logs go to stderr):

- ``{"op": "write_read", "rows": N, "partitions": 2, "repeat": 3, "writes": [...], "reads":
  [...]}``: spark_write_read.py's rows and ``run`` with those of its WRITES and READS;
- ``{"op": "read_queries", "rows": N, "repeat": 3, "warehouse": W, "parquet": P, "parquet_pk":
  Q, "queries": [...], "engines": [...], "writes": [...]}``: spark_read_queries.py's
  ``run_queries`` on the tables the classic leg built (W, P, Q), then its ``run_writes`` of the
  same rows, those of its WRITES.

Every command may add ``"tmpdir"``, ``"native_read"`` and ``"arrow_batch"``.
Usage: ``python bench/ours_session_driver.py '{"op": ...}'``; exits 1 with a traceback on
failure.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib

CONNECT_SERVER_CLASS = "org.apache.spark.sql.connect.service.SparkConnectServer"
DRIVER = Path(__file__).resolve()
PROJECT = DRIVER.parent.parent
PYSPARK35_PYTHON = PROJECT / ".venv-pyspark35" / "bin" / "python"


# --- the parent's side --------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def connect_server(log_dir: str, timeout_s: float = 180.0) -> Iterator[tuple[str, int]]:
    """A Spark Connect server of this interpreter's pyspark on 127.0.0.1, with the classic
    session's master and settings (spark_write_read.MASTER, SESSION_CONF); yields its URL and
    pid, and stops it on exit."""
    import pyspark
    from spark_write_read import MASTER, SESSION_CONF

    home = os.path.dirname(pyspark.__file__)
    port = free_port()
    conf = {
        **SESSION_CONF,
        "spark.connect.grpc.binding.address": "127.0.0.1",
        "spark.connect.grpc.binding.port": str(port),
        "spark.log.level": "ERROR",  # as the classic session's setLogLevel
    }
    command = [os.path.join(home, "bin", "spark-submit"), "--master", MASTER]
    command += ["--class", CONNECT_SERVER_CLASS, "--name", "paimon_pyspark-bench-connect"]
    command += [arg for key, value in conf.items() for arg in ("--conf", f"{key}={value}")]
    env = {**os.environ, "SPARK_HOME": home, "PYSPARK_PYTHON": sys.executable}
    log_path = os.path.join(log_dir, "connect-server.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"Spark Connect server exited: {tail(log_path)}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"Spark Connect server not up: {tail(log_path)}") from None
                time.sleep(0.5)
        yield f"sc://127.0.0.1:{port}", proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def tail(path: str) -> str:
    with open(path, errors="replace") as f:
        lines = [x.strip() for x in f if x.strip()]
    errors = [x for x in lines if "Exception" in x or "Error" in x]
    return (errors or lines or ["(no output)"])[-1][:400]


def run_driver(python: str, command: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """This script's answer to ``command`` under ``python``, or None and why not. The package
    is the tree's (``src`` first on the path), as in the project venv's editable install, so
    every leg times the same code whatever wheel another venv holds."""
    if not os.path.exists(python):
        return None, f"no {python}: run make bench"
    env = {**os.environ, "PYTHONPATH": str(PROJECT / "src")}
    proc = subprocess.run(
        [python, str(DRIVER), json.dumps(command)], capture_output=True, text=True, env=env
    )
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if x.strip()]
        errors = [x for x in lines if "Error" in x or "Exception" in x]
        return None, f"failed: {(errors or lines or ['(no stderr)'])[-1].strip()[:300]}"
    return json.loads(proc.stdout.strip().splitlines()[-1]), ""


def pyspark35_python() -> str:
    return os.environ.get("PYSPARK35_PYTHON") or str(PYSPARK35_PYTHON)


# --- the child's side: the ops ------------------------------------------------------------------


def op_write_read(spark: Any, cmd: dict[str, Any]) -> dict[str, Any]:
    import spark_write_read as swr

    rows, partitions = int(cmd["rows"]), int(cmd.get("partitions", 2))
    df = swr.generate(spark, rows, partitions)
    expected = swr.totals(df)
    names = (list(cmd["writes"]), list(cmd["reads"]))
    writes, reads = swr.run(spark, df, expected, int(cmd["repeat"]), cmd.get("tmpdir"), names)
    df.unpersist()
    return {
        "writes": {k: asdict(m) for k, m in writes.items()},
        "reads": {k: asdict(m) for k, m in reads.items()},
    }


def op_read_queries(spark: Any, cmd: dict[str, Any]) -> dict[str, Any]:
    import spark_read_queries as srq

    rows, repeat = int(cmd["rows"]), int(cmd["repeat"])
    if not cmd.get("native_read", True):
        srq.NATIVE_READ["native-read"] = "false"
    qs = [q for q in srq.queries(rows) if q.name in cmd["queries"]]
    layout = srq.Layout(
        cmd["warehouse"], cmd["warehouse"], cmd["parquet"], parquet_pk=cmd["parquet_pk"]
    )
    results = srq.run_queries(spark, layout, qs, repeat, tuple(cmd["engines"]))
    writes: dict[str, Any] = {}
    if cmd.get("writes"):
        df = spark.range(0, rows, numPartitions=2)
        for exprs in srq.append_selects(rows):
            df = df.selectExpr(*exprs)
        df = df.cache()
        df.count()
        root = tempfile.mkdtemp(prefix="session-writes-", dir=cmd.get("tmpdir"))
        try:
            writes = srq.run_writes(df, repeat, root, tuple(cmd["writes"]), warmup=1)
        finally:
            shutil.rmtree(root, ignore_errors=True)
            df.unpersist()
    return {
        "results": {q: {e: asdict(r) for e, r in by.items()} for q, by in results.items()},
        "writes": {k: asdict(r) for k, r in writes.items()},
    }


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        cmd = json.loads(sys.stdin.read() if sys.argv[1] == "-" else sys.argv[1])
        ops = {"write_read": op_write_read, "read_queries": op_read_queries}
        op = ops[cmd["op"]]
        if cmd.get("server_pid"):
            benchlib.CPU_ALSO.append(int(cmd["server_pid"]))
        import pyspark
        from spark_write_read import start_spark

        spark = start_spark(cmd.get("arrow_batch"), cmd.get("remote"))
        try:
            result = op(spark, cmd)
            result["spark"] = spark.version
            result["pyspark"] = pyspark.__version__
            result["connect"] = bool(cmd.get("remote"))
        finally:
            spark.stop()
    except BaseException:  # the caller reads the traceback from stderr
        import traceback

        traceback.print_exc()
        return 1
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
