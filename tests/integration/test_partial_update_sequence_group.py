"""Partial-update with sequence groups, aggregates inside groups (also those on nested values,
bitmaps and a distinct listagg) and
``partial-update.remove-record-on-sequence-group``: hand-computed cases, a record-at-a-time model
of Java's PartialUpdateMergeFunction compared with the vectorized engine on random records, the
option checks, and merge-on-read / compaction through a real table."""

from __future__ import annotations

import random
from typing import Any

import pyarrow as pa
import pytest
from pyroaring import BitMap

from paimon_pyspark import Schema
from paimon_pyspark.errors import MergeError, OptionError, UnsupportedOptionError
from paimon_pyspark.merge import agg_collections, agg_sketches
from paimon_pyspark.merge.aggregation import AggSpec
from paimon_pyspark.merge.merge_function import MergeSettings, merge
from paimon_pyspark.merge.sequence_group import SequenceGroup
from paimon_pyspark.options import check_supported
from paimon_pyspark.procedures import compact
from paimon_pyspark.types.arrow import assign_field_ids, from_arrow_type
from paimon_pyspark.types.data_types import BIGINT, INT, STRING, DataField, DataType

SEQ, KIND = "_SEQUENCE_NUMBER", "_VALUE_KIND"
INS, UB, UA, D = 0, 1, 2, 3
NAMES = ["k", "a", "b", "s", "g1", "c", "d", "g2", "h", "e"]
TYPES: dict[str, DataType] = {n: INT() for n in NAMES}
TYPES["k"] = BIGINT()
TYPES["s"] = STRING()
ARROW = {"k": pa.int64(), "s": pa.string()}
FIELDS = [DataField(i, n, TYPES[n]) for i, n in enumerate(NAMES)]

GROUPS = {
    "merge-engine": "partial-update",
    "fields.g1.sequence-group": "a,b,s",
    "fields.g2,h.sequence-group": "c,d",
}


def settings_of(options: dict[str, str]) -> MergeSettings:
    check_supported(options, "t")
    return MergeSettings.from_options(options, FIELDS, ["k"], "t")


def table(rows: list[dict[str, Any]]) -> pa.Table:
    """Rows as dicts with k, the value fields (missing: null), seq and kind."""
    cols: dict[str, pa.Array] = {
        n: pa.array([r.get(n) for r in rows], ARROW.get(n, pa.int32())) for n in NAMES
    }
    cols[SEQ] = pa.array([r["seq"] for r in rows], pa.int64())
    cols[KIND] = pa.array([r.get("kind", INS) for r in rows], pa.int8())
    return pa.table(cols)


def merged(rows: list[dict[str, Any]], options: dict[str, str], drop: bool = False) -> list[Any]:
    out = merge(table(rows), ["k"], settings_of(options), drop_delete=drop)
    return [tuple(r[n] for n in [*NAMES, SEQ, KIND]) for r in out.to_pylist()]


# --- the model: Java's add() / getResult(), one record at a time --------------------------------


