"""ALTER TABLE options against Java Paimon 1.4.2: each engine reads the schema the other one
published, and both refuse and accept the same changes.

Java's side is its ``Catalog.alterTable`` with ``SchemaChange.setOption`` / ``removeOption``
(``java_oracle.alter_table_options``); the rule cases run on twin tables Java created and wrote,
one altered by Java and one by us.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from java_oracle import (
    JavaOracle,
    alter_table_options,
    canonical_rows,
    sorted_rows,
    table_schema,
)

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import OptionError, PaimonError, SchemaChangeError, SchemaError
from paimon_pyspark.store.schema_change import SchemaChange

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING")]
ARROW = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
ROWS = [[1, "a"], [2, "b"], [3, "c"]]

Change = tuple[str, str | None]
"""(key, value) sets an option, (key, None) removes it: both engines' form of one change."""


def ours(changes: list[Change]) -> list[SchemaChange]:
    return [
        SchemaChange.remove_option(k) if v is None else SchemaChange.set_option(k, v)
        for k, v in changes
    ]


def read_ours(catalog: FileSystemCatalog, ident: str) -> list[list[object]]:
    rb = catalog.get_table(ident).new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def write_ours(catalog: FileSystemCatalog, ident: str, rows: list[list[object]]) -> None:
    table = catalog.get_table(ident)
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.table(list(zip(*rows, strict=True)), schema=ARROW))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)


def test_java_reads_a_table_we_altered(tmp_path: Path, java_oracle: JavaOracle) -> None:
    wh = str(tmp_path / "wh")
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.create_database(DB)
    schema = Schema.from_pyarrow_schema(ARROW, primary_keys=["id"], options={"bucket": "2"})
    catalog.create_table("db.t", schema)
    write_ours(catalog, "db.t", ROWS)
    catalog.alter_table(
        "db.t",
        ours([("snapshot.num-retained.min", "3"), ("file.format", "orc"), ("write-only", "true")]),
    )
    write_ours(catalog, "db.t", [[2, "B"], [4, "d"]])
    catalog.alter_table("db.t", ours([("write-only", None)]))

    java = table_schema(java_oracle, wh, DB, "t")
    assert java["id"] == 2
    assert java["options"] == catalog.get_table("db.t").table_schema.options
    assert java["options"] == {
        "bucket": "2",
        "snapshot.num-retained.min": "3",
        "file.format": "orc",
    }
    expected = [[1, "a"], [2, "B"], [3, "c"], [4, "d"]]
    assert sorted_rows(java_oracle.read_table(wh, DB, "t").rows) == expected
    assert [s["schemaId"] for s in java_oracle.snapshots(wh, DB, "t")] == [0, 1]

    # Java writes under the schema we published, and we read what it wrote
    java_oracle.write_rows(wh, DB, "t", [[5, "e"]])
    assert java_oracle.snapshots(wh, DB, "t")[-1]["schemaId"] == 2
    assert read_ours(catalog, "db.t") == [*expected, [5, "e"]]


def test_we_read_a_table_java_altered(tmp_path: Path, java_oracle: JavaOracle) -> None:
    wh = str(tmp_path / "wh")
    java_oracle.create_table(wh, DB, "t", FIELDS, primary_keys=["id"], options={"bucket": "2"})
    java_oracle.write_rows(wh, DB, "t", ROWS)
    changes: list[Change] = [("target-file-size", "32 mb"), ("sequence.field", "v")]
    assert alter_table_options(java_oracle, wh, DB, "t", changes).schema_id == 1
    assert alter_table_options(java_oracle, wh, DB, "t", [("sequence.field", None)]).schema_id == 2

    catalog = CatalogFactory.create({"warehouse": wh})
    table = catalog.get_table("db.t")
    assert table.table_schema.id == 2
    assert table.table_schema.options == {"bucket": "2", "target-file-size": "32 mb"}
    assert table.table_schema.options == table_schema(java_oracle, wh, DB, "t")["options"]
    assert table.options.target_file_size(True) == 32 * 1024 * 1024
    assert read_ours(catalog, "db.t") == sorted_rows(ROWS)

    write_ours(catalog, "db.t", [[3, "C"], [9, "z"]])
    latest = catalog.get_table("db.t").snapshot_manager.latest()
    assert latest is not None and latest.schema_id == 2
    assert sorted_rows(java_oracle.read_table(wh, DB, "t").rows) == [
        [1, "a"],
        [2, "b"],
        [3, "C"],
        [9, "z"],
    ]


