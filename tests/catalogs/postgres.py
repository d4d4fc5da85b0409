"""A real PostgreSQL server for the JDBC catalog's tests and benches, on 127.0.0.1.

:func:`start_postgres` runs Debian's ``initdb`` and ``pg_ctl`` (``/usr/lib/postgresql/<v>/bin``,
or ``$PAIMON_PG_BIN``) on a fresh data directory and a free port, with password auth over TCP
only (no Unix socket), creates one database and returns its :class:`PostgresServer`;
:func:`stop_postgres` stops it and deletes the directory. ``initdb`` refuses to run as root, so
as root both run as the ``postgres`` user (Debian's package creates it), or ``nobody``, through
``runuser``, on a directory that user owns. The tests' fixture is ``postgres_server``
(`postgres_server` below, one per session); bench/ calls the functions directly.

Durability is off (``fsync``, ``synchronous_commit``, ``full_page_writes``): the server lives for
one run, and the catalog's SQL is the same with it on.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

USER = "paimon"
PASSWORD = "paimon-secret"
DATABASE = "paimon"


@dataclass(frozen=True)
class PostgresServer:
    host: str
    port: int
    user: str
    password: str
    database: str
    data_dir: str
    bin_dir: str
    run_as: str | None
    """The OS user the server runs as (``runuser -u``), None when it runs as ourselves."""

    @property
    def uri(self) -> str:
        """Java's JDBC URL, the catalog's ``uri`` option."""
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def jdbc_options(self) -> dict[str, str]:
        """``uri``, ``jdbc.user`` and ``jdbc.password`` of this database (Java's names)."""
        return {"uri": self.uri, "jdbc.user": self.user, "jdbc.password": self.password}

    def catalog_options(self, warehouse: str, **extra: str) -> dict[str, str]:
        """Options of a JDBC catalog on this database and ``warehouse``."""
        return {"metastore": "jdbc", "warehouse": warehouse, **self.jdbc_options(), **extra}

    def conninfo(self, database: str | None = None) -> str:
        """A libpq connection string, for psycopg."""
        return (
            f"host={self.host} port={self.port} dbname={database or self.database} "
            f"user={self.user} password={self.password}"
        )

    def create_database(self, name: str) -> str:
        """A new empty database on this server; its JDBC URL (for a test that needs a clean
        catalog store)."""
        import psycopg

        with psycopg.connect(self.conninfo("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"jdbc:postgresql://{self.host}:{self.port}/{name}"


def find_bin_dir() -> str:
    """The newest installed PostgreSQL's bin directory; RuntimeError naming the package when
    there is none."""
    env = os.environ.get("PAIMON_PG_BIN")
    candidates = [env] if env else sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for d in candidates:
        if d and os.path.exists(os.path.join(d, "initdb")):
            return d
    raise RuntimeError(
        "No PostgreSQL server binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin: install "
        "Debian's 'postgresql' package (apt-get install postgresql) or set PAIMON_PG_BIN."
    )


def _run_as() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("Running as root and there is no 'postgres' or 'nobody' user for initdb.")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cmd(run_as: str | None, *args: str) -> list[str]:
    return ["runuser", "-u", run_as, "--", *args] if run_as else list(args)


def start_postgres(database: str = DATABASE, attempts: int = 3) -> PostgresServer:
    """Start a server on a free port of 127.0.0.1 with ``database`` created; the caller stops
    it with :func:`stop_postgres`."""
    bin_dir = find_bin_dir()
    run_as = _run_as()
    base = tempfile.mkdtemp(prefix="paimon-pg-")
    data_dir = os.path.join(base, "data")
    pwfile = os.path.join(base, "pw")
    with open(pwfile, "w") as f:
        f.write(PASSWORD + "\n")
    if run_as:
        entry = pwd.getpwnam(run_as)
        for p in (base, pwfile):
            os.chown(p, entry.pw_uid, entry.pw_gid)
    try:
        subprocess.run(
            _cmd(
                run_as,
                os.path.join(bin_dir, "initdb"),
                "-D",
                data_dir,
                "-U",
                USER,
                f"--pwfile={pwfile}",
                "--auth=scram-sha-256",
                "--encoding=UTF8",
                "--no-sync",
            ),
            check=True,
            capture_output=True,
            text=True,
        )
    except subprocess.CalledProcessError as e:
        shutil.rmtree(base, ignore_errors=True)
        raise RuntimeError(f"initdb failed: {e.stderr or e.stdout}") from e
    last = ""
    for _ in range(attempts):
        port = _free_port()
        conf = (
            f"\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = ''\n"
            "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            "max_connections = 200\nshared_buffers = 32MB\ntimezone = 'UTC'\n"
        )
        with open(os.path.join(data_dir, "postgresql.auto.conf"), "a") as f:
            f.write(conf)
        proc = subprocess.run(
            _cmd(
                run_as,
                os.path.join(bin_dir, "pg_ctl"),
                "-D",
                data_dir,
                "-l",
                os.path.join(data_dir, "server.log"),
                "-w",
                "-t",
                "60",
                "start",
            ),
            capture_output=True,
            text=True,
        )
        if proc.returncode == 0:
            server = PostgresServer(
                "127.0.0.1", port, USER, PASSWORD, database, data_dir, bin_dir, run_as
            )
            if database != "postgres":
                server.create_database(database)
            return server
        with contextlib.suppress(OSError), open(os.path.join(data_dir, "server.log")) as log:
            last = proc.stderr + log.read()[-2000:]
    shutil.rmtree(base, ignore_errors=True)
    raise RuntimeError(f"PostgreSQL did not start in {attempts} attempts: {last}")


def stop_postgres(server: PostgresServer) -> None:
    """Stop the server (fast shutdown: clients are disconnected) and delete its files."""
    subprocess.run(
        _cmd(
            server.run_as,
            os.path.join(server.bin_dir, "pg_ctl"),
            "-D",
            server.data_dir,
            "-m",
            "fast",
            "-w",
            "stop",
        ),
        capture_output=True,
        check=False,
    )
    shutil.rmtree(os.path.dirname(server.data_dir), ignore_errors=True)


@contextlib.contextmanager
def postgres(database: str = DATABASE) -> Iterator[PostgresServer]:
    """:func:`start_postgres` ... :func:`stop_postgres`, as a context manager."""
    server = start_postgres(database)
    try:
        yield server
    finally:
        stop_postgres(server)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server per session on 127.0.0.1, started at first use (tests/conftest.py
    imports this fixture for every directory); ``.catalog_options(warehouse)`` gives a JDBC
    catalog's options on its database."""
    server = start_postgres()
    try:
        yield server
    finally:
        stop_postgres(server)
