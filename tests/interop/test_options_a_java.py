"""Options of issue 38 between paimon_pyspark and Java Paimon 1.4.2: ``changelog-producer``
tables Java writes (read here, written through the Spark doors, expiry keeps them readable by
Java),
``ignore-update-before`` both ways, and ``upsert-key`` append tables (ours upsert, Java reads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, read_system_table, sorted_rows
from pyspark.sql import SparkSession

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import OptionError
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.spark.read import read as spark_read
from paimon_pyspark.spark.sql import sql
from paimon_pyspark.spark.write import write as spark_write

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int32()), ("s", pa.string())])
JAVA_FIELDS = [("id", "BIGINT NOT NULL"), ("v", "INT"), ("s", "STRING")]
Row = list[Any]


def _table(warehouse: Path, name: str) -> FileStoreTable:
    return CatalogFactory.create({"warehouse": str(warehouse)}).get_table(f"{DB}.{name}")


def _read(table: FileStoreTable) -> list[Row]:
    rb = table.new_read_builder()
    rows = rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist()
    return sorted_rows([r[n] for n in table.field_names] for r in rows)


def _snapshot_json(warehouse: Path, name: str, snapshot_id: int) -> dict[str, Any]:
    path = warehouse / f"{DB}.db" / name / "snapshot" / f"snapshot-{snapshot_id}"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _batch(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)


# --- changelog-producer ------------------------------------------------------------------------

CHANGELOG_COMMITS: list[list[Row]] = [
    [[i, i, f"a{i}"] for i in range(0, 40)],
    [[i, 100 + i, f"b{i}"] for i in range(20, 60)],
    [[i, 200 + i, None] for i in range(50, 70)],
]


def _expected_changelog_rows() -> list[Row]:
    model: dict[int, Row] = {}
    for batch in CHANGELOG_COMMITS:
        for r in batch:
            model[r[0]] = r
    return sorted_rows(model.values())


@pytest.mark.parametrize("producer", ["input", "lookup", "full-compaction"])
def test_java_changelog_table_reads_here(
    java_oracle: JavaOracle, tmp_path: Path, producer: str
) -> None:
    name = f"t_{producer.replace('-', '_')}"
    java_oracle.create_table(
        tmp_path,
        DB,
        name,
        JAVA_FIELDS,
        primary_keys=["id"],
        options={"bucket": "2", "changelog-producer": producer},
    )
    for batch in CHANGELOG_COMMITS:
        java_oracle.write_rows(tmp_path, DB, name, batch)
    java_oracle.compact(tmp_path, DB, name, full=True)
    latest = java_oracle.latest_snapshot_id(tmp_path, DB, name)
    assert latest is not None
    with_changelog = [
        s
        for s in range(1, latest + 1)
        if _snapshot_json(tmp_path, name, s).get("changelogManifestList")
    ]
    assert with_changelog, f"Java wrote no changelog for changelog-producer = {producer}"

    expected = _expected_changelog_rows()
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    table = _table(tmp_path, name)
    assert _read(table) == expected

    # system tables list what Java lists (its changelog manifests included in $snapshots)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    for system in ("snapshots", "files", "manifests"):
        ours = canonical_rows(catalog.get_system_table(f"{DB}.{name}${system}").to_arrow())
        theirs = read_system_table(java_oracle, tmp_path, DB, f"{name}${system}").rows
        assert sorted(ours, key=repr) == sorted(theirs, key=repr), system

    # orphan cleaning (any unused file, whatever its age) keeps every changelog file
    cleaned = OrphanFilesClean(table.store, older_than_ms=2**62).run()
    assert cleaned.deleted_file_count == 0, cleaned.deleted_files
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected

    # our expiry deletes the changelog files of expired snapshots as Java does; Java still
    # reads the table and its snapshots stay consistent
    expired = ExpireSnapshots(
        table.store, ExpireConfig(retain_max=1, retain_min=1, time_retained_ms=0)
    ).expire()
    assert expired == latest - 1
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, name).rows) == expected
    assert _read(_table(tmp_path, name)) == expected
    for s in with_changelog:
        if s < latest:
            assert not (tmp_path / f"{DB}.db" / name / "snapshot" / f"snapshot-{s}").exists()


def test_java_changelog_table_through_the_spark_doors(
    java_oracle: JavaOracle, tmp_path: Path, spark: SparkSession
) -> None:
    """The Spark reader and the SQL door read a lookup-changelog table Java wrote; INSERT,
    DELETE and CALL compact write it (once refused), and Java reads the result."""
    java_oracle.create_table(
        tmp_path,
        DB,
        "t",
        JAVA_FIELDS,
        primary_keys=["id"],
        options={"bucket": "2", "changelog-producer": "lookup"},
    )
    for batch in CHANGELOG_COMMITS:
        java_oracle.write_rows(tmp_path, DB, "t", batch)
    latest = java_oracle.latest_snapshot_id(tmp_path, DB, "t")
    expected = _expected_changelog_rows()
    df = spark_read(spark, str(tmp_path), f"{DB}.t")
    assert sorted_rows([list(r) for r in df.collect()]) == expected
    rows = sql(spark, f"SELECT id, v, s FROM {DB}.t", str(tmp_path)).collect()
    assert sorted_rows([list(r) for r in rows]) == expected
    for statement in (
        f"INSERT INTO {DB}.t VALUES (1, 1, 'x')",
        f"DELETE FROM {DB}.t WHERE id = 2",
        f"CALL sys.compact(table => '{DB}.t')",
    ):
        sql(spark, statement, str(tmp_path)).collect()
    assert (java_oracle.latest_snapshot_id(tmp_path, DB, "t") or 0) > (latest or 0)
    changed = sorted_rows([[1, 1, "x"], *(r for r in expected if r[0] not in (1, 2))])
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == changed


def test_changelog_producer_refused_on_append_table(tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database(DB, ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, options={"changelog-producer": "input"})
    with pytest.raises(Exception, match="without primary keys"):
        catalog.create_table(f"{DB}.t", schema)


# --- ignore-update-before ----------------------------------------------------------------------

IUB_ROWS: list[Row] = [[1, 10, "a"], [2, 20, "b"], [3, 30, "c"], [2, 20, "b"], [4, 40, "d"]]
IUB_KINDS = ["+I", "+I", "+I", "-U", "-U"]


@pytest.mark.parametrize("ignore", ["true", "false"])
def test_ignore_update_before_java_and_ours_agree(
    java_oracle: JavaOracle, tmp_path: Path, ignore: str
) -> None:
    """-U records are dropped at the write under ignore-update-before (Java's RowKindFilter):
    an UPDATE_BEFORE alone then retracts nothing. Both engines write the same records, each
    reads its own and the other's table the same."""
    options = {"bucket": "1", "ignore-update-before": ignore}
    java_oracle.create_table(tmp_path, DB, "j", JAVA_FIELDS, primary_keys=["id"], options=options)
    java_oracle.write_rows_kinds(tmp_path, DB, "j", IUB_ROWS, IUB_KINDS)

    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_table(
        f"{DB}.o", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    ours = catalog.get_table(f"{DB}.o")
    builder = ours.new_batch_write_builder()
    kinds = [{"+I": 0, "-U": 1, "+U": 2, "-D": 3}[k] for k in IUB_KINDS]
    with builder.new_write() as w:
        w.write_arrow(_batch(IUB_ROWS), row_kinds=kinds)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)

    if ignore == "true":
        expected = sorted_rows([[1, 10, "a"], [2, 20, "b"], [3, 30, "c"]])
    else:
        expected = sorted_rows([[1, 10, "a"], [3, 30, "c"]])
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "j").rows) == expected
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "o").rows) == expected
    assert _read(_table(tmp_path, "j")) == expected
    assert _read(ours) == expected