# (name, options at create, Java writes a snapshot first, changes, our error if Java refuses)
RULES: list[tuple[str, dict[str, str], bool, list[Change], type[PaimonError] | None]] = [
    ("fixed_to_fixed", {"bucket": "2"}, True, [("bucket", "4")], None),
    ("fixed_to_postpone", {"bucket": "2"}, True, [("bucket", "-2")], None),
    ("postpone_to_fixed", {"bucket": "-2"}, True, [("bucket", "3")], None),
    ("dynamic_to_dynamic", {"bucket": "-1"}, True, [("bucket", "-1")], SchemaChangeError),
    ("default_to_fixed", {}, True, [("bucket", "2")], SchemaChangeError),
    ("fixed_to_dynamic", {"bucket": "2"}, True, [("bucket", "-1")], SchemaChangeError),
    ("reset_bucket", {"bucket": "2"}, True, [("bucket", None)], SchemaChangeError),
    ("bucket_zero", {"bucket": "2"}, True, [("bucket", "0")], OptionError),
    ("bucket_text", {"bucket": "2"}, True, [("bucket", "abc")], OptionError),
    (
        "same_merge_engine",
        {"bucket": "2"},
        True,
        [("merge-engine", "deduplicate")],
        SchemaChangeError,
    ),
    ("reset_merge_engine", {"bucket": "2"}, True, [("merge-engine", None)], SchemaChangeError),
    ("primary_key", {"bucket": "2"}, True, [("primary-key", "id")], SchemaChangeError),
    ("bucket_key", {"bucket": "2"}, True, [("bucket-key", "id")], SchemaChangeError),
    ("reset_rowkind", {"bucket": "2"}, True, [("rowkind.field", None)], SchemaChangeError),
    ("force_lookup", {"bucket": "2"}, True, [("force-lookup", "true")], SchemaChangeError),
    ("sequence_field", {"bucket": "2"}, True, [("sequence.field", "v")], None),
    (
        "ignore_delete_off",
        {"bucket": "2", "ignore-delete": "true"},
        True,
        [("ignore-delete", "false")],
        SchemaChangeError,
    ),
    (
        "ignore_delete_reset",
        {"bucket": "2", "ignore-delete": "true"},
        True,
        [("ignore-delete", None)],
        None,
    ),
    (
        "deletion_vectors",
        {"bucket": "2"},
        True,
        [("deletion-vectors.enabled", "true")],
        SchemaChangeError,
    ),
    ("remove_unset", {"bucket": "2"}, True, [("no-such-option", None)], None),
    ("two_changes", {"bucket": "2"}, True, [("write-only", "true"), ("bucket", "5")], None),
    ("empty_merge_engine", {"bucket": "2"}, False, [("merge-engine", "first-row")], None),
    ("empty_dynamic_to_fixed", {"bucket": "-1"}, False, [("bucket", "3")], None),
    ("empty_primary_key_twice", {"bucket": "2"}, False, [("primary-key", "id")], SchemaError),
]


@pytest.mark.parametrize(
    ("created", "write", "changes", "refusal"),
    [pytest.param(*case[1:], id=case[0]) for case in RULES],
)
def test_we_refuse_and_accept_what_java_does(
    tmp_path: Path,
    java_oracle: JavaOracle,
    created: dict[str, str],
    write: bool,
    changes: list[Change],
    refusal: type[PaimonError] | None,
) -> None:
    wh = str(tmp_path / "wh")
    for name in ("by_java", "by_us"):
        java_oracle.create_table(wh, DB, name, FIELDS, primary_keys=["id"], options=created)
        if write:
            java_oracle.write_rows(wh, DB, name, ROWS)
    java = alter_table_options(java_oracle, wh, DB, "by_java", changes)
    catalog = CatalogFactory.create({"warehouse": wh})
    if refusal is None:
        assert java.error is None
        catalog.alter_table("db.by_us", ours(changes))
        assert catalog.get_table("db.by_us").table_schema.id == java.schema_id == 1
        assert (
            table_schema(java_oracle, wh, DB, "by_us")["options"]
            == table_schema(java_oracle, wh, DB, "by_java")["options"]
        )
    else:
        assert java.error is not None and java.schema_id is None
        if refusal is SchemaChangeError:
            assert java.error.startswith("UnsupportedOperationException")
        with pytest.raises(refusal):
            catalog.alter_table("db.by_us", ours(changes))
        assert catalog.get_table("db.by_us").table_schema.id == 0
        assert table_schema(java_oracle, wh, DB, "by_java")["id"] == 0


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        pytest.param(("num-levels", "1"), OptionError, id="out_of_range"),
        pytest.param(("path", "/elsewhere"), SchemaChangeError, id="path"),
    ],
)
def test_where_we_are_stricter_than_java(
    tmp_path: Path, java_oracle: JavaOracle, change: Change, refusal: type[PaimonError]
) -> None:
    """Java's alter stores a value its writers later fail on (one LSM level) and a ``path``
    its catalog then overrides; we refuse both at the ALTER, as our CREATE does."""
    wh = str(tmp_path / "wh")
    for name in ("by_java", "by_us"):
        java_oracle.create_table(wh, DB, name, FIELDS, primary_keys=["id"], options={"bucket": "2"})
        java_oracle.write_rows(wh, DB, name, ROWS)
    assert alter_table_options(java_oracle, wh, DB, "by_java", [change]).schema_id == 1
    with pytest.raises(refusal):
        CatalogFactory.create({"warehouse": wh}).alter_table("db.by_us", ours([change]))
    assert table_schema(java_oracle, wh, DB, "by_us")["id"] == 0
