"""Tables with deletion vectors written by Java Paimon 1.4.2, for tests that read, write or
compact them.

Every builder creates its table with Java's catalog, writes it through ``JavaOracle`` (upserts
and deletes by RowKind for primary-key tables, Spark's ``DELETE`` for append tables) and returns
the rows the table must hold, computed here from what was written (never by reading with Java),
sorted with ``sorted_rows`` so they compare with ``==`` against a sorted read.

All tables share one schema, ``k BIGINT NOT NULL, v STRING, n INT, pt STRING NOT NULL``; a
partitioned table is partitioned by ``pt``, and where ``pt`` is not a key it is ``p{k % 3}``, so
a row's partition follows from its key (only the cross-partition table moves keys between
partitions). Data is drawn from a seeded ``random.Random``: the same call builds the same rows.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa
from java_oracle import JavaOracle, sorted_rows

Row = list[Any]
Warehouse = str | os.PathLike[str]

JAVA_FIELDS = [("k", "BIGINT NOT NULL"), ("v", "STRING"), ("n", "INT"), ("pt", "STRING NOT NULL")]
ARROW_SCHEMA = pa.schema(
    [
        pa.field("k", pa.int64(), nullable=False),
        ("v", pa.string()),
        ("n", pa.int32()),
        pa.field("pt", pa.string(), nullable=False),
    ]
)
PARTITIONS = ("p0", "p1", "p2")

PK_KEYS = 300
PK_COMMITS = 4
APPEND_ROWS_PER_COMMIT = 120
APPEND_KEY_SPACE = 200


def dv_options(bitmap64: bool, **extra: str) -> dict[str, str]:
    """Table options of a deletion-vector table (``bitmap64``: the 64-bit bitmap format)."""
    options = {"deletion-vectors.enabled": "true", **extra}
    if bitmap64:
        options["deletion-vectors.bitmap64"] = "true"
    return options


def _home(k: int) -> str:
    return PARTITIONS[k % len(PARTITIONS)]


# -- primary-key tables ------------------------------------------------------------------------


def pk_commits(seed: int, *, moves: bool = False) -> list[list[tuple[Row, str]]]:
    """``PK_COMMITS`` batches of (row, RowKind): the first inserts ``PK_KEYS`` keys, each later
    one updates ~90 keys (some as a ``-U``/``+U`` pair, a few twice in the batch), inserts 30 new
    keys, deletes ~25 existing keys and 5 absent ones, and re-inserts some deleted keys.
    ``moves``: some updates go to another partition (a cross-partition table)."""
    rng = random.Random(seed)
    live: dict[int, Row] = {}
    commits: list[list[tuple[Row, str]]] = []

    def put(batch: list[tuple[Row, str]], row: Row, kind: str) -> None:
        batch.append((row, kind))
        if kind in ("+I", "+U"):
            live[row[0]] = row
        else:
            live.pop(row[0], None)

    first: list[tuple[Row, str]] = []
    for k in range(PK_KEYS):
        put(first, [k, f"v{k}-1", k, _home(k)], "+I")
    commits.append(first)
    next_key = PK_KEYS
    for c in range(2, PK_COMMITS + 1):
        batch: list[tuple[Row, str]] = []
        updated = rng.sample(sorted(live), 90)
        for j, k in enumerate([*updated, *updated[:12]]):
            pt = rng.choice(PARTITIONS) if moves and rng.random() < 0.25 else live[k][3]
            if rng.random() < 0.3 and k in live:
                put(batch, list(live[k]), "-U")
            put(batch, [k, f"v{k}-{c}-{j}", k * 10 + c, pt], "+U")
        for k in range(next_key, next_key + 30):
            put(batch, [k, f"v{k}-{c}", k, _home(k)], "+I")
        next_key += 30
        deleted = rng.sample(sorted(live), 25)
        for k in deleted:
            put(batch, [k, None, None, live[k][3]], "-D")
        for k in rng.sample(range(next_key, next_key + 1000), 5):
            put(batch, [k, None, None, _home(k)], "-D")
        for k in deleted[:4]:
            put(batch, [k, f"v{k}-{c}-back", -k, _home(k)], "+I")
        commits.append(batch)
    return commits


def pk_expected(commits: list[list[tuple[Row, str]]]) -> list[Row]:
    """The rows left after the batches: the last ``+I``/``+U`` of each key unless a later
    ``-U``/``-D`` retracted it."""
    live: dict[int, Row] = {}
    for batch in commits:
        for row, kind in batch:
            if kind in ("+I", "+U"):
                live[row[0]] = row
            else:
                live.pop(row[0], None)
    return sorted_rows(live.values())


def _write_pk(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str,
    name: str,
    commits: list[list[tuple[Row, str]]],
    *,
    compact_postpone: bool = False,
) -> list[Row]:
    for batch in commits:
        java.write_rows_kinds(warehouse, db, name, [r for r, _ in batch], [k for _, k in batch])
        if compact_postpone:
            java.compact_postpone(warehouse, db, name)
    return pk_expected(commits)


def build_pk_fixed(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "pk_fixed",
    *,
    bitmap64: bool = False,
    partitioned: bool = False,
) -> list[Row]:
    """Fixed bucket (``bucket = 2``), primary key ``k`` (``k, pt`` when partitioned)."""
    java.create_table(
        warehouse,
        db,
        name,
        JAVA_FIELDS,
        partition_keys=["pt"] if partitioned else [],
        primary_keys=["k", "pt"] if partitioned else ["k"],
        options=dv_options(bitmap64, bucket="2"),
    )
    return _write_pk(java, warehouse, db, name, pk_commits(11 + partitioned))


def build_pk_dynamic(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "pk_dynamic",
    *,
    bitmap64: bool = False,
    partitioned: bool = False,
) -> list[Row]:
    """Dynamic bucket (``bucket = -1``, HASH_DYNAMIC), 100 rows a bucket so keys spread over
    several buckets; primary key ``k`` (``k, pt`` when partitioned)."""
    java.create_table(
        warehouse,
        db,
        name,
        JAVA_FIELDS,
        partition_keys=["pt"] if partitioned else [],
        primary_keys=["k", "pt"] if partitioned else ["k"],
        options=dv_options(bitmap64, bucket="-1", **{"dynamic-bucket.target-row-num": "100"}),
    )
    return _write_pk(java, warehouse, db, name, pk_commits(21 + partitioned))


def build_pk_cross_partition(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "pk_cross",
    *,
    bitmap64: bool = False,
) -> list[Row]:
    """Cross-partition upsert (``bucket = -1``, partitioned by ``pt``, primary key ``k``):
    a quarter of the updates move their key to another partition."""
    java.create_table(
        warehouse,
        db,
        name,
        JAVA_FIELDS,
        partition_keys=["pt"],
        primary_keys=["k"],
        options=dv_options(bitmap64, bucket="-1", **{"dynamic-bucket.target-row-num": "100"}),
    )
    return _write_pk(java, warehouse, db, name, pk_commits(31, moves=True))


def build_pk_postpone(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "pk_postpone",
    *,
    bitmap64: bool = False,
    partitioned: bool = True,
) -> list[Row]:
    """Postpone bucket (``bucket = -2``, 2 buckets a partition once compacted): every commit is
    followed by Java's postpone compaction, so the table ends fully in real buckets."""
    java.create_table(
        warehouse,
        db,
        name,
        JAVA_FIELDS,
        partition_keys=["pt"] if partitioned else [],
        primary_keys=["k", "pt"] if partitioned else ["k"],
        options=dv_options(
            bitmap64,
            bucket="-2",
            **{"postpone.default-bucket-num": "2", "postpone.batch-write-fixed-bucket": "false"},
        ),
    )
    commits = pk_commits(41 + partitioned)
    return _write_pk(java, warehouse, db, name, commits, compact_postpone=True)


