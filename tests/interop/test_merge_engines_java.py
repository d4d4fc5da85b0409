"""Every merge engine between paimon_pyspark and Java Paimon 1.4.2, row for row.

A seeded random workload per engine configuration (one big insert, then five commits of
inserts, updates and deletes through ``rowkind.field``) is written twice: by us, then read by
us, by Java and by the plain-Python reference model (``tests/unit/merge``), before compaction,
after our minor compaction and after our full compaction; and by Java, then read by us and by
Java before compaction, after Java's minor and after Java's full compaction.

The configurations: ``deduplicate`` (plain and ``ignore-delete``), ``partial-update`` (plain,
``ignore-delete``, ``partial-update.remove-record-on-delete``), ``aggregation`` (sum on INT and
DECIMAL, max, min, last_value, last_non_null_value, first_value, listagg, bool_and, bool_or;
insert-only, with retractions on the retractable functions and ``ignore-retract`` on the
others, with retractions on sum/last_value/last_non_null_value only, and with
``aggregation.remove-record-on-delete``), and ``first-row`` with ``first-row.ignore-delete``.

The model folds records as Java does: once per commit in the write buffer (retractions kept),
then over every flushed record at read time (retractions dropped). A compaction that merges
only some runs changes how the records are grouped, which for a non-associative fold
(``last_non_null_value`` under retraction, a -D under ``remove-record-on-delete``) changes the
result in Java too; the model is then only compared where it is exact
(``MODEL_AFTER_COMPACTION``). After the minor compaction, the -D records of three
configurations sit in level-4 files above the level-5 rows they delete (``KEEPS_DELETES``).
``first-row`` batch reads skip level 0 (Java's ``batchScanSkipLevel0``), so before a full
compaction only we and Java are compared for it.
"""

from __future__ import annotations

import random
import sys
import zlib
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.merge.merge_function import MergeSettings
from paimon_pyspark.procedures import compact
from paimon_pyspark.spec.data_file_meta import DataFileMeta

sys.path.insert(0, str(Path(__file__).parent.parent / "unit" / "merge"))
from merge_reference_model import KIND, SEQ, model_merge

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
TABLE = "t"
SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("op", pa.string()),
        ("si", pa.int32()),
        ("sd", pa.decimal128(10, 2)),
        ("mx", pa.int32()),
        ("mn", pa.float64()),
        ("lv", pa.string()),
        ("lnn", pa.int32()),
        ("fv", pa.int32()),
        ("la", pa.string()),
        ("ba", pa.bool_()),
        ("bo", pa.bool_()),
    ]
)
JAVA_FIELDS = [
    ("id", "BIGINT NOT NULL"),
    ("op", "STRING"),
    ("si", "INT"),
    ("sd", "DECIMAL(10, 2)"),
    ("mx", "INT"),
    ("mn", "DOUBLE"),
    ("lv", "STRING"),
    ("lnn", "INT"),
    ("fv", "INT"),
    ("la", "STRING"),
    ("ba", "BOOLEAN"),
    ("bo", "BOOLEAN"),
]
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
Row = dict[str, Any]
Rows = list[list[Any]]

AGG_FUNCTIONS = {
    "si": "sum",
    "sd": "sum",
    "mx": "max",
    "mn": "min",
    "lv": "last_value",
    "lnn": "last_non_null_value",
    "fv": "first_value",
    "la": "listagg",
    "ba": "bool_and",
    "bo": "bool_or",
}
NOT_RETRACTABLE = ("mx", "mn", "fv", "la", "ba", "bo")
AGGREGATION = {"merge-engine": "aggregation"} | {
    f"fields.{f}.aggregate-function": fn for f, fn in AGG_FUNCTIONS.items()
}
IGNORE_RETRACT = {f"fields.{f}.ignore-retract": "true" for f in NOT_RETRACTABLE}


RETRACTING = ("+I", "+I", "+U", "-U", "-D")
ADDING = ("+I", "+U")


@dataclass(frozen=True)
class Config:
    options: dict[str, str]
    ops: tuple[str, ...] = RETRACTING
    """The row kinds of the small commits, drawn uniformly (no retraction where the engine
    rejects them)."""


