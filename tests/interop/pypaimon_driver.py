"""Command-line driver that runs pypaimon 2.1 inside its own venv (pyarrow<20).

pypaimon cannot be imported next to the product (pyarrow 26), so tests talk to it through
this script: one JSON command in, Arrow IPC files for data in both directions, JSON on stdout.
It must import only the standard library, pyarrow and pypaimon.

Commands (JSON object on argv[1], or on stdin when argv is empty):

- ``{"cmd": "read", "warehouse", "table": "db.t", "output": path,
  "snapshot_id"?: int, "projection"?: [names]}`` writes the rows as an Arrow IPC file.
- ``{"cmd": "create", "warehouse", "table", "schema": ipc_path, "partition_keys"?: [...],
  "primary_keys"?: [...], "options"?: {...}, "ignore_if_exists"?: bool}``.
- ``{"cmd": "write", "warehouse", "table", "data": ipc_path, "commits"?: int,
  "mode"?: "append" | "overwrite", "static_partition"?: {...}}``; ``commits`` > 1 splits the
  rows into that many consecutive slices, one snapshot each.

- ``{"cmd": "list_tables", "warehouse", "database"}`` answers ``{"tables": [sorted names]}``.

Every command may carry ``"catalog_options": {...}`` (for example ``metastore = rest``, ``uri``,
``token.provider``, ``token``): they open the catalog together with ``warehouse``.

Success prints a JSON object (with the ``pid`` that ran the command) on stdout; failure
prints ``{"error", "type", "traceback"}`` on stderr and exits with status 1.

``--serve SOCKET`` turns the script into a fork server, so a test session pays the ~2 s import
of pypaimon (pandas, polars, pyarrow.dataset) once instead of per command. Each command still
runs in its own process: a child forked from the idle, import-only server, which exits after
the command, so no pypaimon object outlives a call and the server never opens a warehouse.
The protocol is one JSON line per connection, ``{"command", "stdout", "stderr", "cwd",
"env"}``, answered by ``{"pid"}`` at the fork and ``{"returncode"}`` at the child's exit (as
``subprocess`` reports it). The client closing its end kills the child (a timeout); the
server exits when its stdin closes, killing any child still running.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import traceback
from typing import Any

import pyarrow as pa
import pyarrow.ipc
from pypaimon import CatalogFactory, Schema


def _catalog(cmd: dict[str, Any]) -> Any:
    options = {str(k): str(v) for k, v in (cmd.get("catalog_options") or {}).items()}
    return CatalogFactory.create({**options, "warehouse": cmd["warehouse"]})


def _table(cmd: dict[str, Any]) -> Any:
    return _catalog(cmd).get_table(cmd["table"])


def _read_ipc(path: str) -> pa.Table:
    with pa.memory_map(path, "r") as source:
        return pyarrow.ipc.open_file(source).read_all()


def _write_ipc(path: str, table: pa.Table) -> None:
    with pa.OSFile(path, "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def cmd_read(cmd: dict[str, Any]) -> dict[str, Any]:
    """Read a whole table (or one snapshot of it) the way a pypaimon user would."""
    table = _table(cmd)
    if cmd.get("snapshot_id") is not None:
        table = table.copy({"scan.snapshot-id": str(int(cmd["snapshot_id"]))})
    builder = table.new_read_builder()
    if cmd.get("projection") is not None:
        builder = builder.with_projection(list(cmd["projection"]))
    splits = builder.new_scan().plan().splits()
    read = builder.new_read()
    result = read.to_arrow(splits)
    _write_ipc(cmd["output"], result)
    return {"rows": result.num_rows, "splits": len(splits)}


def cmd_create(cmd: dict[str, Any]) -> dict[str, Any]:
    """Create database and table; the Arrow schema goes through pypaimon's own type mapping."""
    catalog = _catalog(cmd)
    database = cmd["table"].split(".", 1)[0]
    catalog.create_database(database, True)
    arrow_schema = _read_ipc(cmd["schema"]).schema
    schema = Schema.from_pyarrow_schema(
        arrow_schema,
        partition_keys=list(cmd.get("partition_keys") or []),
        primary_keys=list(cmd.get("primary_keys") or []),
        options={str(k): str(v) for k, v in (cmd.get("options") or {}).items()},
    )
    catalog.create_table(cmd["table"], schema, bool(cmd.get("ignore_if_exists", False)))
    created = catalog.get_table(cmd["table"])
    return {"fields": [[f.name, str(f.type)] for f in created.fields]}


