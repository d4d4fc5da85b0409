"""Writes to ``row-tracking.enabled`` tables against Java Paimon 1.4.2: the same commits (and
compactions, and deletes by deletion vector) made by Java on one table and by us on another
give, read by Java, exactly the same rows with the same ``_ROW_ID`` and ``_SEQUENCE_NUMBER``;
the snapshots' ``nextRowId`` and the files' first row ids and sequence numbers agree; and a
table Java and we write in turns reads the same in both.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows, to_wire
from options_b_oracle import read_fields

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java]

DB = "db"
FIELDS = [("a", "INT"), ("s", "STRING"), ("p", "STRING")]
SCHEMA = pa.schema([("a", pa.int32()), ("s", pa.string()), ("p", pa.string())])
ALL = ["a", "s", "p", "_ROW_ID", "_SEQUENCE_NUMBER"]
PARTITIONS = [f"p{i}" for i in range(7)]
SMALL_GROUPS = "compaction.min.file-num=2"
"""Our compaction packs a partition's few files into one group, as Java's test compaction
(OptionsBOracle.compactUnaware) takes them."""


def _rows(batch: int, n: int, parts: int) -> list[list[Any]]:
    """Rows whose partitions interleave, so a commit's files come from several writers."""
    return [
        [
            batch * 1000 + j,
            None if j % 4 == 0 else f"s{batch}-{j}",
            PARTITIONS[(j * 3) % parts],
        ]
        for j in range(n)
    ]


def _create_both(
    java: JavaOracle, wh: Path, options: dict[str, str], partitioned: bool = True
) -> Any:
    keys = ["p"] if partitioned else []
    java.create_table(wh, DB, "j", FIELDS, partition_keys=keys, options=options)
    catalog = CatalogFactory.create({"warehouse": str(wh)})
    catalog.create_table(
        f"{DB}.o", Schema.from_pyarrow_schema(SCHEMA, partition_keys=keys, options=options)
    )
    return catalog


def _write_ours(
    catalog: Any, rows: list[list[Any]], name: str = "o", overwrite: bool = False
) -> None:
    table = catalog.get_table(f"{DB}.{name}")
    data = pa.Table.from_pylist([dict(zip(SCHEMA.names, r, strict=True)) for r in rows], SCHEMA)
    builder = table.new_batch_write_builder()
    if overwrite:
        builder = builder.overwrite()
    with builder.new_write() as write:
        write.write_arrow(data)
        builder.new_commit().commit(write.prepare_commit())


def _java_reads_equal(java: JavaOracle, wh: Path, expected_rows: int) -> list[list[Any]]:
    theirs = sorted_rows(read_fields(java, wh, DB, "j", ALL))
    ours = sorted_rows(read_fields(java, wh, DB, "o", ALL))
    assert len(theirs) == expected_rows
    assert ours == theirs
    return theirs


def _files(catalog: Any, name: str) -> list[tuple[Any, ...]]:
    """Each live file's partition, rows, sequence numbers, first row id, columns and source."""
    table = catalog.get_table(f"{DB}.{name}")
    out = []
    for split in table.new_read_builder().new_scan().plan().splits():
        for f in split.files:
            out.append(
                (
                    split.partition_values,
                    f.row_count,
                    f.min_sequence_number,
                    f.max_sequence_number,
                    f.first_row_id,
                    f.write_cols,
                    f.file_source,
                )
            )
    return sorted(out, key=repr)


def _ours(table: Any) -> list[list[Any]]:
    rb = table.new_read_builder().with_projection(ALL)
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def _next_row_ids(catalog: Any, name: str) -> list[int | None]:
    sm = catalog.get_table(f"{DB}.{name}").snapshot_manager
    latest = sm.latest()
    return [sm.snapshot(i).next_row_id for i in range(1, latest.id + 1)]


@pytest.mark.parametrize("file_format", ["parquet", "orc"])
def test_our_commits_and_compaction_read_by_java_as_javas(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str
) -> None:
    """Three commits over interleaved partitions, a compaction, one more commit: Java reads
    our table exactly as its own (ids numbered in Java's writer order, compacted files holding
    the ids), and both tables' snapshots and files carry the same row-tracking metadata."""
    options = {"row-tracking.enabled": "true", "bucket": "-1", "file.format": file_format}
    catalog = _create_both(java_oracle, tmp_path, options)
    commits = [_rows(0, 40, 7), _rows(1, 25, 5), _rows(2, 9, 2)]
    for rows in commits:
        java_oracle.write_rows(tmp_path, DB, "j", rows)
        _write_ours(catalog, rows)
    _java_reads_equal(java_oracle, tmp_path, 74)
    assert _files(catalog, "o") == _files(catalog, "j")
    assert _next_row_ids(catalog, "o") == _next_row_ids(catalog, "j") == [40, 65, 74]

    java_oracle._gateway.jvm.paimonoracle.OptionsBOracle.compactUnaware(str(tmp_path), DB, "j")
    compact(catalog, f"{DB}.o", options=SMALL_GROUPS)
    after = _java_reads_equal(java_oracle, tmp_path, 74)
    assert sorted(r[3] for r in after) == list(range(74))  # every row keeps its own id
    compacted = [f for f in _files(catalog, "o") if f[6] == 1]
    assert compacted and all(f[5] == tuple(ALL) and f[4] is None for f in compacted)

    more = _rows(3, 11, 3)
    java_oracle.write_rows(tmp_path, DB, "j", more)
    _write_ours(catalog, more)
    final = _java_reads_equal(java_oracle, tmp_path, 85)
    assert sorted(r[3] for r in final) == list(range(85))
    assert _next_row_ids(catalog, "o")[-1] == _next_row_ids(catalog, "j")[-1] == 85
    # our reads of our table give the same
    assert _ours(catalog.get_table(f"{DB}.o")) == final


