"""Partial-update sequence groups between paimon_pyspark and Java Paimon 1.4.2, row for row.

Per configuration (several groups, a two-field group, aggregates inside groups, the default
aggregate function, ``partial-update.remove-record-on-sequence-group``, ``ignore-delete``; and
two configurations with every function on nested values, sketch and bitmap inside groups), one
seeded workload of five commits of +I/+U/-U/-D records over a few keys, with NULLs and ties in
the sequence fields, is written twice into one warehouse: by Java (``write_rows_kinds``) and by
us (``write_arrow(row_kinds=...)``). Each table is read by both sides as written, after a minor
and after a full compaction (Java's of its table, ours of ours). Both sides must read the same
rows from one table at every stage, and the two tables must hold the same rows as written and
after the full compaction (the merged result of a partial-update key depends on how its records
were grouped into runs, so after a minor compaction the two tables may differ, in Java too).
"""

from __future__ import annotations

import random
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from agg_oracle import JavaSketches
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java]

DB = "db"
VALUES = ["a", "b", "s", "g1", "c", "d", "g2", "h", "e"]
SEQUENCE = ("g1", "g2", "h")
SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        *[(n, pa.string() if n == "s" else pa.int32()) for n in VALUES],
    ]
)
JAVA_FIELDS = [("k", "BIGINT NOT NULL"), *[(n, "STRING" if n == "s" else "INT") for n in VALUES]]
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
GROUPS = {
    "merge-engine": "partial-update",
    "fields.g1.sequence-group": "a,b,s",
    "fields.g2,h.sequence-group": "c,d",
}
CONFIGS: dict[str, dict[str, str]] = {
    "groups": GROUPS,
    "groups-ignore-delete": {**GROUPS, "ignore-delete": "true"},
    "groups-aggregates": {
        **GROUPS,
        "fields.a.aggregate-function": "sum",
        "fields.b.aggregate-function": "last_non_null_value",
        "fields.c.aggregate-function": "max",
        "fields.c.ignore-retract": "true",
        "fields.d.aggregate-function": "last_value",
    },
    "default-sum": {
        "merge-engine": "partial-update",
        "fields.g1.sequence-group": "a,b,s,e",
        "fields.g2,h.sequence-group": "c,d",
        "fields.default-aggregate-function": "sum",
        "fields.s.aggregate-function": "last_value",
    },
    "default-last-non-null-sequence-field": {
        **GROUPS,
        "fields.default-aggregate-function": "last_non_null_value",
        "sequence.field": "e",
    },
    "order-dependent": {
        **GROUPS,
        "partial-update.remove-record-on-sequence-group": "h",
        "fields.s.aggregate-function": "listagg",
        "fields.s.list-agg-delimiter": "/",
        "fields.s.ignore-retract": "true",
        "fields.a.aggregate-function": "first_value",
        "fields.a.ignore-retract": "true",
        "fields.b.aggregate-function": "first_non_null_value",
        "fields.b.ignore-retract": "true",
        "fields.c.aggregate-function": "min",
        "fields.c.ignore-retract": "true",
        "fields.d.aggregate-function": "product",
        "fields.d.ignore-retract": "true",
    },
    "remove-on-sequence-group": {
        **GROUPS,
        "partial-update.remove-record-on-sequence-group": "g1",
        "fields.c.aggregate-function": "sum",
    },
}
STAGES = ("written", "minor", "full")


def workload(name: str) -> list[list[tuple[dict[str, Any], str]]]:
    """Five commits of 40 (row, kind) over 8 keys; sequence fields in 0..3, 30% NULL."""
    rng = random.Random(zlib.crc32(name.encode()))
    commits = []
    for _ in range(5):
        batch = []
        for _ in range(40):
            row: dict[str, Any] = {"k": rng.randrange(8)}
            for n in VALUES:
                top = 3 if n in SEQUENCE else 9
                row[n] = None if rng.random() < 0.3 else rng.randint(0, top)
            if row["s"] is not None:
                row["s"] = rng.choice(["x", "yy", "", " "])
            batch.append((row, rng.choice(["+I", "+I", "+U", "-U", "-D"])))
        commits.append(batch)
    return commits


def create_ours(
    catalog: FileSystemCatalog, table: str, options: dict[str, str], schema: pa.Schema = SCHEMA
) -> None:
    catalog.create_database(DB, ignore_if_exists=True)
    catalog.create_table(
        f"{DB}.{table}", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=options)
    )