class JavaModel:
    """A literal transcription of PartialUpdateMergeFunction's per-record logic for the groups
    and functions of these tests (sum, max, last_value, last_non_null_value, first_*, listagg;
    the functions on nested values, sketches and bitmaps call the aggregation engine's ``agg`` /
    ``retract``, checked against Java in tests/interop/test_aggregate_functions_java.py)."""

    def __init__(self, s: MergeSettings, names: list[str] = NAMES) -> None:
        self.s = s
        self.names = names
        idx = {n: i for i, n in enumerate(names)}
        self.cmp: dict[int, SequenceGroup] = {}
        for g in s.sequence_groups:
            for f in (*g.sequence_fields, *g.fields):
                self.cmp[idx[f]] = g
        self.aggs = {idx[n]: spec for n, spec in s.partial_update_aggs}
        self.seen: dict[int, bool] = {}  # the first_* functions' "initialized", per field
        self.idx = idx

    def key_result(self, recs: list[dict[str, Any]]) -> tuple[Any, ...]:
        if len(recs) == 1:
            r = recs[0]
            return (*[r.get(n) for n in self.names], r["seq"], r.get("kind", INS))
        row: list[Any] = [None] * len(self.names)
        filled = meet_insert = deleted = False
        self.seen = {}
        latest = 0
        for r in recs:
            vals = [r.get(n) for n in self.names]
            kind = r.get("kind", INS)
            deleted = False
            if kind in (UB, D):
                if not filled:
                    row, filled = list(vals), True
                if self.s.ignore_delete:
                    continue
                latest = r["seq"]
                if self.s.sequence_groups:
                    row, deleted = self._retract(row, vals, kind)
                    continue
                if self.s.remove_record_on_delete:
                    if kind == D:
                        deleted, row = True, list(vals)
                    continue
                raise MergeError("delete")
            latest = r["seq"]
            self._update(row, vals)
            meet_insert = filled = True
        kind = D if deleted or not meet_insert else INS
        return (*row, latest, kind)

    def _tuple(self, values: list[Any], g: SequenceGroup) -> tuple[Any, ...]:
        return tuple(
            (v is not None, v or 0) for v in (values[self.idx[s]] for s in g.sequence_fields)
        )

    def _empty(self, values: list[Any], g: SequenceGroup) -> bool:
        return all(values[self.idx[s]] is None for s in g.sequence_fields)

    def _agg(self, i: int, acc: Any, x: Any) -> Any:
        spec = self.aggs[i]
        func, delimiter = spec.function, spec.delimiter
        if func in NESTED_OR_SKETCH or spec.distinct:
            return engine_folds(spec)[0](acc, x)
        if func in ("first_value", "first_non_null_value"):
            if not self.seen.get(i) and (x is not None or func == "first_value"):
                self.seen[i] = True
                return x
            return acc
        if func == "listagg":
            if acc is None or x is None:
                return x if acc is None else acc
            return acc if x == "" else x if acc == "" else f"{acc}{delimiter}{x}"
        if func == "sum" or func == "max":
            if acc is None or x is None:
                return x if acc is None else acc
            return acc + x if func == "sum" else max(acc, x)
        if func == "last_value":
            return x
        return acc if x is None else x  # last_non_null_value

    def _agg_reversed(self, i: int, acc: Any, x: Any) -> Any:
        spec = self.aggs[i]
        if spec.function == "collect" and not spec.ignore_retract:
            return self._agg(i, acc, x)  # FieldCollectAgg.aggReversed
        return self._agg(i, x, acc)

    def _retract_agg(self, spec: AggSpec, acc: Any, x: Any) -> Any:
        func = spec.function
        if spec.ignore_retract:
            return acc
        if func in NESTED_OR_SKETCH:
            retract = engine_folds(spec)[1]
            if retract is None:
                raise MergeError("no retract")
            return retract(acc, x)
        if func == "sum":
            if acc is None or x is None:
                return -x if acc is None and x is not None else acc
            return acc - x
        if func == "last_value":
            return None
        if func == "last_non_null_value":
            return None if x is not None else acc
        raise MergeError("no retract")

    def _update(self, row: list[Any], vals: list[Any]) -> None:
        for i, n in enumerate(self.names):
            g = self.cmp.get(i)
            agg = self.aggs.get(i)
            if g is None:
                if vals[i] is not None:
                    row[i] = vals[i]
                continue
            if self._empty(vals, g):
                continue
            if self._tuple(vals, g) >= self._tuple(row, g):
                if n in g.sequence_fields:
                    for s in g.sequence_fields:
                        row[self.idx[s]] = vals[self.idx[s]]
                    continue
                row[i] = vals[i] if agg is None else self._agg(i, row[i], vals[i])
            elif agg is not None:
                row[i] = self._agg_reversed(i, row[i], vals[i])

    def _retract(self, row: list[Any], vals: list[Any], kind: int) -> tuple[list[Any], bool]:
        for i, n in enumerate(self.names):
            g = self.cmp.get(i)
            if g is None or self._empty(vals, g):
                continue
            agg = self.aggs.get(i)
            if self._tuple(vals, g) >= self._tuple(row, g):
                if n in g.sequence_fields:
                    if kind == D and g.removes_record:
                        return list(vals), True
                    for s in g.sequence_fields:
                        row[self.idx[s]] = vals[self.idx[s]]
                elif agg is None:
                    row[i] = None
                else:
                    row[i] = self._retract_agg(agg, row[i], vals[i])
            elif agg is not None:
                row[i] = self._retract_agg(agg, row[i], vals[i])
        return row, False


