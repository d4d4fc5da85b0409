"""``bucket-function.type``, ``data-file.external-paths`` and row-tracking reads against Java
Paimon 1.4.2: Java's bucket for random keys equals ours for each function; Java writes, we
read exactly its rows (and place them in the same buckets); we write, Java reads ours exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from java_oracle import JavaOracle, canonical_rows, read_table_by_bucket, sorted_rows
from options_b_oracle import buckets as java_buckets
from test_bucket_java import _random_column

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.errors import OptionError
from paimon_pyspark.store.external_paths import entropy_dirs
from paimon_pyspark.types.data_types import (
    BIGINT,
    BOOLEAN,
    BYTES,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    SMALLINT,
    STRING,
    TINYINT,
    CharType,
    DataType,
    DecimalType,
    TimestampType,
    TimeType,
)

pytestmark = [pytest.mark.java]

DB = "db"
BUCKET_COUNTS = [1, 2, 3, 7, 16]

HIVE_KEYS: dict[str, list[DataType]] = {
    "boolean": [BOOLEAN()],
    "tinyint": [TINYINT()],
    "smallint": [SMALLINT()],
    "int": [INT()],
    "bigint": [BIGINT()],
    "float": [FLOAT()],
    "double": [DOUBLE()],
    "string": [STRING()],
    "char(12)": [CharType(12, variable=False)],
    "bytes": [BYTES()],
    "date": [DATE()],
    "time(3)": [TimeType(3)],
    "decimal(10,2)": [DecimalType(10, 2)],
    "decimal(18,6)": [DecimalType(18, 6)],
    "decimal(38,6)": [DecimalType(38, 6)],
    "decimal(19,0)": [DecimalType(19, 0)],
    "int,string": [INT(), STRING()],
    "bigint,string,date,decimal(10,2),double": [
        BIGINT(),
        STRING(),
        DATE(),
        DecimalType(10, 2),
        DOUBLE(),
    ],
}


def _check_function(java: JavaOracle, function: str, key_types: list[DataType]) -> None:
    rng = np.random.default_rng(len(key_types) * 1000 + sum(map(ord, str(key_types))))
    columns = [_random_column(t, rng) for t in key_types]
    table = pa.table({f"k{i}": c for i, c in enumerate(columns)})
    expected = java_buckets(
        java, function, [t.to_json() for t in key_types], canonical_rows(table), BUCKET_COUNTS
    )
    assert not isinstance(expected, str), expected
    for n in BUCKET_COUNTS:
        ours = FixedBucketAssigner(key_types, n, function).assign(columns)
        diff = np.flatnonzero(ours != np.asarray(expected[n]))
        assert diff.size == 0, f"n={n}: {table.take(diff[:3]).to_pylist()} {ours[diff[:3]]}"


@pytest.mark.parametrize("key_types", list(HIVE_KEYS.values()), ids=list(HIVE_KEYS))
def test_hive_bucket_equals_java(java_oracle: JavaOracle, key_types: list[DataType]) -> None:
    _check_function(java_oracle, "hive", key_types)


@pytest.mark.parametrize("key_types", [[INT()], [BIGINT()]], ids=["int", "bigint"])
def test_mod_bucket_equals_java(java_oracle: JavaOracle, key_types: list[DataType]) -> None:
    _check_function(java_oracle, "mod", key_types)


@pytest.mark.parametrize(
    ("function", "key_types"),
    [
        ("mod", [STRING()]),
        ("mod", [INT(), INT()]),
        ("mod", [SMALLINT()]),
        ("hive", [TimestampType(6)]),
    ],
    ids=["mod-string", "mod-two-fields", "mod-smallint", "hive-timestamp"],
)
def test_refused_keys_as_java(
    java_oracle: JavaOracle, function: str, key_types: list[DataType]
) -> None:
    """Java refuses these keys (mod: when the function is built; hive: at the first value);
    we refuse them when the writer is built."""
    rows = [[1 if not isinstance(t, TimestampType) else 0 for t in key_types]]
    if isinstance(key_types[0], TimestampType):
        import datetime as dt

        rows = [[dt.datetime(2024, 1, 1)]]
    elif isinstance(key_types[0], type(STRING())) and key_types[0] == STRING():
        rows = [["x"]]
    answer = java_buckets(java_oracle, function, [t.to_json() for t in key_types], rows, [3])
    assert isinstance(answer, str), answer
    with pytest.raises(OptionError, match="bucket-function.type"):
        FixedBucketAssigner(key_types, 3, function)


FIELDS = [("k", "INT NOT NULL"), ("s", "STRING"), ("d", "DECIMAL(10, 2)"), ("v", "BIGINT")]
ARROW = pa.schema(
    [
        pa.field("k", pa.int32(), nullable=False),
        pa.field("s", pa.string()),
        pa.field("d", pa.decimal128(10, 2)),
        pa.field("v", pa.int64()),
    ]
)


def _rows(n: int, seed: int) -> list[list[Any]]:
    rng = np.random.default_rng(seed)
    import decimal

    return [
        [
            int(k),
            None if i % 7 == 0 else f"s{int(k) * 31 % 97}",
            decimal.Decimal(int(rng.integers(-(10**6), 10**6))).scaleb(-2),
            int(rng.integers(-(2**40), 2**40)),
        ]
        for i, k in enumerate(rng.permutation(np.arange(-n // 2, n // 2)))
    ]


def _layout(parts: list[tuple[int, list[list[Any]]]]) -> dict[int, list[list[Any]]]:
    out: dict[int, list[list[Any]]] = {}
    for bucket, rows in parts:
        out.setdefault(bucket, []).extend(rows)
    return {b: sorted_rows(r) for b, r in out.items() if r}


@pytest.mark.parametrize(
    ("function", "bucket_key", "pk"),
    [("mod", "k", True), ("hive", "s,d", False), ("hive", "k", True), ("mod", "k", False)],
    ids=["mod-pk", "hive-append-2-fields", "hive-pk", "mod-append"],
)
def test_bucket_function_tables_java_and_ours(
    java_oracle: JavaOracle, tmp_path: Path, function: str, bucket_key: str, pk: bool
) -> None:
    """Java writes a table with the function, we write the same rows to our own: each reads
    the other's rows exactly, bucket by bucket, and every row is in the bucket both compute."""
    options = {"bucket": "5", "bucket-function.type": function, "bucket-key": bucket_key}
    if pk:
        options["write-only"] = "true"
    pks = ["k"] if pk else []
    java_oracle.create_table(tmp_path, DB, "j", FIELDS, primary_keys=pks, options=options)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_table(
        f"{DB}.o", Schema.from_pyarrow_schema(ARROW, primary_keys=pks, options=options)
    )
    rows = _rows(400, 7)
    java_oracle.write_rows(tmp_path, DB, "j", rows)
    ours = catalog.get_table(f"{DB}.o")
    data = pa.Table.from_pylist([dict(zip(ARROW.names, r, strict=True)) for r in rows], ARROW)
    builder = ours.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)

    java_j = _layout(
        [(s.bucket, s.rows) for s in read_table_by_bucket(java_oracle, tmp_path, DB, "j")]
    )
    java_o = _layout(
        [(s.bucket, s.rows) for s in read_table_by_bucket(java_oracle, tmp_path, DB, "o")]
    )
    assert java_o == java_j  # Java reads ours as its own, bucket for bucket
    assert sorted_rows(r for b in java_j.values() for r in b) == sorted_rows(canonical_rows(data))
    for name in ("j", "o"):  # we read Java's table and ours: the same rows in the same buckets
        table = catalog.get_table(f"{DB}.{name}")
        rb = table.new_read_builder()
        parts = [
            (split.bucket, canonical_rows(rb.new_read().to_arrow([split])))
            for split in rb.new_scan().plan().splits()
        ]
        assert _layout(parts) == java_j, name


