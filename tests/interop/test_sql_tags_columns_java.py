"""Against Java Paimon 1.4.2: replaced and renamed tags (maintenance/tags.py, behind ``ALTER
TABLE ... REPLACE / RENAME TAG`` and ``CALL sys.replace_tag / rename_tag``), which Java's
TagManager lists, its ``$tags`` shows with their snapshot and retention, and time travel reads,
also after our expiry (a tag Java wrote keeps its bytes when we rename it); and column changes
through an ARRAY's ``element`` and a MAP's ``value`` (Spark's paths), which write the schema
file Java's SchemaManager writes for the same changes, on tables Java then reads."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, list_tags, read_system_table, sorted_rows
from schema_evolution_oracle import java_alter_table

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.procedures import calls, expire_snapshots
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.types.data_types import parse_atomic_sql

pytestmark = [pytest.mark.java, pytest.mark.slow]

SCHEMA = pa.schema([pa.field("k", pa.int64(), nullable=False), ("v", pa.string())])


def ours(table: FileStoreTable, sid: int) -> list[list[object]]:
    rb = table.copy({"scan.snapshot-id": str(sid)}).new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def test_java_reads_the_tags_we_replace_and_rename(java_oracle: JavaOracle, tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options={"bucket": "1"})
    catalog.create_table("db.t", schema)
    table = catalog.get_table("db.t")
    for i in range(3):
        builder = table.new_batch_write_builder()
        with builder.new_write() as write:
            write.write_arrow(pa.table({"k": [i, 10], "v": [f"v{i}", f"w{i}"]}, schema=SCHEMA))
            builder.new_commit().commit(write.prepare_commit())
    expected = {sid: ours(table, sid) for sid in (1, 2, 3)}

    calls.create_tag(catalog, "db.t", "a", 1)
    calls.rename_tag(catalog, "db.t", "a", "renamed")
    calls.replace_tag(catalog, "db.t", "renamed", 2, "12 h")
    java_oracle.create_tag(tmp_path, "db", "t", "j", 3)
    java_bytes = (tmp_path / "db.db" / "t" / "tag" / "tag-j").read_bytes()
    calls.rename_tag(catalog, "db.t", tagname="j", targettagname="jj")
    assert (tmp_path / "db.db" / "t" / "tag" / "tag-jj").read_bytes() == java_bytes

    java = list_tags(java_oracle, tmp_path, "db", "t")
    assert (java.names, java.ids) == (["jj", "renamed"], {"jj": 3, "renamed": 2})
    tags = read_system_table(java_oracle, tmp_path, "db", "t$tags")
    got = {r[tags.fields.index("tag_name")]: r for r in tags.rows}
    retained = tags.fields.index("time_retained")
    assert (got["renamed"][retained], got["jj"][retained]) == ("PT12H", None)

    expire_snapshots(catalog, "db.t", retain_max=1, retain_min=1, older_than="2999-01-01 00:00:00")
    assert table.snapshot_manager.list_ids() == [3]
    assert sorted_rows(java_oracle.read_tag(tmp_path, "db", "t", "renamed")) == expected[2]
    assert sorted_rows(java_oracle.read_tag(tmp_path, "db", "t", "jj")) == expected[3]


ROW_PQ = {
    "type": "ROW",
    "fields": [{"id": 10, "name": "p", "type": "INT"}, {"id": 11, "name": "q", "type": "INT"}],
}
ROW_U = {"type": "ROW", "fields": [{"id": 12, "name": "u", "type": "INT"}]}
NESTED_FIELDS = [
    ("k", "INT"),
    ("arr", {"type": "ARRAY", "element": ROW_PQ}),
    ("m", {"type": "MAP", "key": "STRING NOT NULL", "value": ROW_U}),
    ("ai", {"type": "ARRAY", "element": "INT"}),
]
# the changes `ALTER TABLE ... ADD COLUMNS (arr.element.r STRING)`, `DROP COLUMN arr.element.q`,
# `RENAME COLUMN m.value.u TO uu`, `ALTER COLUMN m.value.uu TYPE BIGINT`,
# `ALTER COLUMN ai.element TYPE BIGINT` and `... COMMENT` make (sql/alter_columns.py)
NESTED_CHANGES = [
    SchemaChange.add_column(["arr", "element", "r"], parse_atomic_sql("STRING")),
    SchemaChange.drop_column(["arr", "element", "q"]),
    SchemaChange.rename_column(["m", "value", "u"], "uu"),
    SchemaChange.update_column_type(
        ["m", "value", "uu"], parse_atomic_sql("BIGINT"), keep_nullability=True
    ),
    SchemaChange.update_column_type(
        ["ai", "element"], parse_atomic_sql("BIGINT"), keep_nullability=True
    ),
    SchemaChange.update_column_comment(["arr", "element", "p"], "inner"),
]


def test_changes_through_array_and_map_paths_as_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    wh = str(tmp_path)
    row = [1, [[1, 2]], [["a", [5]]], [7]]
    for name in ("java_n", "ours_n"):
        java_oracle.create_table(wh, "db", name, NESTED_FIELDS)
        java_oracle.write_rows(wh, "db", name, [row])
    catalog = CatalogFactory.create({"warehouse": wh})
    assert java_alter_table(java_oracle, wh, "db", "java_n", NESTED_CHANGES).error is None
    catalog.alter_table("db.ours_n", NESTED_CHANGES)
    schemas = [
        json.loads((tmp_path / "db.db" / n / "schema" / "schema-1").read_text())
        for n in ("java_n", "ours_n")
    ]
    for schema in schemas:
        schema.pop("timeMillis")
    assert schemas[0] == schemas[1]
    expected = [[1, [[1, None]], [["a", [5]]], [7]]]
    assert sorted_rows(java_oracle.read_table(wh, "db", "ours_n").rows) == expected
    table = catalog.get_table("db.ours_n")
    rb = table.new_read_builder()
    got = canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits()))
    assert sorted_rows(got) == expected