NESTED_OR_SKETCH = (*agg_collections.FUNCTIONS, *agg_sketches.FUNCTIONS)


def engine_folds(spec: AggSpec) -> tuple[Any, Any]:
    """The aggregation engine's (agg, retract) of a function on nested values, a sketch, a
    bitmap or a distinct listagg."""
    if spec.function in agg_sketches.FUNCTIONS:
        return agg_sketches.folder(spec.function), None
    if spec.function == "listagg":
        return agg_collections.listagg_distinct(spec.delimiter), None
    assert spec.data_type is not None
    return agg_collections.folders(
        spec.function,
        spec.data_type,
        spec.distinct,
        spec.nested_key,
        spec.count_limit,
        spec.ts_field,
    )


def model(rows: list[dict[str, Any]], options: dict[str, str]) -> list[Any]:
    m = JavaModel(settings_of(options))
    by_key: dict[int, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["k"], r["seq"])):
        by_key.setdefault(r["k"], []).append(r)
    return [m.key_result(by_key[k]) for k in sorted(by_key)]


# --- hand-computed cases ------------------------------------------------------------------------


def test_each_group_moves_with_its_own_sequence() -> None:
    rows = [
        {"k": 1, "a": 1, "b": 1, "g1": 10, "c": 1, "d": 1, "g2": 5, "h": 0, "seq": 0},
        # g1 older: a/b unchanged; g2 newer: c/d replaced, d even by null
        {"k": 1, "a": 2, "b": 2, "g1": 9, "c": 3, "g2": 6, "h": 0, "e": 7, "seq": 1},
        # g1 all null: group skipped; g2 tuple (5, 9) < (6, 0): skipped
        {"k": 1, "a": 5, "c": 4, "g2": 5, "h": 9, "seq": 2},
    ]
    assert merged(rows, GROUPS) == [(1, 1, 1, None, 10, 3, None, 6, 0, 7, 2, INS)]


def test_retraction_nulls_its_group_and_remove_on_sequence_group_deletes_the_row() -> None:
    base = [
        {"k": 1, "a": 1, "b": 1, "g1": 10, "c": 1, "g2": 5, "h": 0, "seq": 0},
        {"k": 1, "a": 9, "g1": 11, "seq": 1, "kind": D},
    ]
    assert merged(base, GROUPS) == [(1, None, None, None, 11, 1, None, 5, 0, None, 1, INS)]
    removing = {**GROUPS, "partial-update.remove-record-on-sequence-group": "g1"}
    assert merged(base, removing) == [(1, 9, None, None, 11, None, None, None, None, None, 1, D)]
    assert merged(base, removing, drop=True) == []
    # an older -D does not win its group: nothing happens
    older = [base[0], {**base[1], "g1": 3}]
    assert merged(older, removing) == [(1, 1, 1, None, 10, 1, None, 5, 0, None, 1, INS)]
    # an addition after the removal starts from the -D's values
    again = [*base, {"k": 1, "c": 2, "g2": 1, "h": 0, "seq": 2}]
    assert merged(again, removing) == [(1, 9, None, None, 11, 2, None, 1, 0, None, 2, INS)]


