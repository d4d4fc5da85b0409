"""Implemented options that no other test shows acting on a table (docs/options.md names this
file for them): each changes what the table holds exactly as its Java meaning says.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema


def create(
    warehouse: Path, schema: pa.Schema, options: dict[str, str], partitions: list[str] | None = None
) -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    spec = Schema.from_pyarrow_schema(schema, partition_keys=partitions or [], options=options)
    catalog.create_table("db.t", spec)
    return catalog.get_table("db.t")


def write(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read(table: FileStoreTable) -> list[dict[str, object]]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted(rows, key=repr)


def root(table: FileStoreTable) -> Path:
    return Path(table.path.removeprefix("file:"))


SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("p", pa.string())])


def test_partition_default_name_names_the_null_partition(tmp_path: Path) -> None:
    table = create(tmp_path, SCHEMA, {"partition.default-name": "NULLP"}, ["p"])
    write(table, pa.table({"id": [1, 2], "p": [None, "a"]}, SCHEMA))
    assert sorted(d.name for d in root(table).glob("p=*")) == ["p=NULLP", "p=a"]
    assert read(table) == [{"id": 1, "p": None}, {"id": 2, "p": "a"}]


def test_partition_legacy_name_spells_a_date_partition_as_java(tmp_path: Path) -> None:
    """Java's legacy name of a DATE partition is its day count; without it, the ISO date."""
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), ("d", pa.date32())])
    day = datetime.date(2024, 1, 2)
    data = pa.table({"id": [1], "d": [day]}, schema)
    for legacy, name in (
        ("true", f"d={(day - datetime.date(1970, 1, 1)).days}"),
        ("false", "d=2024-01-02"),
    ):
        table = create(tmp_path / legacy, schema, {"partition.legacy-name": legacy}, ["d"])
        write(table, data)
        assert [p.name for p in root(table).glob("d=*")] == [name], legacy
        assert read(table) == [{"id": 1, "d": day}]


def test_snapshot_expire_limit_bounds_the_snapshots_one_expiry_deletes(tmp_path: Path) -> None:
    retain = {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    table = create(tmp_path, SCHEMA, {**retain, "write-only": "true"})
    for i in range(5):
        write(table, pa.table({"id": [i], "p": ["a"]}, SCHEMA))
    snapshots = root(table) / "snapshot"
    assert sorted(p.name for p in snapshots.glob("snapshot-*")) == [
        f"snapshot-{i}" for i in range(1, 6)
    ]
    write(
        table.copy({"write-only": "false", "snapshot.expire.limit": "2"}),
        pa.table({"id": [9], "p": ["a"]}, SCHEMA),
    )
    left = sorted(int(p.name.split("-")[1]) for p in snapshots.glob("snapshot-*"))
    assert left == [3, 4, 5, 6]  # Java: at most earliest + limit, so 1 and 2 went
    write(table.copy({"write-only": "false"}), pa.table({"id": [10], "p": ["a"]}, SCHEMA))
    assert [p.name for p in snapshots.glob("snapshot-*")] == ["snapshot-7"]


def test_snapshot_clean_empty_directories_removes_what_expiry_emptied(tmp_path: Path) -> None:
    def run(clean: str) -> list[str]:
        options = {
            "snapshot.num-retained.min": "1",
            "snapshot.num-retained.max": "1",
            "snapshot.clean-empty-directories": clean,
        }
        table = create(tmp_path / clean, SCHEMA, options, ["p"])
        write(table, pa.table({"id": [1], "p": ["old"]}, SCHEMA))
        builder = table.new_batch_write_builder().overwrite({"p": "old"})
        with builder.new_write() as w:
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)  # drops partition old
        write(table, pa.table({"id": [2], "p": ["new"]}, SCHEMA))  # expires what held it
        return sorted(p.name for p in root(table).glob("p=*"))

    assert run("false") == ["p=new", "p=old"]
    assert run("true") == ["p=new"]