# -- append tables -----------------------------------------------------------------------------


def append_batches(seed: int) -> tuple[list[list[Row]], list[int], list[int]]:
    """Three batches of ``APPEND_ROWS_PER_COMMIT`` rows whose ``k`` repeat (so one deleted value
    hits several rows and files), and the values of the two deletes (overlapping by 5)."""
    rng = random.Random(seed)
    batches = [
        [
            [k, f"a{c}-{i}", i, _home(k)]
            for i, k in enumerate(rng.choices(range(APPEND_KEY_SPACE), k=APPEND_ROWS_PER_COMMIT))
        ]
        for c in range(1, 4)
    ]
    values = rng.sample(range(APPEND_KEY_SPACE), 35)
    return batches, values[:20], values[15:]


def _build_append(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str,
    name: str,
    options: Mapping[str, str],
    seed: int,
    partitioned: bool,
) -> list[Row]:
    java.create_table(
        warehouse,
        db,
        name,
        JAVA_FIELDS,
        partition_keys=["pt"] if partitioned else [],
        options=options,
    )
    batches, first, second = append_batches(seed)
    java.write_rows(warehouse, db, name, batches[0])
    java.write_rows(warehouse, db, name, batches[1])
    java.delete_where(warehouse, db, name, "k", first)
    java.write_rows(warehouse, db, name, batches[2])
    java.delete_where(warehouse, db, name, "k", second)
    early = {*first, *second}
    kept = [r for r in batches[0] + batches[1] if r[0] not in early]
    return sorted_rows(kept + [r for r in batches[2] if r[0] not in second])