def test_aggregates_inside_groups() -> None:
    options = {
        **GROUPS,
        "fields.a.aggregate-function": "sum",
        "fields.b.aggregate-function": "last_non_null_value",
        "fields.c.aggregate-function": "max",
    }
    rows = [
        {"k": 1, "a": 1, "b": 1, "g1": 10, "c": 4, "g2": 1, "h": 1, "seq": 0},
        {"k": 1, "a": 2, "g1": 8, "c": 9, "g2": 0, "h": 1, "seq": 1},  # older: still folded
        {"k": 1, "a": 4, "b": 3, "g1": 12, "seq": 2},
        {"k": 1, "a": 1, "b": 5, "g1": 12, "seq": 3, "kind": UB},  # retracts a, clears b
    ]
    assert merged(rows, options) == [(1, 6, None, None, 12, 9, None, 1, 1, None, 3, INS)]


def test_order_dependent_aggregates_fold_an_older_record_before_the_row() -> None:
    options = {
        **GROUPS,
        "fields.s.aggregate-function": "listagg",
        "fields.a.aggregate-function": "first_value",
        "fields.b.aggregate-function": "first_non_null_value",
    }
    rows = [
        {"k": 1, "s": "x", "a": 1, "g1": 5, "seq": 0},
        {"k": 1, "s": "y", "a": 2, "b": 7, "g1": 6, "seq": 1},  # newer: appended
        {"k": 1, "s": "z", "a": 3, "b": 8, "g1": 4, "seq": 2},  # older: prepended, and "first"
        {"k": 1, "s": "w", "a": 4, "g1": 3, "seq": 3},  # older still: a null b replaces too
    ]
    assert merged(rows, options) == [
        (1, 4, None, "w,z,x,y", 6, None, None, None, None, None, 3, INS)
    ]


def test_default_aggregate_function_covers_protected_fields() -> None:
    options = {
        "merge-engine": "partial-update",
        "fields.g1.sequence-group": "a,b,c,d,e",
        "fields.default-aggregate-function": "sum",
    }
    rows = [{"k": 1, "a": 1, "g1": 1, "seq": 0}, {"k": 1, "a": 2, "b": 1, "g1": 0, "seq": 1}]
    # s is outside the group: only last_non_null_value would be allowed there
    with pytest.raises(OptionError, match="'s'"):
        settings_of(options)
    options["fields.g1.sequence-group"] = "a,b,s,c,d,e,g2,h"
    with pytest.raises(OptionError, match="'sum'.*'s'|'s'.*STRING"):  # sum on a string
        settings_of(options)
    options["fields.s.aggregate-function"] = "listagg"
    assert merged(rows, options)[0][:3] == (1, 3, 1)


@pytest.mark.parametrize(
    "options",
    [
        GROUPS,
        {**GROUPS, "ignore-delete": "true"},
        {**GROUPS, "partial-update.remove-record-on-sequence-group": "g1"},
        {**GROUPS, "partial-update.remove-record-on-sequence-group": "g1,h"},
        {
            **GROUPS,
            "partial-update.remove-record-on-sequence-group": "g2",
            "fields.a.aggregate-function": "sum",
            "fields.b.aggregate-function": "last_value",
            "fields.d.aggregate-function": "last_non_null_value",
            "fields.c.aggregate-function": "max",
            "fields.c.ignore-retract": "true",
        },
        {**GROUPS, "fields.a.aggregate-function": "sum", "fields.a.ignore-retract": "true"},
        {
            **GROUPS,
            "partial-update.remove-record-on-sequence-group": "g1",
            "fields.s.aggregate-function": "listagg",
            "fields.s.list-agg-delimiter": "|",
            "fields.s.ignore-retract": "true",
            "fields.a.aggregate-function": "first_value",
            "fields.a.ignore-retract": "true",
            "fields.b.aggregate-function": "first_non_null_value",
            "fields.b.ignore-retract": "true",
            "fields.c.aggregate-function": "first_value",
        },
    ],
)
def test_random_records_match_the_java_model(options: dict[str, str]) -> None:
    rnd = random.Random(len(str(options)))
    for _ in range(40):
        rows = []
        for seq in range(rnd.randint(1, 60)):
            r: dict[str, Any] = {"k": rnd.randint(0, 6), "seq": seq}
            for n in NAMES[1:]:
                if rnd.random() < 0.6:
                    r[n] = rnd.choice("xy ") if n == "s" else rnd.randint(0, 4)
                elif n == "s" and rnd.random() < 0.3:
                    r[n] = ""
            r["kind"] = rnd.choice([INS, INS, UA, UB, D])
            rows.append(r)
        try:
            expected = model(rows, options)
        except MergeError:
            with pytest.raises(MergeError):
                merged(rows, options)
            continue
        assert merged(rows, options) == expected, rows