@pytest.mark.parametrize("door", ["python", "spark"])
def test_our_deletion_vector_delete_and_compaction_read_by_java_as_javas(
    java_oracle: JavaOracle, tmp_path: Path, request: pytest.FixtureRequest, door: str
) -> None:
    """With deletion vectors: a DELETE (``table.delete`` or Spark's) marks rows and every
    other row keeps its id, and the compaction that drops the marked rows keeps the ids of the
    rest, as Java's do."""
    options = {"row-tracking.enabled": "true", "bucket": "-1", "deletion-vectors.enabled": "true"}
    catalog = _create_both(java_oracle, tmp_path, options)
    for rows in (_rows(0, 30, 4), _rows(1, 12, 3)):
        java_oracle.write_rows(tmp_path, DB, "j", rows)
        _write_ours(catalog, rows)
    gone = [1, 4, 5, 22, 1003, 1011]
    java_oracle.delete_where(tmp_path, DB, "j", "a", gone)
    if door == "spark":
        from paimon_pyspark.spark.dml import delete

        spark = request.getfixturevalue("spark")
        assert delete(spark, str(tmp_path), f"{DB}.o", f"a IN ({', '.join(map(str, gone))})")
    else:
        table = catalog.get_table(f"{DB}.o")
        predicate = table.new_read_builder().new_predicate_builder().is_in("a", gone)
        assert table.delete(predicate) == len(gone)
    rows = _java_reads_equal(java_oracle, tmp_path, 42 - len(gone))
    assert not {r[0] for r in rows} & set(gone)

    java_oracle._gateway.jvm.paimonoracle.OptionsBOracle.compactUnaware(str(tmp_path), DB, "j")
    compact(catalog, f"{DB}.o", options=SMALL_GROUPS)
    assert _java_reads_equal(java_oracle, tmp_path, 42 - len(gone)) == rows
    assert any(f[6] == 1 for f in _files(catalog, "o"))  # compacted, marked rows dropped


def test_our_overwrite_read_by_java_as_javas(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """An overwrite's files are new APPEND files: numbered on from the table's nextRowId."""
    options = {"row-tracking.enabled": "true", "bucket": "-1"}
    catalog = _create_both(java_oracle, tmp_path, options)
    first, second = _rows(0, 20, 3), _rows(1, 13, 4)
    java_oracle.write_rows(tmp_path, DB, "j", first)
    _write_ours(catalog, first)
    payload = json.dumps([to_wire(r) for r in second])
    java_oracle._gateway.jvm.paimonoracle.OptionsBOracle.overwriteRows(
        str(tmp_path), DB, "j", payload
    )
    _write_ours(catalog, second, overwrite=True)
    rows = _java_reads_equal(java_oracle, tmp_path, 13)
    assert sorted(r[3] for r in rows) == list(range(20, 33))
    assert _files(catalog, "o") == _files(catalog, "j")
    assert _next_row_ids(catalog, "o") == _next_row_ids(catalog, "j") == [20, 33]


def test_java_and_we_write_in_turns(java_oracle: JavaOracle, tmp_path: Path) -> None:
    """Java writes, we append, Java appends, we compact, Java appends: Java and we read the
    same rows and ids, which are the ids of a table Java wrote alone with the same commits."""
    options = {"row-tracking.enabled": "true", "bucket": "-1"}
    catalog = _create_both(java_oracle, tmp_path, options, partitioned=False)
    java_oracle.create_table(tmp_path, DB, "alone", FIELDS, options=options)
    batches = [_rows(b, 10 + b, 1) for b in range(4)]
    for b, rows in enumerate(batches):
        java_oracle.write_rows(tmp_path, DB, "alone", rows)
        if b % 2:
            _write_ours(catalog, rows, "j")
        else:
            java_oracle.write_rows(tmp_path, DB, "j", rows)
        if b == 2:
            compact(catalog, f"{DB}.j", options=SMALL_GROUPS)
            oracle = java_oracle._gateway.jvm.paimonoracle.OptionsBOracle
            oracle.compactUnaware(str(tmp_path), DB, "alone")
    java = sorted_rows(read_fields(java_oracle, tmp_path, DB, "j", ALL))
    alone = sorted_rows(read_fields(java_oracle, tmp_path, DB, "alone", ALL))
    assert len(java) == 46
    assert java == alone
    assert sorted(r[3] for r in java) == list(range(46))
    table = catalog.get_table(f"{DB}.j")
    assert _ours(table) == java