# --- upsert-key --------------------------------------------------------------------------------

UPSERT_FIELDS = [("id", "BIGINT"), ("v", "STRING"), ("ts", "INT")]
UPSERT_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("ts", pa.int32())])


def _same_key(a: Row, b: Row) -> bool:
    return bool(a[0] == b[0])  # None == None: Spark's null-safe <=>


def merge_model(table: list[Row], incoming: list[Row], sequence: bool) -> list[Row]:
    """RewriteUpsertTable + MergeIntoPaimonTable in plain Python: the source reduced to its
    highest sequence per key (NULL lowest), each table row replaced by its one matching source
    row (if the sequence allows), unmatched source rows inserted."""
    if sequence:
        best: dict[Any, Row] = {}
        for r in incoming:
            old = best.get(r[0])
            if old is None or (r[2] is not None and (old[2] is None or r[2] > old[2])):
                best[r[0]] = r
        incoming = list(best.values())
    out: list[Row] = []
    used: set[int] = set()
    for t in table:
        hits = [i for i, s in enumerate(incoming) if _same_key(s, t)]
        assert len(hits) <= 1, "the model's data must keep Java's rationality check quiet"
        if not hits:
            out.append(t)
            continue
        used.add(hits[0])
        s = incoming[hits[0]]
        ok = not sequence or (t[2] is not None and s[2] is not None and t[2] <= s[2])
        out.append(s if ok else t)
    out += [s for i, s in enumerate(incoming) if i not in used]
    return sorted_rows(out)


