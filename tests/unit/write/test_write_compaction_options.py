"""The options of compaction while writing, parsed as Java 1.4.2 parses them: the stop trigger's
default and floor, ``full-compaction.delta-commits``, and where a write compacts at all."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.options import CoreOptions
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.write.table_write import TableWrite

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])


@pytest.mark.parametrize(
    ("options", "stop"),
    [
        ({}, 8),  # the trigger (5) + 3
        ({"num-sorted-run.compaction-trigger": "2"}, 5),
        ({"num-sorted-run.stop-trigger": "12"}, 12),
        ({"num-sorted-run.compaction-trigger": "6", "num-sorted-run.stop-trigger": "3"}, 6),
        ({"num-sorted-run.compaction-trigger": "2147483647"}, 2147483647),  # saturates
    ],
)
def test_stop_trigger_is_javas(options: dict[str, str], stop: int) -> None:
    assert CoreOptions(options).num_sorted_run_stop_trigger == stop


def test_full_compaction_delta_commits_is_an_int_or_unset() -> None:
    assert CoreOptions({}).full_compaction_delta_commits is None
    assert CoreOptions({"full-compaction.delta-commits": "3"}).full_compaction_delta_commits == 3
    with pytest.raises(OptionError, match="full-compaction.delta-commits"):
        _ = CoreOptions({"full-compaction.delta-commits": "x"}).full_compaction_delta_commits


def test_delta_commits_refused_on_append_tables_with_bucket_minus_one(
    catalog: FileSystemCatalog,
) -> None:
    with pytest.raises(OptionError, match="'full-compaction.delta-commits' is not supported"):
        catalog.create_table(
            "db.a",
            Schema.from_pyarrow_schema(SCHEMA, options={"full-compaction.delta-commits": "1"}),
        )
    options = {"full-compaction.delta-commits": "1", "bucket": "2", "bucket-key": "id"}
    catalog.create_table("db.b", Schema.from_pyarrow_schema(SCHEMA, options=options))


def _store(catalog: FileSystemCatalog, name: str, pk: bool, **options: str) -> FileStore:
    keys = ["id"] if pk else None
    catalog.create_table(
        f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys, options=options)
    )
    return catalog.get_table(f"db.{name}").store


@pytest.mark.parametrize(
    ("pk", "options", "compacts"),
    [
        (True, {"bucket": "2"}, True),
        (True, {}, True),  # dynamic bucket
        (True, {"bucket": "2", "write-only": "true"}, False),
        (True, {"bucket": "2", "write.compaction-skip": "true"}, False),  # Java's fallback key
        (True, {"bucket": "-2"}, False),  # postpone
        (False, {"bucket": "2", "bucket-key": "id"}, True),
        (False, {}, False),  # bucket-unaware append
    ],
)
def test_which_writes_compact(
    catalog: FileSystemCatalog, pk: bool, options: dict[str, str], compacts: bool
) -> None:
    store = _store(catalog, "t", pk, **options)
    with TableWrite(store, "user") as write:
        assert write.compact_at_commit is compacts
    with TableWrite(store, "user", sequence_slot=(1, 4)) as shared:
        assert not shared.compact_at_commit
