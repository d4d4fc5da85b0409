"""The S3 client under faults (tests/fault_s3_proxy.py in front of moto): every fault kind on
every request class is survived with the right answer, the ``s3.*`` retry and timeout options
are honoured, and retries exhausted end in StoreRetriesExhaustedError naming the path."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping

import pyarrow as pa
import pytest
from tests.fault_s3_proxy import KINDS, FaultProxy
from tests.integration.table_helpers import read_all, write_commit
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import OptionError, StoreRetriesExhaustedError, UnsupportedOptionError
from paimon_pyspark.fs.object_store import ObjectStoreFileIO
from paimon_pyspark.fs.options import FsOptions


def _io(
    proxy: FaultProxy, server: S3Server, delay: float = 0.8, extra: Mapping[str, str] = {}
) -> ObjectStoreFileIO:
    proxy.delay = delay  # the client's timeout is 4/5 of it: hangs are quick to tell
    return ObjectStoreFileIO("s3", FsOptions({**proxy.options(server.options()), **extra}))


def test_every_fault_on_every_class_is_survived(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    """One fault of each kind on one request of each class: each call still answers right,
    and a conditional create whose answer was lost (or cut, or late) is known as ours."""
    io = _io(s3_faults, s3_server)
    base = f"{s3_bucket}/{uuid.uuid4().hex}"
    payload = os.urandom(50_000)
    io.write_bytes(f"{base}/a", payload)
    io.try_write_atomic(f"{base}/probe", b"probe")  # the bucket's one probe, without faults
    n = 0

    def create() -> None:
        nonlocal n
        n += 1
        assert io.try_write_atomic(f"{base}/c/{n}", b"mine"), s3_faults.describe()
        assert not io.try_write_atomic(f"{base}/c/{n}", b"other"), s3_faults.describe()

    def stream() -> None:
        with io.open_input(f"{base}/a") as f:
            f.seek(10_000)
            assert f.read() == payload[10_000:]

    calls: dict[str, Callable[[], object]] = {
        "get": lambda: io.read_bytes(f"{base}/a") == payload or pytest.fail("bytes"),
        "head": lambda: io.file_size(f"{base}/a") == len(payload) or pytest.fail("size"),
        "list": lambda: "a" in io.list_names(base) or pytest.fail("listing"),
        "put": lambda: io.write_bytes(f"{base}/p", b"x"),
        "cond_put": create,
        "delete": lambda: io.delete_quietly(f"{base}/p"),
    }
    for kind in KINDS:
        for cls, call in calls.items():
            s3_faults.force(cls, kind)
            call()
        s3_faults.force("get", kind)
        stream()
    assert not io.exists(f"{base}/p")
    assert io.read_bytes(f"{base}/c/1") == b"mine"
    fired = s3_faults.fired()
    for cls in calls:
        assert set(fired[cls]) == set(KINDS), s3_faults.describe()


def test_multipart_upload_survives_every_fault(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    """A 10 MB + 1 KB file goes up in parts (create, two parts, complete), with a fault at each
    step:
    the whole file lands (a completion whose answer was lost is found whole), or the write
    fails with the typed error and leaves no object."""
    io = _io(s3_faults, s3_server, delay=4.0)  # a 10 MB part takes its time
    payload = os.urandom(10 * 1024 * 1024 + 1024)
    failed = []
    # create, first part, complete: every kind once at least, the completion's most
    cases = [(0, "503"), (0, "reset_during"), (0, "delay"), (1, "500"), (1, "lost")]
    cases += [(3, k) for k in KINDS if k != "500"]
    for step, kind in cases:
        path = f"{s3_bucket}/mp/{step}-{kind}"
        s3_faults.force("multipart", kind, skip=step)
        try:
            with io.open_output(path) as out:
                out.write(payload)
        except StoreRetriesExhaustedError as e:
            assert path in str(e)
            failed.append((step, kind))
            assert not io.exists(path), (step, kind, s3_faults.describe())
        else:
            assert io.file_size(path) == len(payload), (step, kind, s3_faults.describe())
            if step == 3:
                assert io.read_bytes(path) == payload, (step, kind, s3_faults.describe())
    assert set(s3_faults.fired()["multipart"]) == set(KINDS), s3_faults.describe()
    # 500 and 503 are the client's to retry, at every step
    assert not [f for f in failed if f[1] in ("500", "503")], failed
    print("multipart writes failed (typed, nothing left):", failed)


def test_slowdown_past_the_retries_raises_a_typed_error(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    """The client retries a 503 ``s3.attempts.maximum`` times, then the call fails, typed."""
    io = _io(s3_faults, s3_server, extra={"s3.attempts.maximum": "2"})
    io.write_bytes(f"{s3_bucket}/k", b"v")
    s3_faults.kinds = ("503",)
    s3_faults.rate = {"get": 1.0}
    with pytest.raises(StoreRetriesExhaustedError) as e:
        io.read_bytes(f"{s3_bucket}/k")
    message = str(e.value)
    assert f"s3://{s3_bucket}/k" in message and "after 3 attempts" in message, message
    assert "s3.attempts.maximum = 2" in message and "503" in message, message
    assert s3_faults.counters[("get", "503")] == 3, s3_faults.describe()


def test_resets_past_the_retry_limit_raise_a_typed_error(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    """A reset of a conditional create is the client's to give up on at once; the call is
    then made again ``s3.retry.limit`` times before it fails, typed."""
    io = _io(s3_faults, s3_server, extra={"s3.retry.limit": "3", "s3.retry.interval": "1ms"})
    io.try_write_atomic(f"{s3_bucket}/probe", b"p")
    s3_faults.kinds = ("reset_before",)
    s3_faults.rate = {"cond_put": 1.0}
    with pytest.raises(StoreRetriesExhaustedError, match="after 4 attempts.*retry.limit = 3"):
        io.try_write_atomic(f"{s3_bucket}/snapshot-1", b"s")
    assert s3_faults.counters[("cond_put", "reset_before")] == 4, s3_faults.describe()
    s3_faults.rate = 0.0
    assert not io.exists(f"{s3_bucket}/snapshot-1")


def test_a_request_hanging_past_the_timeout_is_retried(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    io = _io(s3_faults, s3_server)
    io.write_bytes(f"{s3_bucket}/k", b"v")
    s3_faults.force("get", "delay")
    assert io.read_bytes(f"{s3_bucket}/k") == b"v"
    s3_faults.force("cond_put", "delay")
    assert io.try_write_atomic(f"{s3_bucket}/snap", b"s")
    assert s3_faults.counters[("get", "delay")] == 1
    assert s3_faults.counters[("cond_put", "delay")] == 1
    # with no retry left, the hang is the error, naming the timeout's cause
    io = _io(s3_faults, s3_server, extra={"s3.attempts.maximum": "0", "s3.retry.limit": "0"})
    s3_faults.force("get", "delay")
    with pytest.raises(StoreRetriesExhaustedError, match="1 attempts"):
        io.read_bytes(f"{s3_bucket}/k")


def test_a_table_commits_and_reads_through_faults(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    options = s3_faults.options(s3_server.options())
    catalog = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **options})
    catalog.create_database("db")
    schema = pa.schema([("id", pa.int64())])
    catalog.create_table("db.t", Schema.from_pyarrow_schema(schema, primary_keys=["id"]))
    table = catalog.get_table("db.t")
    s3_faults.kinds = tuple(k for k in KINDS if k != "delay")  # fast: delays are tested above
    s3_faults.rate = 0.2
    for i in range(5):
        write_commit(table, pa.table({"id": [i, i + 100]}, schema=schema))
    assert sorted(read_all(table)["id"].to_pylist()) == sorted([*range(5), *range(100, 105)])
    sm = table.snapshot_manager
    kinds = [sm.snapshot(i).commit_kind for i in sm.list_ids()]
    assert kinds.count("APPEND") == 5 and sm.list_ids()[0] == 1, s3_faults.describe()
    assert sum(s3_faults.by_kind().values()) > 10, s3_faults.describe()


@pytest.mark.parametrize(
    ("key", "value", "error"),
    [
        ("s3.retry.throttle.limit", "3", UnsupportedOptionError),
        ("s3.connection.request.timeout", "5s", UnsupportedOptionError),
        ("s3.retry.limit", "-1", OptionError),
        ("s3.connection.timeout", "soon", OptionError),
    ],
)
def test_unknown_or_bad_s3_options_are_refused(
    s3_server: S3Server, s3_bucket: str, key: str, value: str, error: type[Exception]
) -> None:
    with pytest.raises(error, match=key.replace(".", r"\.")):
        catalog = CatalogFactory.create(
            {"warehouse": f"s3://{s3_bucket}/wh", **s3_server.options(), key: value}
        )
        catalog.create_database("db")