UPSERT_BASE: list[Row] = [
    [1, "a", 1],
    [2, "b", 5],
    [5, "dup", 1],
    [5, "dup", 2],
    [None, "nul", 1],
    *([i, f"r{i}", i % 7] for i in range(10, 200)),
]
UPSERT_ROUNDS: list[list[Row]] = [
    [[1, "a2", 2], [2, "b-old", 3], [5, "five", 9], [None, "nul2", 4], [300, "new", 1]],
    [[i, f"s{i}", 10] for i in range(150, 260, 3)] + [[3, "x", None], [3, "y", 1]],
    [[1, "a3", 3], [None, "nul3", 0], [42, "q", 42]],
]


@pytest.mark.parametrize(
    ("options", "sequence"),
    [
        ({}, False),
        ({"deletion-vectors.enabled": "true"}, True),
        ({"bucket": "2", "bucket-key": "id"}, True),
        ({"bucket": "2", "bucket-key": "id", "deletion-vectors.enabled": "true"}, False),
    ],
)
def test_we_upsert_java_reads(
    java_oracle: JavaOracle, tmp_path: Path, options: dict[str, str], sequence: bool
) -> None:
    """Java writes an upsert-key table (its core write appends, a key twice included); we
    upsert through the Python API three times, and after each Java reads exactly the rows of
    Java's MERGE INTO semantics."""
    table_options = {"upsert-key": "id", **options}
    if sequence:
        table_options["sequence.field"] = "ts"
    java_oracle.create_table(tmp_path, DB, "u", UPSERT_FIELDS, options=table_options)
    java_oracle.write_rows(tmp_path, DB, "u", UPSERT_BASE)
    expected = sorted_rows(UPSERT_BASE)
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == expected
    for incoming in UPSERT_ROUNDS:
        if not sequence and incoming is UPSERT_ROUNDS[1]:
            incoming = incoming[:-1]  # key 3 twice with no sequence: Java would refuse
        table = _table(tmp_path, "u")
        builder = table.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(
                pa.Table.from_pylist(
                    [dict(zip(UPSERT_SCHEMA.names, r, strict=True)) for r in incoming],
                    UPSERT_SCHEMA,
                )
            )
            messages = w.prepare_commit()
        builder.new_commit().commit(messages)
        expected = merge_model(expected, incoming, sequence)
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == expected
        assert _read(_table(tmp_path, "u")) == expected


def test_upsert_refuses_a_row_matched_twice_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    java_oracle.create_table(tmp_path, DB, "u", UPSERT_FIELDS, options={"upsert-key": "id"})
    java_oracle.write_rows(tmp_path, DB, "u", [[1, "a", 1]])
    table = _table(tmp_path, "u")
    incoming = pa.Table.from_pylist(
        [{"id": 1, "v": "x", "ts": 1}, {"id": 1, "v": "y", "ts": 2}], UPSERT_SCHEMA
    )
    latest = java_oracle.latest_snapshot_id(tmp_path, DB, "u")
    write = table.new_batch_write_builder().new_write()
    with pytest.raises(Exception, match="more than one incoming row"), write as w:
        w.write_arrow(incoming)
        w.prepare_commit()
    assert java_oracle.latest_snapshot_id(tmp_path, DB, "u") == latest


def test_upsert_through_the_spark_doors_java_reads(
    java_oracle: JavaOracle, tmp_path: Path, spark: SparkSession
) -> None:
    """``spark.write`` in append mode and the SQL door's INSERT INTO upsert; INSERT OVERWRITE
    keeps overwrite semantics (RewriteUpsertTable rewrites AppendData only)."""
    options = {"upsert-key": "id", "sequence.field": "ts"}
    java_oracle.create_table(tmp_path, DB, "u", UPSERT_FIELDS, options=options)
    java_oracle.write_rows(tmp_path, DB, "u", UPSERT_BASE)
    expected = sorted_rows(UPSERT_BASE)
    incoming = UPSERT_ROUNDS[0]
    df = spark.createDataFrame(incoming, "id BIGINT, v STRING, ts INT")
    spark_write(df, str(tmp_path), f"{DB}.u")
    expected = merge_model(expected, incoming, True)
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == expected

    sql(spark, f"INSERT INTO {DB}.u VALUES (1, 'sql', 100), (7, 'seven', 1)", str(tmp_path))
    expected = merge_model(expected, [[1, "sql", 100], [7, "seven", 1]], True)
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == expected

    sql(spark, f"INSERT OVERWRITE {DB}.u VALUES (1, 'o', 1), (1, 'o', 1)", str(tmp_path))
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == [
        [1, "o", 1],
        [1, "o", 1],
    ]
    # UPDATE rewrites rows as on any append table (Java rewrites INSERT INTO only)
    sql(spark, f"UPDATE {DB}.u SET v = 'z' WHERE ts = 1", str(tmp_path))
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "u").rows) == [
        [1, "z", 1],
        [1, "z", 1],
    ]
    writer = df.write.format("paimon").option("warehouse", str(tmp_path))
    with pytest.raises(Exception, match="upsert-key"):
        writer.option("table", f"{DB}.u").mode("append").save()


