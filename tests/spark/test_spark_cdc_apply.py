"""CDC apply, the end-to-end pattern users build on a changelog producer (issue 40, item 3): a
Structured Streaming query reads ``A$audit_log`` and applies each micro-batch to table B with
``MERGE INTO`` through the SQL door; B equals A after every batch."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.spark import sql

pytestmark = [pytest.mark.slow, pytest.mark.datasource]

SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("v", pa.string()), ("n", pa.int64())]
)
Row = tuple[int, str | None, int | None]
INSERT, DELETE = 0, 3

# -U rows carry nothing the +U after them does not; of several changes of one key in a batch
# only the last (in the stream's order: snapshot, then the changelog file's order) counts.
MERGE = """
MERGE INTO db.b AS t USING a_changes AS c ON t.id = c.id
WHEN MATCHED AND c.rowkind = '-D' THEN DELETE
WHEN MATCHED AND c.rowkind IN ('+I', '+U') THEN UPDATE SET *
WHEN NOT MATCHED AND c.rowkind IN ('+I', '+U') THEN INSERT *
"""

# A's commits: (rows, row kinds) per commit; a key may come twice in one commit.
Commit = list[tuple[Row, int]]


def _rows(ids: range | list[int], v: str, kind: int = INSERT) -> Commit:
    return [((i, None if i % 7 == 3 else f"{v}{i}", i * 10 if i % 5 else None), kind) for i in ids]


COMMITS: list[Commit] = [
    _rows(range(0, 20), "a"),
    _rows(range(0, 10), "b") + _rows(range(20, 25), "b"),
    _rows(range(5, 15), "c", DELETE) + _rows(range(15, 20), "c"),
    # key 0 twice, key 30 inserted then deleted, all in one commit
    _rows([0], "d") + _rows([30], "d") + _rows([0], "e") + _rows([30], "e", DELETE),
    _rows(range(5, 10), "f") + _rows([24], "f", DELETE),
]
# written back to back, read as one stretch: key 1 changes in both, key 40 comes and goes
LATE: list[Commit] = [
    _rows([1, 2], "g") + _rows([40], "g") + _rows([21], "g", DELETE),
    _rows([1], "h") + _rows([40], "h", DELETE) + _rows([21], "h"),
]


def _create(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> FileStoreTable:
    schema = Schema.from_pyarrow_schema(
        SCHEMA, primary_keys=["id"], options={"bucket": "2", **options}
    )
    catalog.create_table(name, schema)
    return catalog.get_table(name)


def _commit(table: FileStoreTable, commit: Commit) -> None:
    data = pa.Table.from_pylist(
        [dict(zip(SCHEMA.names, row, strict=True)) for row, _ in commit], schema=SCHEMA
    )
    kinds = np.array([kind for _, kind in commit], dtype=np.int8)
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(data, row_kinds=kinds)
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def _contents(catalog: FileSystemCatalog, name: str) -> list[Row]:
    rb = catalog.get_table(name).new_read_builder()
    data = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted((r["id"], r["v"], r["n"]) for r in data.select(SCHEMA.names).to_pylist())


def _model(commits: list[Commit]) -> list[Row]:
    state: dict[int, Row] = {}
    for commit in commits:
        for row, kind in commit:
            if kind == DELETE:
                state.pop(row[0], None)
            else:
                state[row[0]] = row
    return sorted(state.values())


@pytest.mark.parametrize(
    "producer",
    [
        {"changelog-producer": "input"},
        {"changelog-producer": "lookup"},
    ],
    ids=["input", "lookup"],
)
def test_audit_log_stream_merged_into_b_keeps_b_equal_to_a(
    spark: SparkSession, catalog: FileSystemCatalog, warehouse: str, producer: dict[str, str]
) -> None:
    a = _create(catalog, "db.a", producer)
    _create(catalog, "db.b", {})
    batches: list[dict[str, int]] = []  # rows per row kind, per micro-batch

    def apply(batch: DataFrame, batch_id: int) -> None:
        kinds = {r["rowkind"]: r["count"] for r in batch.groupBy("rowkind").count().collect()}
        batches.append(kinds)
        if not kinds:  # a snapshot with no changes (lookup: the APPEND before its COMPACT)
            return
        last = Window.partitionBy("id").orderBy(F.col("_pos").desc())
        changes = (
            batch.withColumn("_pos", F.monotonically_increasing_id())
            .where("rowkind <> '-U'")
            .withColumn("_last", F.row_number().over(last))
            .where("_last = 1")
            .drop("_last", "_pos")
        )
        changes.createOrReplaceTempView("a_changes")
        sql(batch.sparkSession, MERGE, warehouse=warehouse).collect()

    _commit(a, COMMITS[0])
    stream = (
        spark.readStream.format("paimon")
        .option("warehouse", warehouse)
        .option("table", "db.a$audit_log")
        .load()
    )
    assert stream.columns == ["rowkind", *SCHEMA.names]
    query = stream.writeStream.foreachBatch(apply).start()
    try:
        query.processAllAvailable()
        assert _contents(catalog, "db.b") == _contents(catalog, "db.a") == _model(COMMITS[:1])
        for n, commit in enumerate(COMMITS[1:], start=2):
            _commit(a, commit)
            query.processAllAvailable()
            expected = _model(COMMITS[:n])
            assert _contents(catalog, "db.a") == expected, f"A after commit {n}"
            assert _contents(catalog, "db.b") == expected, f"B after commit {n}: {batches}"
        for commit in LATE:
            _commit(a, commit)
        query.processAllAvailable()
    finally:
        query.stop()
    expected = _model(COMMITS + LATE)
    assert _contents(catalog, "db.a") == expected
    assert _contents(catalog, "db.b") == expected, batches
    seen = {kind for kinds in batches for kind in kinds}
    assert {"+I", "-D"} <= seen, batches
    if producer["changelog-producer"] == "lookup":
        assert {"-U", "+U"} <= seen, batches
    assert sum(1 for kinds in batches if kinds) >= len(COMMITS), batches