def _base_manifests(table: FileStoreTable) -> int:
    snapshot_dir = root(table) / "snapshot"
    latest = max(int(p.name.split("-")[1]) for p in snapshot_dir.glob("snapshot-*"))
    snapshot = json.loads((snapshot_dir / f"snapshot-{latest}").read_text())
    with open(root(table) / "manifest" / snapshot["baseManifestList"], "rb") as f:
        return len(list(fastavro.reader(f)))


def test_manifest_merge_min_count_merges_small_manifests(tmp_path: Path) -> None:
    """From ``manifest.merge-min-count`` manifests smaller than ``manifest.target-file-size``
    up, the base manifests merge (Java's ManifestFileMerger)."""
    counts = {}
    cases = {
        "default": {},
        "min2": {"manifest.merge-min-count": "2"},
        "min2-tiny": {"manifest.merge-min-count": "2", "manifest.target-file-size": "1 b"},
    }
    for name, options in cases.items():
        table = create(tmp_path / name, SCHEMA, options)
        for i in range(4):
            write(table, pa.table({"id": [i], "p": ["a"]}, SCHEMA))
        counts[name] = _base_manifests(table)
        assert len(read(table)) == 4
    assert counts == {"default": 3, "min2": 1, "min2-tiny": 3}  # none is small below 1 byte


def test_zstd_level_reaches_the_data_files(tmp_path: Path) -> None:
    """A higher level packs the same compressible rows into fewer bytes."""
    n = 50_000
    data = pa.table(
        {"id": list(range(n)), "p": [f"value-{i % 977}-{i % 13}-{i // 7}" for i in range(n)]},
        SCHEMA,
    )
    sizes = {}
    for level in ("1", "19"):
        table = create(tmp_path / level, SCHEMA, {"file.compression.zstd-level": level})
        write(table, data)
        sizes[level] = sum(p.stat().st_size for p in root(table).glob("bucket-0/*.parquet"))
        assert len(read(table)) == n
    assert 0 < sizes["19"] < sizes["1"]


def test_partition_and_primary_key_options_become_the_keys(tmp_path: Path) -> None:
    """As Java's Schema: DDL-time ``partition`` and ``primary-key`` options are the key lists."""
    table = create(tmp_path, SCHEMA, {"partition": "p", "primary-key": "id,p", "bucket": "1"})
    schema = table.table_schema
    assert schema.partition_keys == ("p",) and schema.primary_keys == ("id", "p")
    assert "partition" not in schema.options and "primary-key" not in schema.options
    write(table, pa.table({"id": [1, 1], "p": ["a", "a"]}, SCHEMA))
    assert read(table) == [{"id": 1, "p": "a"}]  # upserted by the key


def test_dynamic_bucket_initial_buckets_sizes_the_assigners(tmp_path: Path) -> None:
    """Java's Spark writer opens ``dynamic-bucket.initial-buckets`` assigners, at most the
    assigner parallelism (door_assigner.agreed_buckets is what every task of a job agrees on)."""
    from paimon_pyspark.bucket.door_assigner import agreed_buckets

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    spec = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options={"bucket": "-1"})
    catalog.create_table("db.d", spec)
    table = catalog.get_table("db.d")
    assert agreed_buckets(table.store, 8).width == 8
    assert agreed_buckets(table.copy({"dynamic-bucket.initial-buckets": "3"}).store, 8).width == 3
    both = {"dynamic-bucket.initial-buckets": "3", "dynamic-bucket.assigner-parallelism": "2"}
    assert agreed_buckets(table.copy(both).store, 8).width == 2