# --- option checks ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "error", "match"),
    [
        ({"fields.g1.sequence-group": "a,nope"}, OptionError, "nope"),
        ({"fields.nope.sequence-group": "a"}, OptionError, "nope"),
        ({"fields.g1.sequence-group": "a", "fields.g2.sequence-group": "a"}, OptionError, "'a'"),
        (
            {"fields.g1.sequence-group": "a,g2", "fields.g2.sequence-group": "c"},
            UnsupportedOptionError,
            "g2",
        ),
        ({"fields.a.aggregate-function": "sum"}, OptionError, "sequence group"),
        (
            {"fields.g1.sequence-group": "a", "fields.a.aggregate-function": "nope"},
            OptionError,
            "nope",
        ),
        (
            {"fields.g1.sequence-group": "a", "fields.a.aggregate-function": "bool_or"},
            OptionError,
            "bool_or",
        ),
        (
            {"fields.g1.sequence-group": "a", "fields.a.aggregate-function": "listagg"},
            OptionError,
            "listagg",
        ),
        (
            {"fields.g1.sequence-group": "a", "fields.a.aggregate-function": "collect"},
            OptionError,
            "must be ARRAY",
        ),
        (
            {"fields.g1.sequence-group": "s", "fields.s.aggregate-function": "hll_sketch"},
            OptionError,
            "hll_sketch",
        ),
        (
            {
                "fields.g1.sequence-group": "a",
                "partial-update.remove-record-on-sequence-group": "a",
            },
            OptionError,
            "must be part of sequence groups",
        ),
        (
            {
                "fields.g1.sequence-group": "a",
                "partial-update.remove-record-on-sequence-group": "g1",
                "ignore-delete": "true",
            },
            OptionError,
            "conflicting",
        ),
        (
            {"fields.g1.sequence-group": "a", "partial-update.remove-record-on-delete": "true"},
            OptionError,
            "conflicting",
        ),
        ({"fields.default-aggregate-function": "nope"}, OptionError, "nope"),
        (
            {
                "fields.g1.sequence-group": "a",
                "fields.a.aggregate-function": "sum",
                "fields.a.ignore-retract": "true",
                "aggregation.remove-record-on-delete": "true",
            },
            OptionError,
            "conflicting",
        ),
    ],
)
def test_refusals_name_table_option_and_field(
    options: dict[str, str], error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match) as info:
        settings_of({"merge-engine": "partial-update", **options})
    assert "Table 't'" in str(info.value)


def test_sequence_group_options_are_ignored_by_other_engines_as_in_java() -> None:
    s = settings_of({"fields.g1.sequence-group": "a,b"})
    assert s.sequence_groups == ()


def test_parsed_groups() -> None:
    s = settings_of({**GROUPS, "partial-update.remove-record-on-sequence-group": "h"})
    assert s.sequence_groups == (
        SequenceGroup(("g1",), ("a", "b", "s"), False),
        SequenceGroup(("g2", "h"), ("c", "d"), True),
    )


# --- through a table: merge-on-read, compaction, a Spark DELETE ---------------------------------

TABLE_SCHEMA = pa.schema(
    [pa.field("k", pa.int64(), nullable=False)] + [(n, ARROW.get(n, pa.int32())) for n in NAMES[1:]]
)


def write(table: Any, rows: list[dict[str, Any]]) -> None:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        data = pa.Table.from_pylist([{n: r.get(n) for n in NAMES} for r in rows], TABLE_SCHEMA)
        w.write_arrow(data, row_kinds=[r.get("kind", INS) for r in rows])
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)


def read(table: Any) -> list[tuple[Any, ...]]:
    rb = table.new_read_builder()
    out = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    return sorted(tuple(r[n] for n in NAMES) for r in out.to_pylist())