# --- data-file.external-paths ------------------------------------------------------------------


def _our_rows(table: Any) -> list[list[Any]]:
    rb = table.new_read_builder()
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


def _write_ours(table: Any, data: pa.Table) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(data)
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


@pytest.mark.parametrize(
    ("pk", "strategy"),
    [
        (True, "round-robin"),
        (False, "round-robin"),
        (False, "specific-fs"),
        (True, "entropy-inject"),
        (False, "weight-robin"),
    ],
    ids=["pk", "append", "append-specific-fs", "pk-entropy", "append-weights"],
)
def test_external_paths_java_and_ours(
    java_oracle: JavaOracle, tmp_path: Path, pk: bool, strategy: str
) -> None:
    """Java writes (and compacts) a table whose files go to two external roots: we read its
    rows exactly, from files under those roots; we write the same to our own table: Java reads
    ours exactly, and our files are under the roots too."""
    roots = [tmp_path / "ext-a", tmp_path / "ext-b"]
    options = {
        "bucket": "2",
        "bucket-key": "k",
        "data-file.external-paths": ",".join(f"file://{r}" for r in roots),
        "data-file.external-paths.strategy": strategy,
    }
    if strategy == "specific-fs":
        options["data-file.external-paths.specific-fs"] = "file"
    if strategy == "weight-robin":
        options["data-file.external-paths.weights"] = "3,1"
    pks = ["k"] if pk else []
    java_oracle.create_table(tmp_path, DB, "j", FIELDS, primary_keys=pks, options=options)
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_table(
        f"{DB}.o", Schema.from_pyarrow_schema(ARROW, primary_keys=pks, options=options)
    )
    ours = catalog.get_table(f"{DB}.o")
    first, second = _rows(60, 1), _rows(60, 2)
    for rows in (first, second):
        java_oracle.write_rows(tmp_path, DB, "j", rows)
        data = pa.Table.from_pylist([dict(zip(ARROW.names, r, strict=True)) for r in rows], ARROW)
        _write_ours(ours, data)
    if pk:
        java_oracle.compact(tmp_path, DB, "j", full=True)
        from paimon_pyspark.procedures import compact

        compact(catalog, f"{DB}.o", compact_strategy="full")

    java_j = sorted_rows(java_oracle.read_table(tmp_path, DB, "j").rows)
    assert len(java_j) == (60 if pk else 120)
    assert _our_rows(catalog.get_table(f"{DB}.j")) == java_j  # we read Java's
    assert sorted_rows(java_oracle.read_table(tmp_path, DB, "o").rows) == java_j  # Java reads ours
    for name in ("j", "o"):
        table = catalog.get_table(f"{DB}.{name}")
        files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
        assert files
        for f in files:
            assert f.external_path is not None
            assert any(f.external_path.startswith(f"file:{r}/bucket-") for r in roots), name
            if strategy == "entropy-inject":  # Java's directories are ours for its names
                assert f.external_path.endswith(f"/{entropy_dirs(f.file_name)}/{f.file_name}")
        assert not list(Path(table.path).glob("bucket-*/*.parquet")), name


