"""``bucket-function.type``: mod and hive computed as Java's ModBucketFunction and
HiveBucketFunction do (values worked out by hand from Java's formulas; the random-key
comparison with Java itself is tests/interop/test_options_b_java.py), and where the option
applies: fixed and postpone buckets, not dynamic ones."""

from __future__ import annotations

import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.bucket.fixed import FixedBucketAssigner
from paimon_pyspark.errors import OptionError
from paimon_pyspark.types.data_types import BIGINT, BYTES, INT, STRING, DataType, DecimalType


def _java_string_hash(s: bytes) -> int:
    h = 0
    for b in s:
        h = (31 * h + (b - 256 if b > 127 else b)) & 0xFFFFFFFF
    return h


def test_mod_is_floor_mod_and_null_is_bucket_zero() -> None:
    keys = pa.array([-7, -1, 0, 6, 7, None, 2**31 - 1], pa.int32())
    got = FixedBucketAssigner([INT()], 3, "mod").assign([keys])
    assert got.tolist() == [2, 2, 0, 0, 1, 0, (2**31 - 1) % 3]
    longs = pa.chunked_array([[-(2**63), 5], [2**63 - 1]], pa.int64())
    assert FixedBucketAssigner([BIGINT()], 10, "mod").assign([longs]).tolist() == [
        (-(2**63)) % 10,
        5,
        (2**63 - 1) % 10,
    ]


def test_hive_strings_ints_and_combination() -> None:
    words = ["", "abc", "é漢😀", "a" * 50, None]
    strings = pa.array(words)
    ints = pa.array([1, -1, 0, 123456, None], pa.int32())
    key: list[DataType] = [STRING(), INT()]
    got = FixedBucketAssigner(key, 1000, "hive").assign([strings, ints])
    expected = []
    for w, i in zip(words, [1, -1, 0, 123456, None], strict=True):
        h = _java_string_hash(w.encode()) if w is not None else 0
        h = (31 * h + ((i or 0) & 0xFFFFFFFF)) & 0xFFFFFFFF
        expected.append((h & 0x7FFFFFFF) % 1000)
    assert got.tolist() == expected
    assert _java_string_hash(b"abc") == 96354  # Java's "abc".hashCode()


def test_hive_bytes_and_decimals() -> None:
    raw = [b"\xff\x00\x80", b""]
    got = FixedBucketAssigner([BYTES()], 2**31 - 1, "hive").assign([pa.array(raw)])
    assert got.tolist() == [(_java_string_hash(v) & 0x7FFFFFFF) for v in raw]
    # BigDecimal("1.5").hashCode() = 31 * 15 + 1; 2.50 is stripped to 2.5; 100.00 to 100 (scale 0)
    values = [decimal.Decimal(v) for v in ("1.50", "2.50", "100.00", "-0.01", "0.00")]
    expected = [31 * 15 + 1, 31 * 25 + 1, 31 * 100, (31 * -1 + 2) & 0x7FFFFFFF, 0]
    for t in (DecimalType(10, 2), DecimalType(30, 2)):
        arr = pa.array(values, pa.decimal128(t.precision, 2))
        got = FixedBucketAssigner([t], 2**31 - 1, "hive").assign([arr])
        assert got.tolist() == [e % (2**31 - 1) for e in expected], t


def test_mod_refuses_other_keys_and_the_option_is_checked() -> None:
    with pytest.raises(OptionError, match="exactly one field"):
        FixedBucketAssigner([INT(), INT()], 3, "mod")
    with pytest.raises(OptionError, match="INT or BIGINT"):
        FixedBucketAssigner([STRING()], 3, "mod")


def _table(tmp_path: Path, options: dict[str, str], pk: bool = True):  # type: ignore[no-untyped-def]
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("k", pa.string(), nullable=False), pa.field("v", pa.int64())])
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(schema, primary_keys=["k"] if pk else [], options=options),
        ignore_if_exists=False,
    )
    return catalog.get_table("db.t"), schema


def _write(table, schema: pa.Schema, n: int) -> None:  # type: ignore[no-untyped-def]
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"k": [f"k{i}" for i in range(n)], "v": list(range(n))}, schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def test_bad_value_is_refused_and_case_is_ignored(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="bucket-function.type"):
        _table(tmp_path / "a", {"bucket": "2", "bucket-function.type": "murmur"})
    table, schema = _table(tmp_path / "b", {"bucket": "4", "bucket-function.type": "HIVE"})
    _write(table, schema, 50)
    rb = table.new_read_builder()
    expected = FixedBucketAssigner([STRING()], 4, "hive")
    for split in rb.new_scan().plan().splits():
        keys = rb.new_read().to_arrow([split]).column("k")
        assert set(expected.assign([keys]).tolist()) == {split.bucket}


def test_dynamic_buckets_ignore_the_function_as_java(tmp_path: Path) -> None:
    """Java's dynamic-bucket writers never build a bucket function, so mod on a string key
    changes nothing there; on a fixed-bucket table the same key is refused at the write."""
    table, schema = _table(tmp_path / "d", {"bucket": "-1", "bucket-function.type": "mod"})
    _write(table, schema, 20)
    assert (
        table.new_read_builder()
        .new_read()
        .to_arrow(table.new_read_builder().new_scan().plan().splits())
        .num_rows
        == 20
    )
    fixed, schema = _table(tmp_path / "f", {"bucket": "3", "bucket-function.type": "mod"})
    with pytest.raises(OptionError, match="INT or BIGINT"):
        _write(fixed, schema, 5)


def test_postpone_fixed_bucket_writes_use_the_function(tmp_path: Path) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = pa.schema([pa.field("k", pa.int64(), nullable=False), pa.field("v", pa.int64())])
    options = {"bucket": "-2", "bucket-function.type": "mod", "postpone.default-bucket-num": "4"}
    catalog.create_table(
        "db.p", Schema.from_pyarrow_schema(schema, primary_keys=["k"], options=options)
    )
    table = catalog.get_table("db.p")
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"k": list(range(-10, 10)), "v": list(range(20))}, schema))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    rb = table.new_read_builder()
    splits = rb.new_scan().plan().splits()
    assert splits
    for split in splits:
        keys = np.asarray(rb.new_read().to_arrow([split]).column("k").to_pylist())
        assert set((keys % 4).tolist()) == {split.bucket}