@pytest.mark.parametrize(
    ("fields", "primary_keys", "options", "java_says"),
    [
        (UPSERT_FIELDS, ["id"], {"upsert-key": "id"}, "Cannot define 'upsert-key'"),
        (
            [*UPSERT_FIELDS, ("a", {"type": "ARRAY", "element": "INT"})],
            [],
            {"upsert-key": "a"},
            "unsupported",
        ),
    ],
)
def test_upsert_key_schema_validation_as_java(
    java_oracle: JavaOracle,
    tmp_path: Path,
    fields: list[tuple[str, Any]],
    primary_keys: list[str],
    options: dict[str, str],
    java_says: str,
) -> None:
    with pytest.raises(Exception, match=java_says):
        java_oracle.create_table(
            tmp_path, DB, "j", fields, primary_keys=primary_keys, options=options
        )
    arrow = pa.schema(
        [*UPSERT_SCHEMA, *([pa.field("a", pa.list_(pa.int32()))] if len(fields) > 3 else [])]
    )
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database(DB, ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(arrow, primary_keys=primary_keys, options=options)
    with pytest.raises(OptionError, match="upsert"):
        catalog.create_table(f"{DB}.o", schema)


# --- record-level.expire-time ------------------------------------------------------------------

EXPIRE_OPTIONS = {
    "bucket": "1",
    "record-level.expire-time": "1 h",
    "record-level.time-field": "ts",
}
EXPIRE_FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("ts", "INT")]
EXPIRE_SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("ts", pa.int32())])


def _expire_commits(now: int) -> list[list[Row]]:
    old, recent, future = now - 2 * 86_400, now - 600, now + 86_400
    return [
        [[1, "a", recent], [2, "b", old], [3, "c", None], [4, "d", recent], [7, "g", future]],
        # key 1's newer record is expired: dropped before the merge, the older one wins
        [[1, "a2", old], [5, "e", old], [6, "f", future]],
    ]


def _alter(warehouse: Path, name: str, key: str, value: str) -> None:
    from paimon_pyspark.store.schema_change import SchemaChange

    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.alter_table(f"{DB}.{name}", [SchemaChange.set_option(key, value)])


@pytest.mark.parametrize("writer", ["java", "ours"])
def test_record_level_expire_in_compaction_as_java(
    java_oracle: JavaOracle, tmp_path: Path, writer: str
) -> None:
    """Whoever writes and compacts, both read the same rows: before compaction every record
    (reads do not expire), after a full compaction the unexpired ones; after the expiry is
    shortened, a full compaction of the one top-level file rewrites it (pickFullCompaction)."""
    import time

    from paimon_pyspark import procedures

    now = int(time.time())
    commits = _expire_commits(now)
    if writer == "java":
        java_oracle.create_table(
            tmp_path, DB, "t", EXPIRE_FIELDS, primary_keys=["id"], options=EXPIRE_OPTIONS
        )
        for batch in commits:
            java_oracle.write_rows(tmp_path, DB, "t", batch)
    else:
        catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
        catalog.create_database(DB, ignore_if_exists=True)
        schema = Schema.from_pyarrow_schema(
            EXPIRE_SCHEMA, primary_keys=["id"], options=EXPIRE_OPTIONS
        )
        catalog.create_table(f"{DB}.t", schema)
        for batch in commits:
            table = _table(tmp_path, "t")
            builder = table.new_batch_write_builder()
            with builder.new_write() as w:
                w.write_arrow(
                    pa.Table.from_pylist(
                        [dict(zip(EXPIRE_SCHEMA.names, r, strict=True)) for r in batch],
                        EXPIRE_SCHEMA,
                    )
                )
                messages = w.prepare_commit()
            builder.new_commit().commit(messages)

    merged: dict[int, Row] = {}
    for batch in commits:
        for r in batch:
            merged[r[0]] = r
    before = sorted_rows(merged.values())
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == before
    assert _read(_table(tmp_path, "t")) == before

    def compact() -> None:
        if writer == "java":
            java_oracle.compact(tmp_path, DB, "t", full=True)
        else:
            catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
            assert procedures.compact(catalog, f"{DB}.t") is not None

    compact()
    old, recent, future = now - 2 * 86_400, now - 600, now + 86_400
    assert old < recent < future
    after = sorted_rows(
        [[1, "a", recent], [3, "c", None], [4, "d", recent], [6, "f", future], [7, "g", future]]
    )
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == after
    assert _read(_table(tmp_path, "t")) == after

    _alter(tmp_path, "t", "record-level.expire-time", "5 min")
    compact()
    shortened = sorted_rows([[3, "c", None], [6, "f", future], [7, "g", future]])
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "t").rows) == shortened
    assert _read(_table(tmp_path, "t")) == shortened