def write_ours(
    catalog: FileSystemCatalog,
    table: str,
    batch: list[tuple[dict[str, Any], str]],
    schema: pa.Schema = SCHEMA,
) -> None:
    t = catalog.get_table(f"{DB}.{table}")
    builder = t.new_batch_write_builder()
    with builder.new_write() as w:
        data = pa.Table.from_pylist([r for r, _ in batch], schema=schema)
        w.write_arrow(data, row_kinds=[KINDS[k] for _, k in batch])
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(catalog: FileSystemCatalog, table: str) -> list[list[Any]]:
    rb = catalog.get_table(f"{DB}.{table}").new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_sequence_groups_both_ways(java_oracle: JavaOracle, tmp_path: Path, name: str) -> None:
    options = {"bucket": "1", "write-only": "true", **CONFIGS[name]}
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    create_ours(catalog, "ours", options)
    java_oracle.create_table(tmp_path, DB, "java", JAVA_FIELDS, primary_keys=["k"], options=options)
    for batch in workload(name):
        write_ours(catalog, "ours", batch)
        rows = [[r[n] for n in SCHEMA.names] for r, _ in batch]
        java_oracle.write_rows_kinds(tmp_path, DB, "java", rows, [k for _, k in batch])
    compare_stages(java_oracle, tmp_path, catalog)


def compare_stages(java_oracle: JavaOracle, tmp_path: Path, catalog: FileSystemCatalog) -> None:
    """Both sides read both tables as written, after a minor and after a full compaction."""
    for stage in STAGES:
        if stage != "written":
            compact(catalog, f"{DB}.ours", compact_strategy="minor" if stage == "minor" else None)
            java_oracle.compact(tmp_path, DB, "java", full=stage == "full")
        java_of_java = sorted_rows(java_oracle.read_table(tmp_path, DB, "java").rows)
        ours_of_ours = read_ours(catalog, "ours")
        assert read_ours(catalog, "java") == java_of_java, stage
        assert sorted_rows(java_oracle.read_table(tmp_path, DB, "ours").rows) == ours_of_ours, stage
        assert java_of_java, stage  # the workload leaves rows to compare
        if stage != "minor":
            assert ours_of_ours == java_of_java, stage


# --- the functions on nested values, sketches, bitmaps and a distinct listagg inside groups ----