def test_merge_on_read_and_after_compaction(catalog: Any) -> None:
    options = {
        **GROUPS,
        "bucket": "1",
        "write-only": "true",
        "partial-update.remove-record-on-sequence-group": "g1",
        "fields.c.aggregate-function": "sum",
    }
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(TABLE_SCHEMA, primary_keys=["k"], options=options)
    )
    table = catalog.get_table("db.t")
    write(
        table,
        [
            {"k": 1, "a": 1, "b": 1, "g1": 2, "c": 5, "g2": 1, "h": 0},
            {"k": 2, "a": 2, "s": "x", "g1": 1, "c": 1, "g2": 1, "h": 0, "e": 4},
        ],
    )
    write(
        table,
        [
            {"k": 1, "a": 9, "g1": 1, "c": 6, "g2": 2, "h": 0},  # g1 older, g2 newer (sum)
            {"k": 2, "c": 3, "g2": 0, "h": 5, "e": 5},  # g2 older: c still summed
        ],
    )
    write(table, [{"k": 2, "a": 7, "g1": 1, "kind": D}])  # wins g1 (equal): removes k=2
    expected = [(1, 1, 1, None, 2, 11, None, 2, 0, None)]
    assert read(table) == expected
    compact(catalog, "db.t")
    snapshot = table.snapshot_manager.latest()
    assert {e.file.level for e in table.manifest_io.live_entries(snapshot)} == {5}
    assert read(catalog.get_table("db.t")) == expected


@pytest.mark.slow
def test_spark_delete_removes_rows_with_remove_record_on_sequence_group(
    spark: Any, catalog: Any, warehouse: str
) -> None:
    """Java's validatePKUpsertDeletable accepts the option; the -D records the DELETE writes
    carry the row's own group sequence, so they win and remove the row."""
    from paimon_pyspark.spark.dml import delete

    options = {**GROUPS, "bucket": "1", "partial-update.remove-record-on-sequence-group": "g1"}
    catalog.create_database("db", ignore_if_exists=True)
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(TABLE_SCHEMA, primary_keys=["k"], options=options)
    )
    table = catalog.get_table("db.t")
    write(table, [{"k": 1, "a": 1, "g1": 1}, {"k": 2, "a": 2, "g1": 1, "c": 3, "g2": 1}])
    assert delete(spark, warehouse, "db.t", "k = 2") is not None
    assert read(catalog.get_table("db.t")) == [(1, 1, None, None, 1, None, None, None, None, None)]


def test_many_removals_of_one_key() -> None:
    """More removals than the vectorized rounds find: the rest are walked."""
    options = {**GROUPS, "partial-update.remove-record-on-sequence-group": "g1"}
    rows: list[dict[str, Any]] = []
    for i in range(12):
        rows.append({"k": 1, "a": i, "g1": i, "seq": 2 * i})
        rows.append({"k": 1, "a": 100 + i, "g1": i, "seq": 2 * i + 1, "kind": D})
    rows.append({"k": 1, "c": 5, "g2": 1, "h": 1, "seq": 24})
    expected = [(1, 111, None, None, 11, 5, None, 1, 1, None, 24, INS)]
    assert merged(rows, options) == expected == model(rows, options)
    assert merged(rows[:-1], options) == [(1, 111, None, None, 11, *[None] * 5, 23, D)]


# --- the functions on nested values, bitmaps and a distinct listagg inside groups -------------

