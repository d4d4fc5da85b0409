"""The aggregate functions collect (plain and distinct), merge_map, merge_map_with_keytime,
nested_update (plain, with count-limit, with nested-key), nested_partial_update, listagg with
distinct, hll_sketch, theta_sketch, rbm32 and rbm64 between paimon_pyspark and Java Paimon 1.4.2.

A seeded workload (one insert of every key, then four commits of inserts and updates, or in the
``retract`` configuration also -U/-D retractions, through ``rowkind.field``) is written by Java
into a ``write-only`` table, so the commits stay separate runs that a read merges, and read by
Java and by us, before and after Java's full compaction. We write the same workload into our
table, and Java and we read it before and after our minor and full compaction. Every reading
must equal Java's reading of Java's table row for row: arrays element for element (so the
``HashSet`` / ``HashMap`` orders of collect distinct and nested-key updates are Java's), maps as
sets of pairs (the oracle's canonical form), and sketch and bitmap bytes exactly: the sketches
and bitmaps written are Java's own (AggOracle), and our unions of them give Java's bytes
(``test_sketch_unions_are_javas_bytes`` checks the unions directly, chained, on many sets;
``test_rbm64_unions_are_javas_bytes`` the 64-bit bitmaps, whose serialized tree and container
arrays depend on how they were built, over every way the tree grows and splits).
"""

from __future__ import annotations

import datetime as dt
import math
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from agg_oracle import JavaSketches
from java_oracle import JavaOracle, canonical_rows, sorted_rows

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.merge import agg_sketches, roaring64
from paimon_pyspark.procedures import compact

pytestmark = [pytest.mark.java]

DB, TABLE = "db", "t"
Row = dict[str, Any]