CONFIGS: dict[str, Config] = {
    "deduplicate": Config({}),
    "deduplicate-ignore-delete": Config({"ignore-delete": "true"}),
    "partial-update": Config({"merge-engine": "partial-update"}, ADDING),
    "partial-update-ignore-delete": Config(
        {"merge-engine": "partial-update", "ignore-delete": "true"}
    ),
    "partial-update-remove-on-delete": Config(
        {"merge-engine": "partial-update", "partial-update.remove-record-on-delete": "true"}
    ),
    "aggregation": Config(AGGREGATION, ADDING),
    "aggregation-retract": Config(AGGREGATION | IGNORE_RETRACT),
    "aggregation-sum-retract": Config(
        {
            "merge-engine": "aggregation",
            "fields.si.aggregate-function": "sum",
            "fields.sd.aggregate-function": "sum",
            "fields.lv.aggregate-function": "last_value",
        }
    ),
    # Java refuses ignore-retract next to remove-record-on-delete, and -U would retract max.
    "aggregation-remove-on-delete": Config(
        AGGREGATION | {"aggregation.remove-record-on-delete": "true"}, ("+I", "+U", "-D")
    ),
    "first-row-ignore-delete": Config(
        {"merge-engine": "first-row", "first-row.ignore-delete": "true"}
    ),
}
# Configurations whose fold depends on how the records of a key are grouped into runs, so a
# compaction changes the result (in Java as in ours) and the model is exact only before it.
NON_ASSOCIATIVE = {
    # last_non_null_value (the default function) retracts to null, so [+I 7] + ([-U 3] +
    # [+I null]) keeps 7 while [+I 7, -U 3, +I null] folds to null. (aggregation-retract's
    # workload happens never to retract and then add a null to it, so it stays exact.)
    "aggregation-sum-retract",
    # a -D resets the row to the -D's own values (first_value's "seen" state is kept), and a
    # group merged without the older records no longer carries the -D.
    "aggregation-remove-on-delete",
    "partial-update-remove-on-delete",
}
MODEL_AFTER_COMPACTION = set(CONFIGS) - NON_ASSOCIATIVE
KEEPS_DELETES = {"deduplicate", "partial-update-remove-on-delete", "aggregation-remove-on-delete"}
FIRST_ROW = "first-row-ignore-delete"
STAGES = ("written", "minor", "full")
BIG_KEYS = 20_000


# -- workload ------------------------------------------------------------------------------------


def _value_row(rng: random.Random, key: int, op: str) -> Row:
    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.3 else value

    return {
        "id": key,
        "op": op,
        "si": maybe(rng.randint(-100, 100)),
        "sd": maybe(Decimal(rng.randint(-10_000, 10_000)).scaleb(-2)),
        "mx": maybe(rng.randint(-50, 50)),
        "mn": maybe(rng.choice([0.5, -1.25, 3.0, 2.75, -0.0])),
        "lv": maybe(rng.choice(["p", "q", "rr"])),
        "lnn": maybe(rng.randint(0, 9)),
        "fv": maybe(rng.randint(0, 9)),
        "la": maybe(rng.choice(["a", "b", "cc", " ", ""])),
        "ba": maybe(rng.random() < 0.7),
        "bo": maybe(rng.random() < 0.3),
    }


def workload(name: str) -> list[list[Row]]:
    """One big insert of BIG_KEYS keys (compacted to the top level right away), then five commits
    of 30 operations on 12 of those keys. The big run must outweigh the five small ones by more
    than the size ratio, or a minor compaction takes it too; keys from 3000 on are drawn from a
    second generator, so the small commits are the same whatever BIG_KEYS is."""
    rng = random.Random(zlib.crc32(name.encode()))
    commits = [[_value_row(rng, key, "+I") for key in range(3000)]]
    for _ in range(5):
        commits.append(
            [_value_row(rng, rng.randrange(12), rng.choice(CONFIGS[name].ops)) for _ in range(30)]
        )
    padding = random.Random(zlib.crc32(name.encode()) + 1)
    commits[0] += [_value_row(padding, key, "+I") for key in range(3000, BIG_KEYS)]
    return commits


def model_rows(commits: list[list[Row]], ms: MergeSettings) -> Rows:
    """The reference model: merged per commit (retractions kept), then at read (dropped)."""
    flushed: list[Row] = []
    seq = 0
    for batch in commits:
        records = []
        for r in batch:
            records.append({**r, SEQ: seq, KIND: KINDS[r["op"]]})
            seq += 1
        if ms.ignore_delete:  # Java's writer drops retractions (RowKindFilter)
            records = [r for r in records if r[KIND] in (0, 2)]
        flushed += model_merge(records, ["id"], ms, drop_delete=False)
    merged = model_merge(flushed, ["id"], ms, drop_delete=True)
    values = [{k: v for k, v in r.items() if k not in (SEQ, KIND)} for r in merged]
    return sorted_rows(canonical_rows(pa.Table.from_pylist(values, schema=SCHEMA)))


# -- our side ------------------------------------------------------------------------------------


def table_options(name: str) -> dict[str, str]:
    return {"bucket": "2", "rowkind.field": "op", **CONFIGS[name].options}


def create_ours(warehouse: Path, name: str) -> FileSystemCatalog:
    """``write-only`` (as Java's tables here): the small commits' level-0 runs stay for the
    compactions to merge; first-row tables are compacted at every commit, as Java's are."""
    options = table_options(name)
    if name != FIRST_ROW:
        options = {**options, "write-only": "true"}
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.{TABLE}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    return catalog


