"""Table options hold values Java Paimon can read: each option's range, and its integers fit
the Java int or long the option is declared as, checked when a table is created, when it is
loaded (a schema file written by another engine, or edited) and when a handle is copied with
dynamic options."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError

PA_SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("v", pa.string())])

# (key, value, primary-key table?): every one is refused by Java at create, or makes Java fail
# when it reads or writes the table, or is outside what the option means.
OUT_OF_RANGE = [
    ("bucket", "2147483648", True),
    ("bucket", "-2147483649", True),
    ("bucket", "0", True),
    ("bucket", "-3", True),
    ("bucket", "1.5", True),
    ("bucket", " 4", True),
    ("snapshot.num-retained.min", "0", False),
    ("snapshot.num-retained.min", "2147483648", False),
    ("snapshot.num-retained.max", "2147483648", False),
    ("snapshot.expire.limit", "2147483648", False),
    ("snapshot.time-retained", "9223372036854775807 d", False),
    ("snapshot.time-retained", "1 fortnight", False),
    ("snapshot.expire.execution-mode", "later", False),
    ("snapshot.clean-empty-directories", "yes", False),
    ("target-file-size", "0 b", False),
    ("target-file-size", "9223372036854775807 kb", False),
    ("target-file-size", "128 mib", False),
    ("write-buffer-size", "0", True),
    ("manifest.target-file-size", "0 mb", False),
    ("manifest.merge-min-count", "99999999999", False),
    ("source.split.open-file-cost", "99999999999999999999", False),
    ("commit.max-retries", "2147483648", False),
    ("commit.min-retry-wait", "99999999999999999999 ms", False),
    ("file.compression.zstd-level", "2147483648", False),
    ("num-levels", "1", True),
    ("num-levels", "2147483648", True),
    ("num-sorted-run.compaction-trigger", "0", True),
    ("num-sorted-run.compaction-trigger", "10000", True),
    ("num-levels", "10001", True),
    ("num-sorted-run.stop-trigger", "2147483648", True),
    ("sort-spill-threshold", "1", True),
    ("compaction.max-size-amplification-percent", "2147483648", True),
    ("compaction.size-ratio", "2147483648", True),
    ("compaction.min.file-num", "2147483648", False),
    ("compaction.small-file-ratio", "nan", False),
    ("compaction.small-file-ratio", "-1", False),
    ("postpone.default-bucket-num", "0", True),
    ("dynamic-bucket.target-row-num", "0", True),
    ("dynamic-bucket.target-row-num", "9223372036854775808", True),
    ("dynamic-bucket.max-buckets", "0", True),
    ("dynamic-bucket.initial-buckets", "0", True),
    ("dynamic-bucket.assigner-parallelism", "0", True),
    ("write.parallelism", "0", False),
    ("write.parallelism", "two", False),
    ("cross-partition-upsert.index-ttl", "99999999999999999999 s", True),
    ("metadata.stats-mode", "truncate(2147483648)", False),
    ("scan.snapshot-id", "9223372036854775808", False),
    ("write-only", "yes", False),
    ("partition.legacy-name", "no", False),
    ("data-file.thin-mode", "1", True),
    ("ignore-delete", "nope", True),
]


def _schema(key: str, value: str, pk: bool) -> Schema:
    options = {key: value}
    if key == "bucket" and not pk:
        options["bucket-key"] = "id"
    return Schema.from_pyarrow_schema(
        PA_SCHEMA, primary_keys=["id"] if pk else None, options=options
    )


@pytest.mark.parametrize(("key", "value", "pk"), OUT_OF_RANGE)
def test_create_refuses_an_out_of_range_option_before_writing_anything(
    catalog: FileSystemCatalog, warehouse: str, key: str, value: str, pk: bool
) -> None:
    with pytest.raises(OptionError) as info:
        catalog.create_table("db.t", _schema(key, value, pk))
    message = str(info.value)
    assert "db.t" in message and key in message and value.strip() in message
    assert not os.path.exists(os.path.join(warehouse, "db.db", "t", "schema", "schema-0"))


IN_RANGE = [
    ("bucket", "2147483647"),
    ("bucket", "-2"),
    ("bucket", "+3"),
    ("snapshot.num-retained.min", "1"),
    ("snapshot.expire.limit", "0"),
    ("snapshot.expire.limit", "-1"),
    ("snapshot.num-retained.max", "2147483647"),
    ("snapshot.time-retained", "9223372036854775807 ms"),
    ("snapshot.time-retained", "5 µs"),
    ("target-file-size", "1 b"),
    ("target-file-size", "8 tebibytes"),
    ("num-sorted-run.compaction-trigger", "9999"),
    ("num-sorted-run.stop-trigger", "2147483647"),  # + 1 (the spill threshold) saturates
    ("num-levels", "2"),
    ("num-levels", "10000"),
    ("scan.snapshot-id", "9223372036854775807"),
    ("dynamic-bucket.target-row-num", "9223372036854775807"),
    ("dynamic-bucket.max-buckets", "-1"),
    ("compaction.small-file-ratio", "0"),
    ("write-only", "TRUE"),
    ("metadata.stats-mode", "truncate(2147483647)"),
]


@pytest.mark.parametrize(("key", "value"), IN_RANGE)
def test_create_accepts_the_edges_java_accepts(
    catalog: FileSystemCatalog, key: str, value: str
) -> None:
    catalog.create_table("db.t", _schema(key, value, pk=True))
    assert catalog.get_table("db.t").options.get(key) == value


def test_num_retained_max_below_min_is_refused(catalog: FileSystemCatalog) -> None:
    schema = Schema.from_pyarrow_schema(
        PA_SCHEMA,
        options={"snapshot.num-retained.min": "5", "snapshot.num-retained.max": "3"},
    )
    with pytest.raises(OptionError, match=r"snapshot\.num-retained\.max.*'3'.*5"):
        catalog.create_table("db.t", schema)


def test_num_levels_below_two_is_accepted_on_an_append_table(catalog: FileSystemCatalog) -> None:
    """Java checks the levels only where an LSM tree is built (primary-key tables)."""
    catalog.create_table("db.t", _schema("num-levels", "1", pk=False))
    assert catalog.get_table("db.t").options.get("num-levels") == "1"


def _edit_schema_options(warehouse: str, **options: str) -> None:
    """What another engine, or a hand edit, could leave in schema-0."""
    path = os.path.join(warehouse, "db.db", "t", "schema", "schema-0")
    with open(path) as f:
        doc = json.load(f)
    doc["options"].update(options)
    with open(path, "w") as f:
        json.dump(doc, f)


@pytest.mark.parametrize(
    ("key", "value"),
    [("bucket", "2147483648"), ("snapshot.num-retained.min", "0"), ("target-file-size", "0")],
)
def test_load_refuses_a_schema_file_with_an_out_of_range_option(
    catalog: FileSystemCatalog, warehouse: str, key: str, value: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(PA_SCHEMA, primary_keys=["id"]))
    _edit_schema_options(warehouse, **{key: value})
    with pytest.raises(OptionError) as info:
        catalog.get_table("db.t")
    assert "db.t" in str(info.value) and key in str(info.value) and value in str(info.value)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("snapshot.num-retained.min", "0"),
        ("snapshot.num-retained.max", "2147483648"),
        ("scan.snapshot-id", "9223372036854775808"),
        ("commit.max-retries", "-2147483649"),
        ("target-file-size", "0 kb"),
    ],
)
def test_copy_refuses_an_out_of_range_dynamic_option(
    catalog: FileSystemCatalog, key: str, value: str
) -> None:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(PA_SCHEMA, primary_keys=["id"]))
    table = catalog.get_table("db.t")
    with pytest.raises(OptionError) as info:
        table.copy({key: value})
    assert "db.t" in str(info.value) and key in str(info.value) and value in str(info.value)


def test_a_commit_after_retained_min_of_zero_was_refused_is_clean(
    catalog: FileSystemCatalog, caplog: pytest.LogCaptureFixture
) -> None:
    """The finding: ``snapshot.num-retained.min = 0`` got in at create, and every commit then
    logged an OptionError from its expiry. Now it never gets in; a valid table commits and
    expires without logging an error."""
    with pytest.raises(OptionError):
        catalog.create_table("db.t", _schema("snapshot.num-retained.min", "0", pk=False))
    retain_one = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    catalog.create_table("db.t", Schema.from_pyarrow_schema(PA_SCHEMA, options=retain_one))
    table = catalog.get_table("db.t")
    for i in range(3):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"id": [i], "v": ["x"]}, schema=PA_SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    assert table.snapshot_manager.list_ids() == [3]