def _conform(data: pa.Table, target: pa.Schema) -> pa.Table:
    """Cast the input to the table's Arrow schema.

    pypaimon compares nested types exactly (child nullability, string width), so a
    product-built table that only differs in layout would be rejected; a safe cast keeps
    value checks while removing those false alarms.
    """
    missing = [name for name in target.names if name not in data.column_names]
    if missing:
        raise ValueError(f"input lacks table columns {missing}; it has {data.column_names}")
    data = data.select(target.names)
    if data.schema.equals(target, check_metadata=False):
        return data
    return data.cast(target, safe=True)


def cmd_write(cmd: dict[str, Any]) -> dict[str, Any]:
    """Write rows in ``commits`` consecutive batch commits; each commit is one snapshot."""
    table = _table(cmd)
    data = _read_ipc(cmd["data"])
    commits = int(cmd.get("commits", 1))
    mode = cmd.get("mode", "append")
    if commits < 1:
        raise ValueError(f"commits must be >= 1, got {commits}")
    if mode not in ("append", "overwrite"):
        raise ValueError(f"mode must be append or overwrite, got {mode!r}")
    if commits > 1 and commits > data.num_rows:
        raise ValueError(f"cannot split {data.num_rows} rows into {commits} non-empty commits")
    size, extra = divmod(data.num_rows, commits)
    offset = 0
    snapshots = []
    for index in range(commits):
        length = size + (1 if index < extra else 0)
        chunk = data.slice(offset, length)
        offset += length
        builder = table.new_batch_write_builder()
        if mode == "overwrite":
            builder = builder.overwrite(cmd.get("static_partition"))
        write = builder.new_write()
        commit = builder.new_commit()
        try:
            write.write_arrow(_conform(chunk, write.table_pyarrow_schema))
            commit.commit(write.prepare_commit())
        finally:
            write.close()
            commit.close()
        latest = table.snapshot_manager().get_latest_snapshot()
        if latest is not None:  # an empty first write commits nothing
            snapshots.append(latest.id)
    return {"snapshots": snapshots}


def cmd_list_tables(cmd: dict[str, Any]) -> dict[str, Any]:
    """The table names of one database, as the catalog lists them."""
    return {"tables": sorted(_catalog(cmd).list_tables(cmd["database"]))}


COMMANDS = {
    "read": cmd_read,
    "create": cmd_create,
    "write": cmd_write,
    "list_tables": cmd_list_tables,
}


def main(argv: list[str]) -> int:
    try:
        cmd = json.loads(argv[1] if len(argv) > 1 else sys.stdin.read())
        result = COMMANDS[cmd["cmd"]](cmd)
    except BaseException as error:  # every failure must reach the caller as JSON
        payload = {
            "error": str(error),
            "type": type(error).__name__,
            "traceback": traceback.format_exc(),
        }
        print(json.dumps(payload), file=sys.stderr)
        return 1
    print(json.dumps({"ok": True, "pid": os.getpid(), **result}, default=str))
    return 0


def _run_forked(request: dict[str, Any]) -> int:
    """The child's whole life: the caller's cwd, env and output files, then one command."""
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(target, fd)
        os.close(target)
    return main([__file__, json.dumps(request["command"])])


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):  # the client gave up on this call; nothing to tell it
        conn.sendall(json.dumps(message).encode() + b"\n")


def serve(socket_path: str) -> int:
    """Fork one child per connection; see the module docstring for the protocol."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(16)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_write)
    running: dict[int, socket.socket] = {}
    stdin = sys.stdin.fileno()
    print(json.dumps({"ready": os.getpid()}), flush=True)
    try:
        while True:
            readable, _, _ = select.select([listener, stdin, wake_read, *running.values()], [], [])
            if stdin in readable and not os.read(stdin, 4096):
                return 0
            if wake_read in readable:
                while True:
                    try:
                        if not os.read(wake_read, 4096):
                            break
                    except BlockingIOError:
                        break
            for pid, conn in list(running.items()):
                if conn in readable:  # the client hung up (its timeout): end the command
                    os.kill(pid, signal.SIGKILL)
            while running:
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                conn = running.pop(pid)
                _send(conn, {"returncode": os.waitstatus_to_exitcode(status)})
                conn.close()
            if listener in readable:
                conn, _ = listener.accept()
                with conn.makefile("rb") as lines:
                    request = json.loads(lines.readline())
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    code = 1
                    try:
                        signal.set_wakeup_fd(-1)
                        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                        for other in (listener, conn, *running.values()):
                            other.close()
                        os.close(wake_read)
                        os.close(wake_write)
                        code = _run_forked(request)
                    finally:
                        sys.stdout.flush()
                        sys.stderr.flush()
                        os._exit(code)
                running[pid] = conn
                _send(conn, {"pid": pid})
    finally:
        for pid in running:
            os.kill(pid, signal.SIGKILL)
        for pid in running:
            os.waitpid(pid, 0)
        listener.close()
        os.unlink(socket_path)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        sys.exit(serve(sys.argv[2]))
    sys.exit(main(sys.argv))