NESTED = pa.struct([("id", pa.int32()), ("name", pa.string()), ("n", pa.int32())])
NESTED_JAVA = {
    "type": "ROW",
    "fields": [
        {"id": 100, "name": "id", "type": "INT"},
        {"id": 101, "name": "name", "type": "STRING"},
        {"id": 102, "name": "n", "type": "INT"},
    ],
}
STAMPED = pa.struct([("v", pa.string()), ("ts", pa.string())])
STAMPED_JAVA = {
    "type": "ROW",
    "fields": [
        {"id": 103, "name": "v", "type": "STRING"},
        {"id": 104, "name": "ts", "type": "STRING"},
    ],
}
# name: (Arrow type, Java type, function, its other options, retractable)
COLUMNS: dict[str, tuple[pa.DataType, Any, str, dict[str, str], bool]] = {
    "c": (pa.list_(pa.int32()), {"type": "ARRAY", "element": "INT"}, "collect", {}, True),
    "cs": (
        pa.list_(pa.string()),
        {"type": "ARRAY", "element": "STRING"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    "cb": (
        pa.list_(pa.int64()),
        {"type": "ARRAY", "element": "BIGINT"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    # Java's hash codes of Double, BigDecimal (compact and not), Timestamp and Integer (DATE)
    "cf": (
        pa.list_(pa.float64()),
        {"type": "ARRAY", "element": "DOUBLE"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    "cm": (
        pa.list_(pa.decimal128(38, 2)),
        {"type": "ARRAY", "element": "DECIMAL(38, 2)"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    "ct": (
        pa.list_(pa.timestamp("us")),
        {"type": "ARRAY", "element": "TIMESTAMP(6)"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    "cd": (
        pa.list_(pa.date32()),
        {"type": "ARRAY", "element": "DATE"},
        "collect",
        {"distinct": "true"},
        True,
    ),
    "mm": (
        pa.map_(pa.string(), pa.int32()),
        {"type": "MAP", "key": "STRING NOT NULL", "value": "INT"},
        "merge_map",
        {},
        True,
    ),
    "mk": (
        pa.map_(pa.int32(), STAMPED),
        {"type": "MAP", "key": "INT NOT NULL", "value": STAMPED_JAVA},
        "merge_map_with_keytime",
        {},
        False,
    ),
    "nu": (
        pa.list_(NESTED),
        {"type": "ARRAY", "element": NESTED_JAVA},
        "nested_update",
        {"count-limit": "7"},
        True,
    ),
    "nk": (
        pa.list_(NESTED),
        {"type": "ARRAY", "element": NESTED_JAVA},
        "nested_update",
        {"nested-key": "id"},
        True,
    ),
    "np": (
        pa.list_(NESTED),
        {"type": "ARRAY", "element": NESTED_JAVA},
        "nested_partial_update",
        {"nested-key": "id,name"},
        False,
    ),
    "la": (pa.string(), "STRING", "listagg", {"distinct": "true"}, False),
    "h": (pa.binary(), "BYTES", "hll_sketch", {}, False),
    "th": (pa.binary(), "BYTES", "theta_sketch", {}, False),
    "rb": (pa.binary(), "BYTES", "rbm32", {}, False),
    "r64": (pa.binary(), "BYTES", "rbm64", {}, False),
}
SCHEMA = pa.schema(
    [pa.field("id", pa.int64(), nullable=False), ("op", pa.string())]
    + [(name, spec[0]) for name, spec in COLUMNS.items()]
)
JAVA_FIELDS = [("id", "BIGINT NOT NULL"), ("op", "STRING")] + [
    (name, spec[1]) for name, spec in COLUMNS.items()
]
CONFIGS = {"insert": ("+I", "+U"), "retract": ("+I", "+U", "+U", "-U", "-D")}
SKETCHES = {"h": "hll", "th": "theta", "rb": "rbm32", "r64": "rbm64"}


def options(config: str) -> dict[str, str]:
    out = {"merge-engine": "aggregation", "bucket": "2", "rowkind.field": "op"}
    for name, (_, _, func, extra, retractable) in COLUMNS.items():
        out[f"fields.{name}.aggregate-function"] = func
        out |= {f"fields.{name}.{k}": v for k, v in extra.items()}
        if config == "retract" and not retractable:
            out[f"fields.{name}.ignore-retract"] = "true"
    return out


# -- workload ------------------------------------------------------------------------------------


def _maybe(rng: random.Random, value: Any, p: float = 0.2) -> Any:
    return None if rng.random() < p else value


DOUBLES = [0.0, -0.0, 1.5, -2.25, 1e300, math.nan, math.inf, 3.0]
DECIMALS = [Decimal(v) for v in ("0.00", "1.50", "-1.50", "92233720368547758.07")] + [
    Decimal("123456789012345678901234567890.12"),
    Decimal("-99999999999999999999999999999999.99"),
]
STAMPS = [
    dt.datetime(1970, 1, 1),
    dt.datetime(2024, 5, 6, 7, 8, 9, 123456),
    dt.datetime(1900, 1, 1, 0, 0, 0, 1),
    dt.datetime(2262, 4, 11, 23, 47, 16, 854775),
]
DATES = [dt.date(1970, 1, 1), dt.date(1969, 12, 31), dt.date(2024, 2, 29), dt.date(9999, 12, 31)]


def _nested(rng: random.Random) -> list[Any]:
    rows: list[Any] = []
    for _ in range(rng.randint(0, 4)):
        row = {
            "id": rng.randint(0, 5),
            "name": _maybe(rng, rng.choice(["x", "y", "zz"]), 0.3),
            "n": _maybe(rng, rng.randint(0, 9), 0.3),
        }
        rows.append(_maybe(rng, row, 0.1))
    return rows


def _value_row(rng: random.Random, key: int, op: str, pools: dict[str, list[bytes]]) -> Row:
    words = [f"w{i}" for i in range(14)] + ["ü", "a b", ""]
    stamps = ["2024-01-0" + str(d) for d in range(1, 8)]
    return {
        "id": key,
        "op": op,
        "c": _maybe(rng, [_maybe(rng, rng.randint(0, 5), 0.1) for _ in range(rng.randint(0, 3))]),
        "cs": _maybe(rng, [_maybe(rng, rng.choice(words), 0.05) for _ in range(rng.randint(0, 5))]),
        "cb": _maybe(
            rng, [rng.choice([-1, 0, 2**40, -(2**35), 7, 2**63 - 1, 42]) for _ in range(3)]
        ),
        "cf": _maybe(rng, [rng.choice(DOUBLES) for _ in range(rng.randint(0, 4))]),
        "cm": _maybe(rng, [rng.choice(DECIMALS) for _ in range(rng.randint(0, 4))]),
        "ct": _maybe(rng, [rng.choice(STAMPS) for _ in range(rng.randint(0, 4))]),
        "cd": _maybe(rng, [rng.choice(DATES) for _ in range(rng.randint(0, 4))]),
        "mm": _maybe(
            rng,
            [(k, _maybe(rng, rng.randint(0, 9), 0.2)) for k in rng.sample("abcdefghij", 3)],
        ),
        "mk": _maybe(
            rng,
            [
                (k, _maybe(rng, {"v": rng.choice("pqr"), "ts": _maybe(rng, rng.choice(stamps))}))
                for k in rng.sample(range(8), rng.randint(0, 3))
            ],
        ),
        "nu": _maybe(rng, _nested(rng)),
        "nk": _maybe(rng, _nested(rng)),
        "np": _maybe(rng, _nested(rng)),
        "la": _maybe(rng, ",".join(rng.choice(["a", "b", "cc", ""]) for _ in range(3))),
        **{name: _maybe(rng, rng.choice(pool)) for name, pool in pools.items()},
    }


def workload(config: str, java: JavaSketches) -> list[list[Row]]:
    """Every key once, then four commits of 40 operations on 25 keys."""
    rng = random.Random(f"aggregate-functions-{config}")
    pools = {
        name: [java.of(kind, rng.sample(range(-3000, 3000), rng.choice([1, 3, 60, 3000])))]
        + [java.of(kind, range(rng.randint(0, 5000))) for _ in range(5)]
        for name, kind in SKETCHES.items()
    }
    # 64-bit values over many high parts, so the unions grow and split Java's tree.
    pools["r64"] += [
        java.of("rbm64", [rng.randrange(-(2**63), 2**63) for _ in range(rng.randint(1, 30))])
        for _ in range(3)
    ] + [java.of("rbm64", [(rng.randrange(64) << 24) + i for i in range(300)]) for _ in range(3)]
    commits = [[_value_row(rng, key, "+I", pools) for key in range(60)]]
    for _ in range(4):
        ops = CONFIGS[config]
        commits.append(
            [_value_row(rng, rng.randrange(25), rng.choice(ops), pools) for _ in range(40)]
        )
    return commits


def arrow(rows: list[Row]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA)


# -- our side ------------------------------------------------------------------------------------


def create_ours(warehouse: Path, config: str) -> FileSystemCatalog:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database(DB, ignore_if_exists=True)
    opts = {**options(config), "write-only": "true"}
    catalog.create_table(
        f"{DB}.{TABLE}", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=opts)
    )
    return catalog


def write_ours(catalog: FileSystemCatalog, rows: list[Row]) -> None:
    builder = catalog.get_table(f"{DB}.{TABLE}").new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(arrow(rows))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read_ours(warehouse: Path) -> list[list[Any]]:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    rb = catalog.get_table(f"{DB}.{TABLE}").new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def read_java(java_oracle: JavaOracle, warehouse: Path) -> list[list[Any]]:
    return sorted_rows(java_oracle.read_table(warehouse, DB, TABLE).rows)


# -- tests ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_aggregate_functions_between_java_and_us(
    java_oracle: JavaOracle, tmp_path: Path, config: str
) -> None:
    commits = workload(config, JavaSketches(java_oracle))
    # Java writes (each commit its own run), Java and we read; then after Java's compaction.
    theirs = tmp_path / "java"
    java_oracle.create_table(
        theirs,
        DB,
        TABLE,
        JAVA_FIELDS,
        primary_keys=["id"],
        options={**options(config), "write-only": "true"},
    )
    for batch in commits:
        java_oracle.write_rows(theirs, DB, TABLE, arrow(batch))
    expected = read_java(java_oracle, theirs)
    assert len(expected) > 30
    assert read_ours(theirs) == expected
    java_oracle.compact(theirs, DB, TABLE, full=True)
    assert read_java(java_oracle, theirs) == expected
    assert read_ours(theirs) == expected

    # We write the same records: Java and we read them, merged on read and after our compactions.
    ours = tmp_path / "ours"
    catalog = create_ours(ours, config)
    for batch in commits:
        write_ours(catalog, batch)
    assert read_ours(ours) == expected
    assert read_java(java_oracle, ours) == expected
    # The small runs outweigh the first, so the minor compaction merges every run already; the
    # full one then finds a single top-level run (and may have nothing to do).
    for strategy in ("minor", "full"):
        done = compact(catalog, f"{DB}.{TABLE}", compact_strategy=strategy)
        assert done is not None or strategy == "full"
        assert read_ours(ours) == expected, strategy
        assert read_java(java_oracle, ours) == expected, strategy
    table = catalog.get_table(f"{DB}.{TABLE}")
    snapshot = table.snapshot_manager.latest()
    assert snapshot is not None
    assert {e.file.level for e in table.manifest_io.live_entries(snapshot)} == {5}


def _chains(java: JavaSketches, kind: str, made: list[bytes], seed: int) -> None:
    """Folds of 2 to 6 of ``made`` in random orders: ours and Java's bytes after every step."""
    ours = agg_sketches.folder(FUNCTIONS[kind])
    rng = random.Random(seed)
    for _ in range(60):
        chain = [rng.choice(made) for _ in range(rng.randint(2, 6))]
        mine = theirs = chain[0]
        for value in chain[1:]:
            mine, theirs = ours(mine, value), java.union(kind, theirs, value)
            assert mine == theirs, kind


FUNCTIONS = {"hll": "hll_sketch", "theta": "theta_sketch", "rbm32": "rbm32", "rbm64": "rbm64"}


@pytest.mark.parametrize("kind", ["hll", "theta", "rbm32"])
def test_sketch_unions_are_javas_bytes(java_oracle: JavaOracle, kind: str) -> None:
    """Our union of two of Java's sketches / bitmaps is Java's bytes, over empty, single-item,
    exact and estimating sketches; and so is every step of longer folds, where earlier unions'
    results (out-of-order HLL arrays, estimating theta sketches) meet the others."""
    java = JavaSketches(java_oracle)
    rng = random.Random(7)
    sets = [[], [7], [1, 2], list(range(60)), list(range(700)), list(range(3000))]
    sets += [list(range(5000, 20000)), rng.sample(range(-(2**31), 2**31 - 1), 50)]
    sets += [list(range(0, 200_000, 3)), [rng.getrandbits(31) for _ in range(5000)]]
    ours = agg_sketches.folder(FUNCTIONS[kind])
    made = [java.of(kind, s) for s in sets]
    for a in made:
        for b in made:
            assert ours(a, b) == java.union(kind, a, b)
    _chains(java, kind, made, 8)


def test_rbm64_unions_are_javas_bytes(java_oracle: JavaOracle) -> None:
    """Java's Roaring64Bitmap bytes decode to their values and encode back unchanged, and our
    union of two (and of that with a third) is Java's bytes: new keys in every kind of tree node
    (4, 16, 48, 256 children and the growth between them), prefix and leaf splits, containers of
    every type meeting every other (array, bitmap, run, full), empty bitmaps."""
    java = JavaSketches(java_oracle)
    rng = random.Random(64)
    sets: list[list[int]] = [[], [7], [1, 2, 3], [0, 2**40, -1, 5], list(range(100_000))]
    sets += [[i << 16 for i in range(n)] for n in (4, 5, 16, 17, 48, 49, 300)]
    sets += [[i << 24 for i in range(20)], [(i << 40) + 9 for i in range(60)]]
    sets += [[(i << 32) | j for i in range(5) for j in range(0, 5000, 7)]]
    sets += [list(range(65_536)), [*range(10, 5000), 6000, 6001, 6002], [2**48, 2**48 + 1]]
    sets += [list(range(0, 70_000, 2)), [rng.randrange(-(2**63), 2**63) for _ in range(40)]]
    made = [java.of("rbm64", s) for s in sets]
    for data, values in zip(made, sets, strict=True):
        decoded = roaring64.decode(data)
        assert roaring64.values(decoded) == sorted({v % 2**64 for v in values})
        assert roaring64.encode(decoded) == data
    for i, a in enumerate(made):
        for j, b in enumerate(made):
            assert roaring64.union(a, b) == java.union("rbm64", a, b), (i, j)
    _chains(java, "rbm64", made, 65)