# --- row tracking ------------------------------------------------------------------------------

RT_FIELDS = [("a", "INT"), ("s", "STRING"), ("p", "STRING")]
PROJECTIONS = [
    ["a", "s", "p", "_ROW_ID", "_SEQUENCE_NUMBER"],
    ["_SEQUENCE_NUMBER", "a", "_ROW_ID"],
    ["_ROW_ID"],
    ["p", "_SEQUENCE_NUMBER"],
    ["a", "s", "p"],
]


def _rt_rows(batch: int, n: int) -> list[list[Any]]:
    return [
        [batch * 100 + j, None if j % 5 == 0 else f"s{j}", "x" if j % 3 else "y"] for j in range(n)
    ]


def _our_projection(table: Any, projection: list[str], predicate: Any = None) -> list[list[Any]]:
    rb = table.new_read_builder().with_projection(projection)
    if predicate is not None:
        rb = rb.with_filter(predicate(rb.new_predicate_builder()))
    return sorted_rows(canonical_rows(rb.new_read().to_arrow(rb.new_scan().plan().splits())))


@pytest.mark.parametrize("file_format", ["parquet", "orc"])  # Java 1.4.2 fails on Avro's
def test_row_tracking_reads_equal_java(
    java_oracle: JavaOracle, tmp_path: Path, file_format: str
) -> None:
    """Java writes a row-tracking table in several commits, compacts it (the compacted files
    hold _ROW_ID and _SEQUENCE_NUMBER), writes again: our reads of every projection, with and
    without a filter, give exactly Java's rows, row ids and sequence numbers."""
    from options_b_oracle import read_fields

    options = {"row-tracking.enabled": "true", "bucket": "-1", "file.format": file_format}
    java_oracle.create_table(tmp_path, DB, "t", RT_FIELDS, partition_keys=["p"], options=options)
    for batch in range(3):
        java_oracle.write_rows(tmp_path, DB, "t", _rt_rows(batch, 7))
    compacts = file_format != "avro"  # Java 1.4.2 cannot read Avro files back to compact them
    if compacts:
        java_oracle._gateway.jvm.paimonoracle.OptionsBOracle.compactUnaware(str(tmp_path), DB, "t")
    java_oracle.write_rows(tmp_path, DB, "t", _rt_rows(3, 4))
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table(f"{DB}.t")
    files = [f for s in table.new_read_builder().new_scan().plan().splits() for f in s.files]
    assert any(f.write_cols and "_ROW_ID" in f.write_cols for f in files)  # compacted
    assert any(f.first_row_id is not None for f in files)  # written after
    for projection in PROJECTIONS:
        java = sorted_rows(read_fields(java_oracle, tmp_path, DB, "t", projection))
        assert len(java) == 25
        assert _our_projection(table, projection) == java, projection
    full = sorted_rows(read_fields(java_oracle, tmp_path, DB, "t", PROJECTIONS[0]))
    assert sorted(r[3] for r in full) == list(range(25))  # every row its own id
    filtered = _our_projection(table, PROJECTIONS[0], lambda b: b.greater_or_equal("a", 200))
    assert filtered == [r for r in full if r[0] >= 200]


def test_row_tracking_with_deletion_vectors_equal_java(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    """Rows a deletion vector drops keep the others' ids (positions count every row)."""
    from options_b_oracle import read_fields

    options = {"row-tracking.enabled": "true", "bucket": "-1", "deletion-vectors.enabled": "true"}
    java_oracle.create_table(tmp_path, DB, "t", RT_FIELDS, partition_keys=["p"], options=options)
    for batch in range(2):
        java_oracle.write_rows(tmp_path, DB, "t", _rt_rows(batch, 9))
    java_oracle.delete_where(tmp_path, DB, "t", "a", [1, 4, 102, 108])
    table = CatalogFactory.create({"warehouse": str(tmp_path)}).get_table(f"{DB}.t")
    java = sorted_rows(read_fields(java_oracle, tmp_path, DB, "t", PROJECTIONS[0]))
    assert len(java) == 14
    assert _our_projection(table, PROJECTIONS[0]) == java