def build_append_unaware(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "append_unaware",
    *,
    bitmap64: bool = False,
    partitioned: bool = False,
) -> list[Row]:
    """Unaware-bucket append table (``bucket = -1``): three commits, a ``DELETE`` after the
    second and one after the third (its values overlapping the first's), so the second merges
    into vectors of the first and starts new ones."""
    options = dv_options(bitmap64, bucket="-1")
    return _build_append(java, warehouse, db, name, options, 51 + partitioned, partitioned)


def build_append_fixed(
    java: JavaOracle,
    warehouse: Warehouse,
    db: str = "db",
    name: str = "append_fixed",
    *,
    bitmap64: bool = False,
    partitioned: bool = False,
) -> list[Row]:
    """Fixed-bucket append table (``bucket = 2``, ``bucket-key = k``), written and deleted from
    as ``build_append_unaware``."""
    options = dv_options(bitmap64, bucket="2", **{"bucket-key": "k"})
    return _build_append(java, warehouse, db, name, options, 61 + partitioned, partitioned)


# -- the whole set -----------------------------------------------------------------------------

Builder = Callable[[JavaOracle, Warehouse, str, str], list[Row]]


def _variant(builder: Callable[..., list[Row]], **kwargs: bool) -> Builder:
    def build(java: JavaOracle, warehouse: Warehouse, db: str, name: str) -> list[Row]:
        return builder(java, warehouse, db, name, **kwargs)

    return build


BUILDERS: dict[str, Builder] = {
    "pk_fixed": _variant(build_pk_fixed),
    "pk_fixed_64": _variant(build_pk_fixed, bitmap64=True),
    "pk_fixed_partitioned": _variant(build_pk_fixed, partitioned=True),
    "pk_dynamic": _variant(build_pk_dynamic),
    "pk_dynamic_partitioned": _variant(build_pk_dynamic, partitioned=True),
    "pk_cross": _variant(build_pk_cross_partition),
    "pk_postpone": _variant(build_pk_postpone),
    "append_unaware": _variant(build_append_unaware),
    "append_unaware_64": _variant(build_append_unaware, bitmap64=True),
    "append_unaware_partitioned": _variant(build_append_unaware, partitioned=True),
    "append_fixed": _variant(build_append_fixed),
    "append_fixed_64": _variant(build_append_fixed, bitmap64=True),
}
"""Every table of the set by its table name; ``name.endswith("_64")``: 64-bit bitmaps."""


def build_all(java: JavaOracle, warehouse: Warehouse, db: str = "db") -> dict[str, list[Row]]:
    """Every table of ``BUILDERS`` in ``db`` of ``warehouse``; the expected rows by name."""
    return {name: build(java, warehouse, db, name) for name, build in BUILDERS.items()}