@pytest.mark.parametrize("retries", [0, 3])
def test_commit_retries_and_their_waits_follow_the_commit_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retries: int
) -> None:
    """``commit.max-retries`` attempts after the first, each after a wait between
    ``commit.min-retry-wait`` and ``commit.max-retry-wait`` as Java's: here every attempt finds its
    snapshot id taken (the store's create-if-absent answers no), so the commit fails after them
    and commits nothing. The waits are recorded, not timed."""
    import time

    from paimon_pyspark.errors import CommitError

    options = {
        "commit.min-retry-wait": "20 ms",
        "commit.max-retry-wait": "30 ms",
        "commit.max-retries": str(retries),
    }
    table = create(tmp_path, SCHEMA, options)
    write(table, pa.table({"id": [1], "p": ["a"]}, SCHEMA))
    attempts: list[str] = []
    waits: list[float] = []
    publish = table.file_io.try_write_atomic

    def taken(path: str, data: bytes) -> bool:
        if Path(path).name.startswith("snapshot-"):
            attempts.append(Path(path).name)
            return False
        return publish(path, data)

    monkeypatch.setattr(table.file_io, "try_write_atomic", taken)
    monkeypatch.setattr(time, "sleep", waits.append)  # the commit's retry waits
    with pytest.raises(CommitError, match=f"after {retries} retries"):
        write(table, pa.table({"id": [2], "p": ["a"]}, SCHEMA))
    monkeypatch.undo()
    assert attempts == ["snapshot-2"] * (retries + 1)
    # Java's RetryWaiter: min(min * 2^k, max) ms before retry k + 1, plus up to a fifth more
    bases = [min(20 * 2**k, 30) for k in range(retries)]
    assert len(waits) == retries, waits
    assert all(b <= w * 1000 < b + max(1, b // 5) for b, w in zip(bases, waits, strict=True))
    assert read(table) == [{"id": 1, "p": "a"}]


def test_compaction_delete_ratio_threshold_picks_a_file_with_many_deleted_rows(
    tmp_path: Path,
) -> None:
    """Java's AppendCompactCoordinator: an unaware append file whose deletion vector deletes
    more than ``compaction.delete-ratio-threshold`` of its rows is compacted, even alone and
    not small."""
    from paimon_pyspark.procedures import compact

    for ratio, rewritten in (("0.2", False), ("0.1", True)):
        options = {
            "deletion-vectors.enabled": "true",
            "target-file-size": "1 kb",  # the file is not small: only its deletes can pick it
            "compaction.delete-ratio-threshold": ratio,
        }
        table = create(tmp_path / ratio, SCHEMA, options)
        write(table, pa.table({"id": list(range(100)), "p": ["a"] * 100}, SCHEMA))
        pb = table.new_read_builder().new_predicate_builder()
        assert table.delete(pb.less_than("id", 15)) == 15  # 15% of the file's rows
        catalog = CatalogFactory.create({"warehouse": str(tmp_path / ratio)})
        assert (compact(catalog, "db.t") is not None) == rewritten, ratio
        table = catalog.get_table("db.t")
        snapshot = table.snapshot_manager.latest()
        assert snapshot is not None
        live = table.manifest_io.live_entries(snapshot)
        assert [e.file.row_count for e in live] == [85 if rewritten else 100], ratio
        assert read(table) == [{"id": i, "p": "a"} for i in sorted(range(15, 100), key=repr)]


def test_an_append_write_buffer_that_cannot_spill_is_refused(tmp_path: Path) -> None:
    """``write-buffer-for-append`` is no effect while the buffer spills (Java's default); Java
    closes a file whenever an unspillable one fills, so an append write with both is refused."""
    from paimon_pyspark.errors import UnsupportedOptionError

    data = pa.table({"id": [1], "p": ["a"]}, SCHEMA)
    table = create(tmp_path, SCHEMA, {"write-buffer-for-append": "true"})
    write(table, data)
    unbuffered = {"write-buffer-for-append": "false", "write-buffer-spillable": "false"}
    write(table.copy(unbuffered), data)  # no buffer: files as Java's
    both = table.copy({"write-buffer-for-append": "TRUE", "write-buffer-spillable": "false"})
    rb = both.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 2  # reads go on
    with pytest.raises(UnsupportedOptionError, match="'write-buffer-for-append' = 'true'"):
        write(both, data)
    assert len(read(table)) == 2
