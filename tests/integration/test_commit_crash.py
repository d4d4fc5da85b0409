"""Crash injection into the commit on S3 (moto's server) and local disk: the k-th store call of
a commit fails, for every k, before its request is sent or after it went through. On S3 the
requests also go through tests/fault_s3_proxy.py, which fails about 5% of the requests of
every class in every way (the client's retries are to absorb them).

Whatever k: the table reads as the previous snapshot or the new one, never a mix; a commit
that raises only says "nothing was committed" when that is true; the next commit succeeds; and
a failure after the publish went through is recognised as committed.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from tests.fault_s3_proxy import CLASSES, FEW_DELAYS, KINDS, FaultProxy
from tests.integration.faulty_file_io import FaultyFileIO
from tests.integration.table_helpers import read_all, write_commit
from tests.s3_server import S3Server

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import CommitError, CommitOutcomeUnknownError

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
FAST_RETRIES = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "5 ms"}


def _rows(first: int, n: int) -> pa.Table:
    return pa.table({"id": list(range(first, first + n)), "v": ["x"] * n}, schema=SCHEMA)


def _ids(table: FileStoreTable) -> list[int]:
    return sorted(read_all(table)["id"].to_pylist())


def _faulty(table: FileStoreTable, options: dict[str, str]) -> tuple[FileStoreTable, FaultyFileIO]:
    faulty = FaultyFileIO(table.file_io)
    clone = FileStoreTable(faulty, table.path, table.name, table.store.table_schema, options)
    return clone, faulty


def _one_case(
    catalog: Any, name: str, k: int | None, mode: str, retries: int
) -> tuple[str, list[str]]:
    """Commit ids 100..104 onto ids 0..4 with call ``k`` failing; returns the outcome."""
    catalog.create_table(name, Schema.from_pyarrow_schema(SCHEMA, options=FAST_RETRIES))
    table = catalog.get_table(name)
    write_commit(table, _rows(0, 5))
    # write-only: no expiry after the commit, so every counted call is the commit's own (an
    # expiry failure never fails a commit: tests/integration/test_expire.py)
    dynamic = {**FAST_RETRIES, "commit.max-retries": str(retries), "write-only": "true"}
    faulty_table, faulty = _faulty(table, dynamic)
    builder = faulty_table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(_rows(100, 5))
        messages = write.prepare_commit()
    commit = builder.new_commit()
    faulty.arm(k, mode)
    outcome = "committed"
    try:
        ids = commit.commit(messages)
        assert ids == [2]
    except CommitOutcomeUnknownError:
        outcome = "unknown"
    except CommitError as e:
        outcome = "failed"
        assert "Nothing was committed" in str(e) or "nothing was committed" in str(e)
    finally:
        faulty.recording = False
    table = catalog.get_table(name)
    latest = table.snapshot_manager.latest()
    assert latest is not None
    ids_now = _ids(table)
    if latest.id == 2:
        assert outcome != "failed", f"call {k} ({mode}): committed, but the commit said not"
        assert ids_now == [*range(5), *range(100, 105)]
    else:
        assert latest.id == 1
        assert outcome != "committed"
        assert ids_now == list(range(5))
    # the next commit succeeds, and the table holds every committed row once
    assert write_commit(table, _rows(200, 3)) == [latest.id + 1]
    expected = [*ids_now, 200, 201, 202]
    assert _ids(catalog.get_table(name)) == sorted(expected)
    return outcome, faulty.calls


def _crash_every_call(catalog: Any) -> None:
    outcome, calls = _one_case(catalog, "db.clean", None, "before", 10)
    assert outcome == "committed"
    publish = calls.index("try_write_atomic") + 1
    checks = 1  # the one data file's presence is checked before the attempts
    for retries in (10, 0):
        for mode in ("before", "after"):
            for k in range(1, len(calls) + 1):
                name = f"db.t_{retries}_{mode}_{k}"
                outcome, _ = _one_case(catalog, name, k, mode, retries)
                if retries and k > checks:
                    # once the attempts began, one failed call never fails the commit
                    assert outcome == "committed", (name, calls[k - 1])
                if mode == "after" and k == publish:
                    assert outcome == "committed", f"{name}: a publish that went through"


@pytest.mark.slow
def test_crash_at_every_store_call_of_a_commit_on_faulty_s3(
    s3_server: S3Server, s3_bucket: str, s3_faults: FaultProxy
) -> None:
    options = s3_faults.options(s3_server.options())
    catalog = CatalogFactory.create({"warehouse": f"s3://{s3_bucket}/wh", **options})
    catalog.create_database("db")
    s3_faults.kinds = FEW_DELAYS
    # deletes are few here (a failed attempt's cleanup): a higher rate makes them fail too
    s3_faults.rate = {**dict.fromkeys(CLASSES, 0.05), "delete": 0.3}
    try:
        _crash_every_call(catalog)
    except AssertionError as e:
        raise AssertionError(f"{e} [{s3_faults.describe()}]") from e
    finally:
        s3_faults.rate = 0.0
    print(s3_faults.describe())
    by_class = s3_faults.by_class()
    assert all(by_class[c] for c in CLASSES if c != "multipart"), s3_faults.describe()
    assert set(s3_faults.by_kind()) == set(KINDS), s3_faults.describe()


def test_crash_at_every_store_call_of_a_commit_on_local_disk(tmp_path: Any) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path / "wh")})
    catalog.create_database("db")
    _crash_every_call(catalog)
