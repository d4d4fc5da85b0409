"""Wrong arguments to every public call: None, numbers, strings, containers, pandas and Arrow
objects of other shapes, a Plan where splits are expected, predicates of another table, ...

Property: each call succeeds or raises a PaimonError (never an AttributeError or a pyarrow
traceback from deep inside), and an InvalidArgumentError names the call it came from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzz.fuzz_support import Outcome, Sandbox, fuzz_settings, sandbox

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark.errors import InvalidArgumentError

SCHEMA = pa.schema([("k", pa.int64()), ("p", pa.string()), ("v", pa.string())])


@dataclass
class Tables:
    box: Sandbox
    append: FileStoreTable
    pk: FileStoreTable
    specials: list[Any]
    """Values that need a table to exist: its plan, splits, predicates, Arrow data."""


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tables]:
    with sandbox(tmp_path_factory, "fuzz-api") as box:
        catalog = box.catalog
        catalog.create_table("db.a", Schema.from_pyarrow_schema(SCHEMA, partition_keys=["p"]))
        catalog.create_table(
            "db.k", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["k"], options={"bucket": "1"})
        )
        append, pk = catalog.get_table("db.a"), catalog.get_table("db.k")
        rows = pa.table({"k": [1, 2], "p": ["x", "y"], "v": ["a", "b"]}, schema=SCHEMA)
        builder = append.new_batch_write_builder()
        with builder.new_write() as w:
            w.write_arrow(rows)
            builder.new_commit().commit(w.prepare_commit())
        plan = append.new_read_builder().new_scan().plan()
        other = pk.new_read_builder().new_predicate_builder()
        specials = [
            rows,
            rows.to_batches()[0],
            rows.to_pandas(),
            rows.to_pylist(),
            pa.RecordBatchReader.from_batches(SCHEMA, rows.to_batches()),
            rows.select(["k"]),
            rows.rename_columns(["k", "p", "k"]),
            pa.table({"k": ["x"], "p": [1], "v": [None]}),
            rows.column("k"),
            pa.array([1, 2]),
            plan,
            plan.splits(),
            [*plan.splits(), None],
            other.equal("k", 1),
            other.is_null("v"),
            append.new_read_builder().new_predicate_builder().equal("v", "a"),
            np.array([0, 0]),
            np.array([[0, 0]]),
            np.int64(1),
            [0, 0],
            (0, 1),
            (1, 0),
            ("0", "1"),
            {"p": "x"},
            {"k": 1},
            {"bucket": "2"},
            {"warehouse": str(box.warehouse)},
            {"warehouse": 5},
            {"warehouse": str(box.warehouse), "metastore": None},
            ["k"],
            ["k", "k"],
            ["zz"],
            "k",
            "",
            math.nan,
            -1,
            0,
            2**70,
            True,
            Decimal("1.5"),
            b"k",
            object(),
            Schema.from_pyarrow_schema(SCHEMA),
            SCHEMA,
        ]
        yield Tables(box, append, pk, specials)


JUNK = st.one_of(
    st.integers(0, 10**6).map(lambda i: ("special", i)),
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=5),
        st.binary(max_size=5),
        st.lists(st.integers(-3, 3), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.tuples(st.integers(-2, 2), st.integers(-2, 2)),
    ).map(lambda v: ("plain", v)),
)


def _write(table: FileStoreTable, fn: Callable[[Any], Any]) -> Callable[[], Any]:
    def run() -> Any:
        with table.new_batch_write_builder().new_write() as w:
            return fn(w)

    return run


def _read(table: FileStoreTable, fn: Callable[[Any], Any]) -> Callable[[], Any]:
    return lambda: fn(table.new_read_builder().new_read())


def _calls(t: Tables, v: Any) -> dict[str, Callable[[], Any]]:
    a, pk = t.append, t.pk
    rows = t.specials[0]
    pb = a.new_read_builder().new_predicate_builder()
    return {
        "TableWrite.write_arrow": _write(a, lambda w: w.write_arrow(v)),
        "TableWrite.write_arrow_batch": _write(a, lambda w: w.write_arrow_batch(v)),
        "TableWrite.write_pandas": _write(a, lambda w: w.write_pandas(v)),
        "TableWrite.rows_with_kinds": _write(pk, lambda w: w.rows_with_kinds(v)),
        "TableWrite.delete_arrow": _write(pk, lambda w: w.delete_arrow(v)),
        "TableWrite.write_arrow(buckets)": _write(a, lambda w: w.write_arrow(rows, buckets=v)),
        "TableWrite.write_arrow(row_kinds)": _write(pk, lambda w: w.write_arrow(rows, row_kinds=v)),
        "TableWrite(sequence_slot)": lambda: pk.new_batch_write_builder().new_write(v).close(),
        "TableWrite(commit_user)": lambda: a.new_batch_write_builder(v).new_write().close(),
        "BatchWriteBuilder.with_commit_user": lambda: a.new_batch_write_builder().with_commit_user(
            v
        ),
        "BatchWriteBuilder.overwrite": lambda: a.new_batch_write_builder().overwrite(v),
        "TableCommit.commit": lambda: a.new_batch_write_builder().new_commit().commit(v),
        "ReadBuilder.with_projection": lambda: a.new_read_builder().with_projection(v),
        "ReadBuilder.with_filter": lambda: a.new_read_builder().with_filter(v),
        "ReadBuilder.with_limit": lambda: a.new_read_builder().with_limit(v),
        "TableRead.to_arrow": _read(a, lambda r: r.to_arrow(v)),
        "TableRead.to_pandas": _read(pk, lambda r: r.to_pandas(v)),
        "TableRead.to_arrow_batch_reader": _read(
            a, lambda r: r.to_arrow_batch_reader(v).read_all()
        ),
        "FileStoreTable.copy": lambda: a.copy(v),
        "FileStoreTable.copy(value)": lambda: a.copy({"target-file-size": v}),
        "FileStoreTable.delete": lambda: pk.delete(v),
        "PredicateBuilder(field)": lambda: pb.equal(v, 1),
        "PredicateBuilder(literal)": lambda: pb.equal("k", v),
        "PredicateBuilder.is_in": lambda: pb.is_in("k", v),
        "PredicateBuilder.between": lambda: pb.between("k", v, 3),
        "PredicateBuilder.startswith": lambda: pb.startswith("v", v),
        "PredicateBuilder.like": lambda: pb.like("v", v),
        "PredicateBuilder.and_": lambda: pb.and_(v),
        "PredicateBuilder.or_predicates": lambda: pb.or_predicates(v),
        "CatalogFactory.create": lambda: CatalogFactory.create(v),
        "Catalog.get_table": lambda: t.box.catalog.get_table(v),
        "Catalog.create_table": lambda: t.box.catalog.create_table("db.new", v),
        "Schema.from_pyarrow_schema": lambda: Schema.from_pyarrow_schema(v),
    }


CALL_NAMES = [
    "TableWrite.write_arrow",
    "TableWrite.write_arrow_batch",
    "TableWrite.write_pandas",
    "TableWrite.rows_with_kinds",
    "TableWrite.delete_arrow",
    "TableWrite.write_arrow(buckets)",
    "TableWrite.write_arrow(row_kinds)",
    "TableWrite(sequence_slot)",
    "TableWrite(commit_user)",
    "BatchWriteBuilder.with_commit_user",
    "BatchWriteBuilder.overwrite",
    "TableCommit.commit",
    "ReadBuilder.with_projection",
    "ReadBuilder.with_filter",
    "ReadBuilder.with_limit",
    "TableRead.to_arrow",
    "TableRead.to_pandas",
    "TableRead.to_arrow_batch_reader",
    "FileStoreTable.copy",
    "FileStoreTable.copy(value)",
    "FileStoreTable.delete",
    "PredicateBuilder(field)",
    "PredicateBuilder(literal)",
    "PredicateBuilder.is_in",
    "PredicateBuilder.between",
    "PredicateBuilder.startswith",
    "PredicateBuilder.like",
    "PredicateBuilder.and_",
    "PredicateBuilder.or_predicates",
    "CatalogFactory.create",
    "Catalog.get_table",
    "Catalog.create_table",
    "Schema.from_pyarrow_schema",
]


@fuzz_settings(max_examples=700)
@given(call=st.sampled_from(CALL_NAMES), junk=JUNK)
def test_wrong_arguments(tables: Tables, call: str, junk: tuple[str, Any]) -> None:
    kind, raw = junk
    value = tables.specials[raw % len(tables.specials)] if kind == "special" else raw
    calls = _calls(tables, value)
    assert sorted(calls) == sorted(CALL_NAMES)
    out = Outcome("api")
    with tables.box.contained():
        _, error = out.step(calls[call])
    if isinstance(error, InvalidArgumentError):
        names = re.findall(r"[a-z_]+", call, re.IGNORECASE)
        assert any(n in str(error) for n in names[1:]), f"{call}: {error}"
    out.record()
