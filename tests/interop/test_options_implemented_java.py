"""Options the ledger calls *implemented* whose effect is on the files and snapshots a write or a
compaction leaves, shown against Java Paimon 1.4.2 (docs/options.md names this file for them).

Each case writes the same commits (1 to 2,000 upserts each, seeded) with the option into a table
Java writes and one we write: after every commit both hold the same live files (partition,
bucket, level, row count, first sequence number), and in the end the same snapshot kinds. So
that a case cannot pass with the option ignored, the same commits without the option must give
Java a different history (files or snapshot kinds). The other tests set an option both ways
(``compaction.force-rewrite-all-files``, ``compaction.min.file-num``,
``dynamic-bucket.max-buckets``, ``manifest.compression``) and check Java and we change alike.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("dt", pa.string())]
)
JAVA_FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING")]
SIZES = (1, 5, 50, 400, 2000)
COMMITS = 16
Row = list[Any]

PK_CASES: dict[str, tuple[str, dict[str, str]]] = {
    "num-levels": ("mixed", {"num-levels": "3"}),
    "compaction.size-ratio": ("mixed", {"compaction.size-ratio": "30"}),
    "compaction.max-size-amplification-percent": (
        "mixed",
        {"compaction.max-size-amplification-percent": "10"},
    ),
    "compaction.force-up-level-0": ("single", {"compaction.force-up-level-0": "true"}),
}
"""Each case's commits: ``mixed`` sizes, or ``single`` rows. Universal compaction compares file
sizes in bytes, and our Parquet files are not byte for byte Java's: where a comparison is close
(runs of a few rows against one of hundreds), mixed commits could pick differently for that
reason alone, so force-up-level-0, which acts when the universal pick is empty, gets one-row
commits (files of like sizes)."""


def commits(n: int, kind: str = "mixed") -> list[list[Row]]:
    if kind == "single":  # a new key, or every third commit an update of key 0
        return [[[0 if i % 3 == 2 else i, f"v{i}", "a"]] for i in range(n)]
    rng = random.Random(7)
    return [
        [[rng.randrange(3000), f"v{i}-{k}", "a"] for k in range(rng.choice(SIZES))]
        for i in range(n)
    ]


def open_table(warehouse: Path) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.t")


def state(warehouse: Path) -> list[tuple[bytes, int, int, int, int]]:
    table = open_table(warehouse)
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return sorted(
        (e.partition, e.bucket, e.file.level, e.file.row_count, e.file.min_sequence_number)
        for e in table.manifest_io.live_entries(snapshot)
    )


def kinds(warehouse: Path) -> list[str]:
    table = open_table(warehouse)
    latest = table.snapshot_manager.latest_id() or 0
    return [table.snapshot_manager.snapshot(i).commit_kind for i in range(1, latest + 1)]


def create_both(
    java_oracle: JavaOracle, java_wh: Path, our_wh: Path, keys: list[str], options: dict[str, str]
) -> FileStoreTable:
    java_oracle.create_table(java_wh, DB, "t", JAVA_FIELDS, primary_keys=keys, options=options)
    catalog = CatalogFactory.create({"warehouse": str(our_wh)})
    catalog.create_database(DB, ignore_if_exists=True)
    spec = Schema.from_pyarrow_schema(SCHEMA, primary_keys=keys or None, options=options)
    catalog.create_table(f"{DB}.t", spec)
    return catalog.get_table(f"{DB}.t")


def write_ours(table: FileStoreTable, rows: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        data = [dict(zip(SCHEMA.names, r, strict=True)) for r in rows]
        write.write_arrow(pa.Table.from_pylist(data, SCHEMA))
        builder.new_commit().commit(write.prepare_commit())


def java_history(java_oracle: JavaOracle, wh: Path, kind: str) -> Any:
    java_oracle.create_table(wh, DB, "t", JAVA_FIELDS, primary_keys=["id"], options={"bucket": "1"})
    states = []
    for rows in commits(COMMITS, kind):
        java_oracle.write_rows(wh, DB, "t", rows)
        states.append(state(wh))
    return states, kinds(wh)


@pytest.fixture(scope="module")
def default_history(java_oracle: JavaOracle, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Java's files and snapshots after each kind of commits without any of the options."""
    return {
        kind: java_history(java_oracle, tmp_path_factory.mktemp(kind), kind)
        for kind in ("mixed", "single")
    }


@pytest.mark.parametrize("case", list(PK_CASES))
def test_compaction_options_change_the_files_as_javas_do(
    java_oracle: JavaOracle, tmp_path: Path, default_history: Any, case: str
) -> None:
    kind, extra = PK_CASES[case]
    options = {"bucket": "1", **extra}
    java_wh, our_wh = tmp_path / "java", tmp_path / "ours"
    table = create_both(java_oracle, java_wh, our_wh, ["id"], options)
    states = []
    last: dict[int, Row] = {}
    for i, rows in enumerate(commits(COMMITS, kind)):
        last.update({r[0]: r for r in rows})
        java_oracle.write_rows(java_wh, DB, "t", rows)
        write_ours(table, rows)
        states.append(state(java_wh))
        assert state(our_wh) == states[-1], f"after commit {i + 1}"
    assert kinds(our_wh) == kinds(java_wh)
    assert (states, kinds(java_wh)) != default_history[kind], f"{case} did not change Java's files"
    rb = table.new_read_builder()
    ours = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    assert sorted_rows([r[n] for n in SCHEMA.names] for r in ours) == sorted_rows(last.values())