ROWS = pa.struct([("id", pa.int32()), ("n", pa.int32())])
STAMPED = pa.struct([("v", pa.string()), ("ts", pa.string())])
NESTED_ARROW = {
    "k": pa.int64(),
    "c": pa.list_(pa.int32()),
    "cr": pa.list_(pa.int32()),
    "cd": pa.list_(pa.string()),
    "mm": pa.map_(pa.string(), pa.int32()),
    "mk": pa.map_(pa.int32(), STAMPED),
    "g1": pa.int32(),
    "nu": pa.list_(ROWS),
    "np": pa.list_(ROWS),
    "la": pa.string(),
    "rb": pa.binary(),
    "g2": pa.int32(),
    "h": pa.int32(),
}
NESTED_NAMES = list(NESTED_ARROW)
NESTED_FIELDS = assign_field_ids(
    [(n, from_arrow_type(t, nullable=n != "k")) for n, t in NESTED_ARROW.items()]
)[0]
NESTED_OPTIONS = {
    "merge-engine": "partial-update",
    "fields.g1.sequence-group": "c,cd,mk,np,rb",
    "fields.g2,h.sequence-group": "cr,mm,nu,la",
    "fields.c.aggregate-function": "collect",
    "fields.cr.aggregate-function": "collect",
    "fields.cr.ignore-retract": "true",
    "fields.cd.aggregate-function": "collect",
    "fields.cd.distinct": "true",
    "fields.mm.aggregate-function": "merge_map",
    "fields.mk.aggregate-function": "merge_map_with_keytime",
    "fields.mk.ignore-retract": "true",
    "fields.nu.aggregate-function": "nested_update",
    "fields.nu.nested-key": "id",
    "fields.np.aggregate-function": "nested_partial_update",
    "fields.np.nested-key": "id",
    "fields.np.ignore-retract": "true",
    "fields.la.aggregate-function": "listagg",
    "fields.la.distinct": "true",
    "fields.la.ignore-retract": "true",
    "fields.rb.aggregate-function": "rbm32",
    "fields.rb.ignore-retract": "true",
}
NESTED_SCHEMA = pa.schema([*NESTED_ARROW.items(), (SEQ, pa.int64()), (KIND, pa.int8())])


def nested_settings(options: dict[str, str]) -> MergeSettings:
    check_supported(options, "t")
    return MergeSettings.from_options(options, NESTED_FIELDS, ["k"], "t")


def nested_table(rows: list[dict[str, Any]]) -> pa.Table:
    return pa.Table.from_pylist(
        [
            {**{n: r.get(n) for n in NESTED_NAMES}, SEQ: r["seq"], KIND: r.get("kind", INS)}
            for r in rows
        ],
        schema=NESTED_SCHEMA,
    )


def nested_merged(rows: list[dict[str, Any]], options: dict[str, str]) -> list[dict[str, Any]]:
    out = merge(nested_table(rows), ["k"], nested_settings(options), drop_delete=False)
    return list(out.to_pylist())


def nested_model(rows: list[dict[str, Any]], options: dict[str, str]) -> list[dict[str, Any]]:
    m = JavaModel(nested_settings(options), NESTED_NAMES)
    by_key: dict[int, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: (r["k"], r["seq"])):
        by_key.setdefault(r["k"], []).append(r)
    results = [m.key_result(by_key[k]) for k in sorted(by_key)]
    # Through Arrow, so that maps and rows compare in one form.
    return list(
        pa.Table.from_pylist(
            [dict(zip([*NESTED_NAMES, SEQ, KIND], r, strict=True)) for r in results],
            schema=NESTED_SCHEMA,
        ).to_pylist()
    )


def nested_record(rnd: random.Random, seq: int) -> dict[str, Any]:
    def maybe(v: Any, p: float = 0.25) -> Any:
        return None if rnd.random() < p else v

    def ids(n: int) -> list[Any]:
        return [
            maybe({"id": rnd.randint(0, 3), "n": maybe(rnd.randint(0, 9))}, 0.1) for _ in range(n)
        ]

    return {
        "k": rnd.randint(0, 5),
        "seq": seq,
        "kind": rnd.choice([INS, INS, UA, UB, D]),
        "c": maybe([maybe(rnd.randint(0, 3), 0.1) for _ in range(rnd.randint(0, 3))]),
        "cr": maybe([rnd.randint(0, 3) for _ in range(rnd.randint(0, 2))]),
        "cd": maybe([rnd.choice("xyzw") for _ in range(rnd.randint(0, 3))]),
        "mm": maybe([(k, maybe(rnd.randint(0, 9))) for k in rnd.sample("abcd", 2)]),
        "mk": maybe(
            [
                (k, maybe({"v": rnd.choice("pq"), "ts": maybe(rnd.choice(["t1", "t2", "t3"]))}))
                for k in rnd.sample(range(4), rnd.randint(0, 2))
            ]
        ),
        "g1": maybe(rnd.randint(0, 3), 0.2),
        "nu": maybe(ids(rnd.randint(0, 2))),
        "np": maybe(ids(rnd.randint(0, 2))),
        "la": maybe(",".join(rnd.choice(["a", "b", "cc", ""]) for _ in range(2))),
        "rb": maybe(bytes(BitMap(rnd.sample(range(100), rnd.randint(0, 4))).serialize())),
        "g2": maybe(rnd.randint(0, 3), 0.2),
        "h": maybe(rnd.randint(0, 2), 0.3),
    }