NESTED = pa.struct([("id", pa.int32()), ("n", pa.int32())])
NESTED_JAVA = {
    "type": "ROW",
    "fields": [
        {"id": 100, "name": "id", "type": "INT"},
        {"id": 101, "name": "n", "type": "INT"},
    ],
}
STAMPED = pa.struct([("v", pa.string()), ("ts", pa.string())])
STAMPED_JAVA = {
    "type": "ROW",
    "fields": [
        {"id": 102, "name": "v", "type": "STRING"},
        {"id": 103, "name": "ts", "type": "STRING"},
    ],
}
# name: (Arrow type, Java type)
NESTED_COLUMNS: dict[str, tuple[pa.DataType, Any]] = {
    "k": (pa.int64(), "BIGINT NOT NULL"),
    "c": (pa.list_(pa.int32()), {"type": "ARRAY", "element": "INT"}),
    "cd": (pa.list_(pa.string()), {"type": "ARRAY", "element": "STRING"}),
    "mm": (
        pa.map_(pa.string(), pa.int32()),
        {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"},
    ),
    "g1": (pa.int32(), "INT"),
    "nu": (pa.list_(NESTED), {"type": "ARRAY", "element": NESTED_JAVA}),
    "la": (pa.string(), "STRING"),
    "hl": (pa.binary(), "BYTES"),
    "cr": (pa.list_(pa.int32()), {"type": "ARRAY", "element": "INT"}),
    "mk": (
        pa.map_(pa.int32(), STAMPED),
        {"type": "MAP", "key": "INT NOT NULL", "value": STAMPED_JAVA},
    ),
    "np": (pa.list_(NESTED), {"type": "ARRAY", "element": NESTED_JAVA}),
    "th": (pa.binary(), "BYTES"),
    "rb": (pa.binary(), "BYTES"),
    "r64": (pa.binary(), "BYTES"),
    "g2": (pa.int32(), "INT"),
    "h2": (pa.int32(), "INT"),
}
NESTED_SCHEMA = pa.schema(
    [pa.field(n, t, nullable=n != "k") for n, (t, _) in NESTED_COLUMNS.items()]
)
NESTED_JAVA_FIELDS = [(n, j) for n, (_, j) in NESTED_COLUMNS.items()]
NESTED_GROUPS = {
    "merge-engine": "partial-update",
    "fields.g1.sequence-group": "c,cd,mm,nu,la,hl",
    "fields.g2,h2.sequence-group": "cr,mk,np,th,rb,r64",
    "fields.c.aggregate-function": "collect",
    "fields.cd.aggregate-function": "collect",
    "fields.cd.distinct": "true",
    "fields.mm.aggregate-function": "merge_map",
    "fields.nu.aggregate-function": "nested_update",
    "fields.nu.nested-key": "id",
    "fields.la.aggregate-function": "listagg",
    "fields.la.distinct": "true",
    "fields.hl.aggregate-function": "hll_sketch",
    "fields.cr.aggregate-function": "collect",
    "fields.mk.aggregate-function": "merge_map_with_keytime",
    "fields.np.aggregate-function": "nested_partial_update",
    "fields.np.nested-key": "id",
    "fields.th.aggregate-function": "theta_sketch",
    "fields.rb.aggregate-function": "rbm32",
    "fields.r64.aggregate-function": "rbm64",
    # the functions that cannot retract, and one collect (its older inputs then fold first)
    **{
        f"fields.{f}.ignore-retract": "true"
        for f in ("la", "hl", "cr", "mk", "np", "th", "rb", "r64")
    },
}
NESTED_CONFIGS: dict[str, dict[str, str]] = {
    "nested-functions": NESTED_GROUPS,
    "nested-functions-remove-on-group": {
        **{k: v for k, v in NESTED_GROUPS.items() if k != "fields.nu.nested-key"},
        "partial-update.remove-record-on-sequence-group": "h2",
        "fields.nu.count-limit": "4",
    },
}
SKETCHES = {"hl": "hll", "th": "theta", "rb": "rbm32", "r64": "rbm64"}


def nested_workload(name: str, java: JavaSketches) -> list[list[tuple[dict[str, Any], str]]]:
    """Five commits of 40 (row, kind) over 8 keys; sequence fields in 0..3, 30% NULL; the
    sketches and bitmaps are Java's own."""
    rng = random.Random(zlib.crc32(name.encode()))
    pools = {
        col: [
            java.of(kind, rng.sample(range(-3000, 3000), rng.choice([1, 3, 60, 3000])))
            for _ in range(4)
        ]
        for col, kind in SKETCHES.items()
    }

    def maybe(v: Any, p: float = 0.25) -> Any:
        return None if rng.random() < p else v

    def rows() -> list[Any]:
        return [
            maybe({"id": rng.randint(0, 3), "n": maybe(rng.randint(0, 9))}, 0.1)
            for _ in range(rng.randint(0, 2))
        ]

    commits = []
    for _ in range(5):
        batch = []
        for _ in range(40):
            row = {
                "k": rng.randrange(8),
                "c": maybe([maybe(rng.randint(0, 3), 0.1) for _ in range(rng.randint(0, 3))]),
                "cd": maybe([rng.choice(["x", "yy", "ü", ""]) for _ in range(rng.randint(0, 3))]),
                "mm": maybe([(k, maybe(rng.randint(0, 9))) for k in rng.sample("abcd", 2)]),
                "g1": maybe(rng.randint(0, 3), 0.3),
                "nu": maybe(rows()),
                "la": maybe(",".join(rng.choice(["a", "b", "cc", ""]) for _ in range(2))),
                "cr": maybe([rng.randint(0, 3) for _ in range(rng.randint(0, 2))]),
                "mk": maybe(
                    [
                        (k, maybe({"v": rng.choice("pq"), "ts": maybe(rng.choice("123"))}))
                        for k in rng.sample(range(4), rng.randint(0, 2))
                    ]
                ),
                "np": maybe(rows()),
                "g2": maybe(rng.randint(0, 3), 0.3),
                "h2": maybe(rng.randint(0, 3), 0.3),
                **{col: maybe(rng.choice(pool)) for col, pool in pools.items()},
            }
            batch.append((row, rng.choice(["+I", "+I", "+U", "-U", "-D"])))
        commits.append(batch)
    return commits


@pytest.mark.parametrize("name", sorted(NESTED_CONFIGS))
def test_nested_functions_in_groups_both_ways(
    java_oracle: JavaOracle, tmp_path: Path, name: str
) -> None:
    """collect (plain, distinct, under ignore-retract), merge_map, merge_map_with_keytime,
    nested_update (by key, by count-limit), nested_partial_update, a distinct listagg,
    hll_sketch, theta_sketch, rbm32 and rbm64 inside sequence groups, retracted by -U/-D or
    ignoring it: arrays element for element, sketch and bitmap bytes exactly."""
    options = {"bucket": "1", "write-only": "true", **NESTED_CONFIGS[name]}
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    create_ours(catalog, "ours", options, NESTED_SCHEMA)
    java_oracle.create_table(
        tmp_path, DB, "java", NESTED_JAVA_FIELDS, primary_keys=["k"], options=options
    )
    for batch in nested_workload(name, JavaSketches(java_oracle)):
        write_ours(catalog, "ours", batch, NESTED_SCHEMA)
        data = pa.Table.from_pylist([r for r, _ in batch], schema=NESTED_SCHEMA)
        java_oracle.write_rows_kinds(tmp_path, DB, "java", data, [k for _, k in batch])
    compare_stages(java_oracle, tmp_path, catalog)
