"""Schema evolution against Java Paimon 1.4.2: the same changes write the same schema files,
Java reads our evolved tables, we read Java's (with files on both sides of each change, before
and after compactions by either engine), and what Java refuses we refuse with its message.

Java's side is ``Catalog.alterTable`` / ``renameTable`` (tests/interop/java/
SchemaEvolutionOracle.java through schema_evolution_oracle.py); twin tables are created and
written by Java, then one is altered by Java and the other by us.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from schema_evolution_oracle import java_alter_table, java_rename_table

from paimon_pyspark import CatalogFactory, FileSystemCatalog
from paimon_pyspark.errors import SchemaChangeError, TableAlreadyExistError, TableNotExistError
from paimon_pyspark.procedures import compact
from paimon_pyspark.store.schema_change import Move, SchemaChange
from paimon_pyspark.types.arrow import to_arrow_type
from paimon_pyspark.types.data_types import (
    DataField,
    DecimalType,
    RowType,
    TimestampType,
    parse_atomic_sql,
)

pytestmark = [pytest.mark.java, pytest.mark.slow]

DB = "db"
T = parse_atomic_sql

PK_FIELDS = [
    ("pt", "STRING NOT NULL"),
    ("id", "INT NOT NULL"),
    ("v", "STRING"),
    ("n", "INT"),
    ("f", "FLOAT"),
    ("d", "DECIMAL(10, 2)"),
    ("ts", "TIMESTAMP(3)"),
    ("dt", "DATE"),
    ("nn", "BIGINT NOT NULL"),
]
PK_ROWS = [
    ["a", 1, "x", 10, 1.5, "1.25", 1_000_000_000, 10, 7],
    ["b", 2, "y", None, None, None, None, None, 8],
]
APPEND_FIELDS = [("k", "INT"), ("v", "STRING"), ("n", "INT")]
APPEND_ROWS = [[1, "a", 10], [2, "b", 20]]


def read_ours(catalog: FileSystemCatalog, ident: str) -> list[list[Any]]:
    rb = catalog.get_table(ident).new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def latest_schema_json(catalog: FileSystemCatalog, ident: str) -> dict[str, Any]:
    directory = Path(catalog.table_path(ident), "schema")
    latest = max(int(n.split("-")[1]) for n in os.listdir(directory))
    obj: dict[str, Any] = json.loads((directory / f"schema-{latest}").read_text())
    obj.pop("timeMillis")
    return obj


def twins(
    oracle: JavaOracle, wh: str, *, pk: bool, options: dict[str, str] | None = None
) -> tuple[str, str]:
    """Two equal tables created and written by Java: ``java_t`` and ``ours_t``."""
    for name in ("java_t", "ours_t"):
        if pk:
            oracle.create_table(
                wh,
                DB,
                name,
                PK_FIELDS,
                partition_keys=["pt"],
                primary_keys=["pt", "id"],
                options={"bucket": "1", "write-only": "true", **(options or {})},
            )
            oracle.write_rows(wh, DB, name, PK_ROWS)
        else:
            oracle.create_table(wh, DB, name, APPEND_FIELDS, options=options or {})
            oracle.write_rows(wh, DB, name, APPEND_ROWS)
    return "java_t", "ours_t"


ACCEPTED: list[tuple[str, bool, dict[str, str], list[SchemaChange]]] = [
    ("add_end", True, {}, [SchemaChange.add_column("c", T("INT"), "a comment")]),
    ("add_first", True, {}, [SchemaChange.add_column("c", pa.int64(), None, Move.first("c"))]),
    (
        "add_after",
        True,
        {},
        [SchemaChange.add_column("c", T("STRING"), None, Move.after("c", "v"))],
    ),
    (
        "add_before",
        True,
        {},
        [SchemaChange.add_column("c", T("DOUBLE"), None, Move.before("c", "id"))],
    ),
    (
        "add_row",
        True,
        {},
        [
            SchemaChange.add_column(
                "r",
                RowType(
                    (
                        DataField(0, "a", T("INT")),
                        DataField(0, "b", RowType((DataField(0, "c", T("STRING")),))),
                    )
                ),
            ),
            SchemaChange.add_column("s", T("INT")),
        ],
    ),
    (
        "add_before_partition",
        True,
        {"add-column-before-partition": "true"},
        [SchemaChange.add_column("c", T("INT"))],
    ),
    ("drop", True, {}, [SchemaChange.drop_column("v")]),
    ("rename", True, {}, [SchemaChange.rename_column("v", "w")]),
    ("rename_pk", True, {}, [SchemaChange.rename_column("id", "key")]),
    (
        "rename_bucket_key",
        False,
        {"bucket": "2", "bucket-key": "k"},
        [SchemaChange.rename_column("k", "kk")],
    ),
    ("int_to_bigint", True, {}, [SchemaChange.update_column_type("n", pa.int64())]),
    ("int_to_string", True, {}, [SchemaChange.update_column_type("n", T("STRING"))]),
    ("bigint_to_int", True, {}, [SchemaChange.update_column_type("nn", T("INT NOT NULL"))]),
    ("float_to_double", True, {}, [SchemaChange.update_column_type("f", T("DOUBLE"))]),
    ("decimal_wider", True, {}, [SchemaChange.update_column_type("d", DecimalType(12, 2))]),
    ("ts_precision", True, {}, [SchemaChange.update_column_type("ts", TimestampType(6))]),
    (
        "keep_nullability",
        True,
        {},
        [SchemaChange.update_column_type("nn", T("DOUBLE"), keep_nullability=True)],
    ),
    ("not_null_to_null", True, {}, [SchemaChange.update_column_nullability("nn", True)]),
    (
        "null_to_not_null_allowed",
        True,
        {"alter-column-null-to-not-null.disabled": "false"},
        [SchemaChange.update_column_nullability("n", False)],
    ),
    ("column_comment", True, {}, [SchemaChange.update_column_comment("v", "the value")]),
    ("table_comment", True, {}, [SchemaChange.update_comment("a table")]),
    ("position", True, {}, [SchemaChange.update_column_position(Move.after("v", "dt"))]),
    ("position_first", True, {}, [SchemaChange.update_column_position(Move.first("n"))]),
    (
        "several",
        True,
        {},
        [
            SchemaChange.add_column("c", T("INT")),
            SchemaChange.rename_column("c", "c2"),
            SchemaChange.drop_column("v"),
            SchemaChange.set_option("snapshot.num-retained.min", "3"),
        ],
    ),
]


@pytest.mark.parametrize("case", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_same_change_writes_the_same_schema_file_and_java_reads_ours(
    tmp_path: Path,
    java_oracle: JavaOracle,
    case: tuple[str, bool, dict[str, str], list[SchemaChange]],
) -> None:
    _, pk, options, changes = case
    wh = str(tmp_path / "wh")
    java_t, ours_t = twins(java_oracle, wh, pk=pk, options=options)
    catalog = CatalogFactory.create({"warehouse": wh})
    result = java_alter_table(java_oracle, wh, DB, java_t, changes)
    assert result.error is None, result.error
    catalog.alter_table(f"{DB}.{ours_t}", changes)
    assert latest_schema_json(catalog, f"{DB}.{ours_t}") == latest_schema_json(
        catalog, f"{DB}.{java_t}"
    )
    java_view = java_oracle.read_table(wh, DB, ours_t)
    assert sorted_rows(java_view.rows) == read_ours(catalog, f"{DB}.{ours_t}")
    assert read_ours(catalog, f"{DB}.{java_t}") == sorted_rows(
        java_oracle.read_table(wh, DB, java_t).rows
    )


REFUSED: list[tuple[str, bool, dict[str, str], list[SchemaChange]]] = [
    ("add_existing", True, {}, [SchemaChange.add_column("v", T("INT"))]),
    ("add_not_null", True, {}, [SchemaChange.add_column("c", T("INT NOT NULL"))]),
    (
        "add_after_missing",
        True,
        {},
        [SchemaChange.add_column("c", T("INT"), None, Move.after("c", "nope"))],
    ),
    ("drop_pk", True, {}, [SchemaChange.drop_column("id")]),
    ("drop_partition", True, {}, [SchemaChange.drop_column("pt")]),
    ("drop_missing", True, {}, [SchemaChange.drop_column("nope")]),
    (
        "drop_all",
        False,
        {},
        [
            SchemaChange.drop_column("k"),
            SchemaChange.drop_column("v"),
            SchemaChange.drop_column("n"),
        ],
    ),
    (
        "drop_bucket_key",
        False,
        {"bucket": "2", "bucket-key": "k"},
        [SchemaChange.drop_column("k")],
    ),
    ("drop_sequence_field", True, {"sequence.field": "n"}, [SchemaChange.drop_column("n")]),
    ("rename_to_existing", True, {}, [SchemaChange.rename_column("v", "n")]),
    ("rename_partition", True, {}, [SchemaChange.rename_column("pt", "p")]),
    ("rename_missing", True, {}, [SchemaChange.rename_column("nope", "x")]),
    ("type_of_pk", True, {}, [SchemaChange.update_column_type("id", T("BIGINT NOT NULL"))]),
    ("type_of_partition", True, {}, [SchemaChange.update_column_type("pt", T("INT NOT NULL"))]),
    ("int_to_date", True, {}, [SchemaChange.update_column_type("n", T("DATE"))]),
    ("date_to_date", True, {}, [SchemaChange.update_column_type("dt", T("DATE"))]),
    ("date_to_int", True, {}, [SchemaChange.update_column_type("dt", T("INT"))]),
    ("ts_to_varchar", True, {}, [SchemaChange.update_column_type("ts", T("VARCHAR(10)"))]),
    (
        "narrowing_when_explicit_disabled",
        True,
        {"disable-explicit-type-casting": "true"},
        [SchemaChange.update_column_type("nn", T("INT NOT NULL"))],
    ),
    ("type_to_not_null", True, {}, [SchemaChange.update_column_type("n", T("BIGINT NOT NULL"))]),
    ("nullability_to_not_null", True, {}, [SchemaChange.update_column_nullability("n", False)]),
    ("nullability_of_pk", True, {}, [SchemaChange.update_column_nullability("id", True)]),
    ("comment_missing", True, {}, [SchemaChange.update_column_comment("nope", "c")]),
    ("move_itself", True, {}, [SchemaChange.update_column_position(Move.first("pt"))]),
    ("move_missing", True, {}, [SchemaChange.update_column_position(Move.first("nope"))]),
    (
        "move_missing_reference",
        True,
        {},
        [SchemaChange.update_column_position(Move.after("v", "nope"))],
    ),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_changes_java_refuses_are_refused_with_its_message(
    tmp_path: Path,
    java_oracle: JavaOracle,
    case: tuple[str, bool, dict[str, str], list[SchemaChange]],
) -> None:
    _, pk, options, changes = case
    wh = str(tmp_path / "wh")
    java_t, ours_t = twins(java_oracle, wh, pk=pk, options=options)
    catalog = CatalogFactory.create({"warehouse": wh})
    result = java_alter_table(java_oracle, wh, DB, java_t, changes)
    assert result.error is not None, "Java accepted the change"
    with pytest.raises(SchemaChangeError) as refused:
        catalog.alter_table(f"{DB}.{ours_t}", changes)
    assert result.message.replace(java_t, ours_t) in str(refused.value)
    assert sorted(os.listdir(Path(catalog.table_path(f"{DB}.{ours_t}"), "schema"))) == ["schema-0"]


EVOLVE = [
    SchemaChange.add_column("c", T("INT"), None, Move.after("c", "v")),
    SchemaChange.rename_column("v", "w"),
    SchemaChange.update_column_type("n", T("BIGINT")),
    SchemaChange.drop_column("f"),
]
"""Fields after EVOLVE: pt, id, w, c, n (BIGINT), d, ts, dt, nn."""
EVOLVED_ROWS = [
    ["b", 2, "y2", 5, 2**40, "2.50", None, 3, 9],
    ["c", 3, "z", None, 30, None, 2_000_000_000, None, 10],
]


def check_same(oracle: JavaOracle, catalog: FileSystemCatalog, wh: str, name: str) -> None:
    java = sorted_rows(oracle.read_table(wh, DB, name).rows)
    assert java == read_ours(catalog, f"{DB}.{name}")
    assert len(java) == 3


def schema_ids(catalog: FileSystemCatalog, name: str) -> dict[str, set[int]]:
    """Partition -> schema ids of its data files. A full compaction rewrites a bucket with
    several files into the new schema and, as Java, only upgrades a lone file (its id stays)."""
    rb = catalog.get_table(f"{DB}.{name}").new_read_builder()
    out: dict[str, set[int]] = {}
    for split in rb.new_scan().plan().splits():
        out.setdefault(split.partition_values[0], set()).update(f.schema_id for f in split.files)
    return out


def test_we_read_a_pk_table_java_evolved_before_and_after_compactions(
    tmp_path: Path, java_oracle: JavaOracle
) -> None:
    wh = str(tmp_path / "wh")
    twins(java_oracle, wh, pk=True)
    catalog = CatalogFactory.create({"warehouse": wh})
    assert java_alter_table(java_oracle, wh, DB, "java_t", EVOLVE).error is None
    java_oracle.write_rows(wh, DB, "java_t", EVOLVED_ROWS)
    assert schema_ids(catalog, "java_t") == {"a": {0}, "b": {0, 1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "java_t")
    java_oracle.compact(wh, DB, "java_t")
    assert schema_ids(catalog, "java_t") == {"a": {0}, "b": {1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "java_t")
    more = [SchemaChange.add_column("e", T("STRING")), SchemaChange.rename_column("w", "w2")]
    assert java_alter_table(java_oracle, wh, DB, "java_t", more).error is None
    java_oracle.write_rows(wh, DB, "java_t", [["a", 1, "x2", 1, 1, None, None, None, 1, "e"]])
    check_same(java_oracle, catalog, wh, "java_t")
    assert compact(catalog, f"{DB}.java_t") is not None
    assert schema_ids(catalog, "java_t") == {"a": {2}, "b": {1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "java_t")


def test_java_reads_a_pk_table_we_evolved_before_and_after_compactions(
    tmp_path: Path, java_oracle: JavaOracle
) -> None:
    wh = str(tmp_path / "wh")
    twins(java_oracle, wh, pk=True)
    catalog = CatalogFactory.create({"warehouse": wh})
    ident = f"{DB}.ours_t"
    catalog.alter_table(ident, EVOLVE)
    table = catalog.get_table(ident)
    arrow = pa.schema(
        [pa.field(f.name, to_arrow_type(f.type), f.type.nullable) for f in table.fields]
    )
    rows = [dict(zip(arrow.names, r, strict=True)) for r in EVOLVED_ROWS]
    for r in rows:
        r["d"] = None if r["d"] is None else decimal.Decimal(r["d"])
        r["ts"] = (
            None
            if r["ts"] is None
            else dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=r["ts"] // 1000)
        )
        r["dt"] = None if r["dt"] is None else dt.date(1970, 1, 1) + dt.timedelta(days=r["dt"])
    builder = table.new_batch_write_builder()
    with builder.new_write() as write:
        write.write_arrow(pa.Table.from_pylist(rows, schema=arrow))
        messages = write.prepare_commit()
    builder.new_commit().commit(messages)
    assert schema_ids(catalog, "ours_t") == {"a": {0}, "b": {0, 1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "ours_t")
    assert compact(catalog, ident) is not None
    assert schema_ids(catalog, "ours_t") == {"a": {0}, "b": {1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "ours_t")
    catalog.alter_table(ident, [SchemaChange.add_column("e", T("STRING"))])
    java_oracle.write_rows(wh, DB, "ours_t", [["a", 1, "x2", 1, 1, None, None, None, 1, "e"]])
    java_oracle.compact(wh, DB, "ours_t")
    assert schema_ids(catalog, "ours_t") == {"a": {2}, "b": {1}, "c": {1}}
    check_same(java_oracle, catalog, wh, "ours_t")


def test_rename_table_as_java(tmp_path: Path, java_oracle: JavaOracle) -> None:
    wh = str(tmp_path / "wh")
    twins(java_oracle, wh, pk=False)
    catalog = CatalogFactory.create({"warehouse": wh})
    catalog.rename_table(f"{DB}.ours_t", f"{DB}.ours_u")
    assert sorted_rows(java_oracle.read_table(wh, DB, "ours_u").rows) == sorted_rows(APPEND_ROWS)
    assert java_rename_table(java_oracle, wh, (DB, "java_t"), (DB, "java_u")).error is None
    assert read_ours(catalog, f"{DB}.java_u") == sorted_rows(APPEND_ROWS)
    refused = java_rename_table(java_oracle, wh, (DB, "java_u"), (DB, "ours_u"))
    assert refused.error is not None and "already exists" in refused.message
    with pytest.raises(TableAlreadyExistError):
        catalog.rename_table(f"{DB}.java_u", f"{DB}.ours_u")
    missing = java_rename_table(java_oracle, wh, (DB, "nope"), (DB, "x"))
    assert missing.error is not None and "does not exist" in missing.message
    with pytest.raises(TableNotExistError):
        catalog.rename_table(f"{DB}.nope", f"{DB}.x")


def test_we_read_nested_row_fields_java_evolved(tmp_path: Path, java_oracle: JavaOracle) -> None:
    """Java changes fields inside a ROW column (we refuse nested paths ourselves); files on both
    sides read by nested field id."""
    wh = str(tmp_path / "wh")
    row = {
        "type": "ROW",
        "fields": [
            {"id": 2, "name": "a", "type": "INT"},
            {"id": 3, "name": "b", "type": "STRING"},
            {"id": 4, "name": "gone", "type": "INT"},
        ],
    }
    java_oracle.create_table(wh, DB, "nested", [("k", "INT"), ("r", row)])
    java_oracle.write_rows(wh, DB, "nested", [[1, [1, "p", 0]], [2, None]])
    changes = [
        SchemaChange.add_column(["r", "c"], T("INT")),
        SchemaChange.rename_column(["r", "b"], "bb"),
        SchemaChange.update_column_type(["r", "a"], T("BIGINT")),
        SchemaChange.drop_column(["r", "gone"]),
    ]
    assert java_alter_table(java_oracle, wh, DB, "nested", changes).error is None
    java_oracle.write_rows(wh, DB, "nested", [[3, [2**40, "q", 9]]])
    catalog = CatalogFactory.create({"warehouse": wh})
    java = sorted_rows(java_oracle.read_table(wh, DB, "nested").rows)
    assert java == [[1, [1, "p", None]], [2, None], [3, [2**40, "q", 9]]]
    assert read_ours(catalog, f"{DB}.nested") == java


NESTED_ROW = {
    "type": "ROW",
    "fields": [
        {"id": 2, "name": "a", "type": "INT"},
        {"id": 3, "name": "b", "type": "STRING"},
        {"id": 4, "name": "gone", "type": "INT"},
    ],
}
NESTED_CHANGES = [
    SchemaChange.add_column(["r", "c"], T("INT"), "inner", Move.after("c", "a")),
    SchemaChange.rename_column(["r", "b"], "bb"),
    SchemaChange.update_column_type(["r", "a"], T("BIGINT")),
    SchemaChange.drop_column(["r", "gone"]),
    SchemaChange.update_column_comment(["r", "bb"], "renamed"),
]


def test_nested_changes_write_java_schema_files_and_java_reads_ours(
    tmp_path: Path, java_oracle: JavaOracle
) -> None:
    wh = str(tmp_path / "wh")
    for name in ("java_n", "ours_n"):
        java_oracle.create_table(wh, DB, name, [("k", "INT"), ("r", NESTED_ROW)])
        java_oracle.write_rows(wh, DB, name, [[1, [1, "p", 0]], [2, None]])
    catalog = CatalogFactory.create({"warehouse": wh})
    assert java_alter_table(java_oracle, wh, DB, "java_n", NESTED_CHANGES).error is None
    catalog.alter_table(f"{DB}.ours_n", NESTED_CHANGES)
    assert latest_schema_json(catalog, f"{DB}.ours_n") == latest_schema_json(
        catalog, f"{DB}.java_n"
    )
    expected = [[1, [1, None, "p"]], [2, None]]
    assert sorted_rows(java_oracle.read_table(wh, DB, "ours_n").rows) == expected
    assert read_ours(catalog, f"{DB}.ours_n") == expected


@pytest.mark.parametrize(
    "change",
    [
        SchemaChange.add_column(["r", "a"], T("INT")),
        SchemaChange.add_column(["x", "a"], T("INT")),
        SchemaChange.rename_column(["r", "a"], "b"),
        SchemaChange.drop_column(["r", "nope"]),
        SchemaChange.update_column_type(["r", "a"], T("DATE")),
        SchemaChange.update_column_nullability(["r", "a"], False),
    ],
    ids=["add_existing", "missing_parent", "rename_to_existing", "drop_missing", "type", "nn"],
)
def test_nested_changes_java_refuses_are_refused_with_its_message(
    tmp_path: Path, java_oracle: JavaOracle, change: SchemaChange
) -> None:
    wh = str(tmp_path / "wh")
    for name in ("java_n", "ours_n"):
        java_oracle.create_table(wh, DB, name, [("k", "INT"), ("r", NESTED_ROW)])
    catalog = CatalogFactory.create({"warehouse": wh})
    result = java_alter_table(java_oracle, wh, DB, "java_n", [change])
    assert result.error is not None, "Java accepted the change"
    with pytest.raises(SchemaChangeError) as refused:
        catalog.alter_table(f"{DB}.ours_n", [change])
    assert result.message.replace("java_n", "ours_n") in str(refused.value)