def test_collections_and_bitmaps_inside_groups_by_hand() -> None:
    rows = [
        {"k": 1, "c": [1], "cr": [1], "g1": 5, "g2": 5, "h": 0, "seq": 0},
        {"k": 1, "c": [2], "cr": [2], "g1": 6, "g2": 6, "h": 0, "seq": 1},  # newer: appended
        # older: collect keeps the row first (FieldCollectAgg.aggReversed); with ignore-retract
        # FieldIgnoreRetractAgg's aggReversed puts the older input first
        {"k": 1, "c": [3], "cr": [3], "g1": 4, "g2": 4, "h": 0, "seq": 2},
        {"k": 1, "c": [1, 9], "cr": [2], "g1": 1, "g2": 1, "h": 0, "seq": 3, "kind": UB},
    ]
    out = nested_merged(rows, NESTED_OPTIONS)
    assert (out[0]["c"], out[0]["cr"]) == ([2, 3], [3, 1, 2])
    assert out == nested_model(rows, NESTED_OPTIONS)


def test_map_nested_listagg_bitmap_inside_groups_by_hand() -> None:
    rows = [
        {"k": 1, "mm": [("a", 1)], "la": "a,b", "g2": 5, "h": 0, "seq": 0},
        {"k": 1, "mm": [("a", 2), ("b", 3)], "la": "b,c", "g2": 3, "h": 0, "seq": 1},  # older
        {"k": 1, "nu": [{"id": 1, "n": 1}], "g2": 7, "h": 0, "seq": 2},
        {
            "k": 1,
            "mm": [("b", 3)],
            "nu": [{"id": 1, "n": 5}],
            "g2": 1,
            "h": 0,
            "seq": 3,
            "kind": D,
        },  # older -D: still retracts merge_map's key and nested_update's row
        {"k": 1, "rb": bytes(BitMap([1, 2]).serialize()), "g1": 2, "seq": 4},
        {"k": 1, "rb": bytes(BitMap([7]).serialize()), "g1": 1, "seq": 5},
    ]
    out = nested_merged(rows, NESTED_OPTIONS)[0]
    assert out["mm"] == [("a", 1)]  # the older record's a=2 folds under the row's a=1
    assert out["la"] == "b,c,a"
    assert out["nu"] == []
    assert sorted(BitMap.deserialize(out["rb"])) == [1, 2, 7]
    assert [out] == nested_model(rows, NESTED_OPTIONS)


@pytest.mark.parametrize(
    "options",
    [
        NESTED_OPTIONS,
        {**NESTED_OPTIONS, "partial-update.remove-record-on-sequence-group": "h"},
        {**NESTED_OPTIONS, "ignore-delete": "true"},
    ],
)
def test_collections_and_bitmaps_match_the_java_model(options: dict[str, str]) -> None:
    rnd = random.Random(len(options))
    for _ in range(30):
        rows = [nested_record(rnd, seq) for seq in range(rnd.randint(1, 40))]
        try:
            expected = nested_model(rows, options)
        except MergeError:
            with pytest.raises(MergeError):
                nested_merged(rows, options)
            continue
        assert nested_merged(rows, options) == expected, rows