def write_ours(table: FileStoreTable, rows: list[Row]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.Table.from_pylist(rows, schema=SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(catalog: FileSystemCatalog) -> Rows:
    rb = catalog.get_table(f"{DB}.{TABLE}").new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def live_files(catalog: FileSystemCatalog) -> list[DataFileMeta]:
    table = catalog.get_table(f"{DB}.{TABLE}")
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    return [e.file for e in table.manifest_io.live_entries(snapshot)]


def levels(catalog: FileSystemCatalog) -> list[int]:
    return sorted(f.level for f in live_files(catalog))


def write_workload(catalog: FileSystemCatalog, commits: list[list[Row]]) -> None:
    """The big first commit, our full compaction of it, then the small commits (level 0)."""
    write_ours(catalog.get_table(f"{DB}.{TABLE}"), commits[0])
    compact(catalog, f"{DB}.{TABLE}")  # None if the writer already pushed first-row files up
    assert set(levels(catalog)) == {5}
    table = catalog.get_table(f"{DB}.{TABLE}")
    for batch in commits[1:]:
        write_ours(table, batch)


def compact_ours(catalog: FileSystemCatalog, name: str, stage: str) -> None:
    """Our ``minor`` compaction (the small runs merge to level 4, above the big run, deletes
    kept) or ``full`` compaction (everything to level 5). For first-row our writer may already
    have compacted each commit's level-0 run to the top, leaving a compaction nothing to do."""
    if stage == "minor":
        done = compact(catalog, f"{DB}.{TABLE}", compact_strategy="minor")
        if name != FIRST_ROW:
            assert done is not None
            assert set(levels(catalog)) == {4, 5}
    elif stage == "full":
        done = compact(catalog, f"{DB}.{TABLE}")
        assert done is not None or name == FIRST_ROW
        assert set(levels(catalog)) == {5}


def build_ours(warehouse: Path, name: str, stage: str) -> tuple[FileSystemCatalog, Rows]:
    """Our table of ``name`` brought to ``stage``, and the model's rows for the workload."""
    catalog = create_ours(warehouse, name)
    commits = workload(name)
    write_workload(catalog, commits)
    for step in STAGES[1 : STAGES.index(stage) + 1]:
        compact_ours(catalog, name, step)
    return catalog, model_rows(
        commits, MergeSettings.from_table(catalog.get_table(f"{DB}.{TABLE}").store)
    )


def model_applies(name: str, stage: str) -> bool:
    """Whether the model's rows are what a correct engine must return at ``stage``."""
    if name == FIRST_ROW:
        return stage == "full"  # before that, level-0 files are not read
    return stage == "written" or name in MODEL_AFTER_COMPACTION


# -- tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_java_reads_our_merge_engines(java_oracle: JavaOracle, tmp_path: Path, name: str) -> None:
    catalog = create_ours(tmp_path, name)
    commits = workload(name)
    write_workload(catalog, commits)
    model = model_rows(commits, MergeSettings.from_table(catalog.get_table(f"{DB}.{TABLE}").store))
    for stage in STAGES:
        compact_ours(catalog, name, stage)
        if stage == "minor" and name in KEEPS_DELETES:
            files = live_files(catalog)
            assert any(f.level == 4 and (f.delete_row_count or 0) > 0 for f in files)
        ours = read_ours(catalog)
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, TABLE).rows) == ours, stage
        if model_applies(name, stage):
            assert ours == model, stage


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_we_read_java_merge_engines(java_oracle: JavaOracle, tmp_path: Path, name: str) -> None:
    """Java writes (``write-only``: its level-0 runs stay) and compacts, we read."""
    options = {**table_options(name), "write-only": "true"}
    java_oracle.create_table(tmp_path, DB, TABLE, JAVA_FIELDS, primary_keys=["id"], options=options)
    commits = workload(name)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    for i, batch in enumerate(commits):
        java_oracle.write_rows(tmp_path, DB, TABLE, [[r[n] for n in SCHEMA.names] for r in batch])
        if i == 0:
            java_oracle.compact(tmp_path, DB, TABLE, full=True)
    model = model_rows(commits, MergeSettings.from_table(catalog.get_table(f"{DB}.{TABLE}").store))
    for stage in STAGES:
        if stage != "written":
            java_oracle.compact(tmp_path, DB, TABLE, full=stage == "full")
        java = sorted_rows(java_oracle.read_table(tmp_path, DB, TABLE).rows)
        assert read_ours(catalog) == java, stage
        if model_applies(name, stage):
            assert java == model, stage
        if stage == "minor" and name != FIRST_ROW:  # Java's first-row lookup goes to the top
            assert set(levels(catalog)) == {4, 5}
    assert set(levels(catalog)) == {5}