def test_force_rewrite_all_files_rewrites_a_single_top_level_file(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """A full compaction of a bucket already one file at the top level is nothing (no
    snapshot), unless ``compaction.force-rewrite-all-files``: then Java, and we, rewrite it."""
    for force in ("false", "true"):
        java_wh, our_wh = tmp_path / force / "java", tmp_path / force / "ours"
        options = {"bucket": "1", "compaction.force-rewrite-all-files": force}
        table = create_both(java_oracle, java_wh, our_wh, ["id"], options)
        for rows in commits(3):
            java_oracle.write_rows(java_wh, DB, "t", rows)
            write_ours(table, rows)
        catalog = CatalogFactory.create({"warehouse": str(our_wh)})
        java_oracle.compact(java_wh, DB, "t", full=True)
        compact(catalog, f"{DB}.t", compact_strategy="full")
        assert state(our_wh) == state(java_wh)
        assert [level for _, _, level, _, _ in state(java_wh)] == [5]
        before = len(kinds(java_wh)), len(kinds(our_wh))
        java_oracle.compact(java_wh, DB, "t", full=True)
        compact(catalog, f"{DB}.t", compact_strategy="full")
        assert state(our_wh) == state(java_wh)
        assert kinds(our_wh) == kinds(java_wh)
        added = len(kinds(java_wh)) - before[0], len(kinds(our_wh)) - before[1]
        assert added == ((1, 1) if force == "true" else (0, 0)), force


def test_compaction_min_file_num_picks_as_many_append_files_as_javas(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """A fixed-bucket append table compacts once ``compaction.min.file-num`` small files wait."""
    results = {}
    for n in ("5", "3"):
        options = {"bucket": "1", "bucket-key": "id", "compaction.min.file-num": n}
        java_wh, our_wh = tmp_path / n / "java", tmp_path / n / "ours"
        table = create_both(java_oracle, java_wh, our_wh, [], options)
        for i in range(8):
            rows: list[Row] = [[i, f"v{i}", "a"]]
            java_oracle.write_rows(java_wh, DB, "t", rows)
            write_ours(table, rows)
            assert state(our_wh) == state(java_wh), (n, i)
        assert kinds(our_wh) == kinds(java_wh)
        results[n] = kinds(java_wh)
    assert results["5"] != results["3"]


def test_dynamic_bucket_max_buckets_caps_the_buckets_as_javas(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Two keys a bucket (``dynamic-bucket.target-row-num``): 20 new keys open 10 buckets, or
    ``dynamic-bucket.max-buckets`` of them (Java then spreads the rest over those at random)."""
    rows: list[Row] = [[i, f"v{i}", "a"] for i in range(20)]
    for cap, want in (("-1", set(range(10))), ("3", {0, 1, 2})):
        options = {"dynamic-bucket.target-row-num": "2", "dynamic-bucket.max-buckets": cap}
        java_wh, our_wh = tmp_path / cap / "java", tmp_path / cap / "ours"
        table = create_both(java_oracle, java_wh, our_wh, ["id"], options)
        java_oracle.write_rows(java_wh, DB, "t", rows)
        write_ours(table, rows)
        for wh in (java_wh, our_wh):
            assert {bucket for _, bucket, _, _, _ in state(wh)} == want, (cap, wh.name)
            assert sum(count for *_, count, _ in state(wh)) == 20
        assert sorted_rows(java_oracle.read_table(our_wh, DB, "t").rows) == sorted_rows(rows)


def test_manifest_compression_is_the_avro_codec_of_manifests_as_javas(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    import fastavro

    def codecs(wh: Path) -> set[str]:
        out = set()
        for path in (wh / f"{DB}.db" / "t" / "manifest").iterdir():
            with open(path, "rb") as f:
                out.add(fastavro.reader(f).codec)
        return out

    rows: list[Row] = [[1, "a", "a"]]
    for codec, avro in (("zstd", "zstandard"), ("deflate", "deflate")):
        java_wh, our_wh = tmp_path / codec / "java", tmp_path / codec / "ours"
        options = {"bucket": "1", "manifest.compression": codec}
        table = create_both(java_oracle, java_wh, our_wh, ["id"], options)
        java_oracle.write_rows(java_wh, DB, "t", rows)
        write_ours(table, rows)
        assert codecs(java_wh) == codecs(our_wh) == {avro}, codec
        assert sorted_rows(java_oracle.read_table(our_wh, DB, "t").rows) == rows
