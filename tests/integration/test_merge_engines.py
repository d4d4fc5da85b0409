"""Merge engines end to end: random inserts, updates and deletes (``rowkind.field``) over several
commits, read back with merge-on-read, compared with the plain-Python reference model applied
the way Java's pipeline applies the merge function: once per commit in the write buffer
(retractions kept), then over every flushed record at read time (retractions dropped)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, Schema
from paimon_pyspark.errors import MergeError
from paimon_pyspark.merge.merge_function import MergeSettings

sys.path.insert(0, str(Path(__file__).parent.parent / "unit" / "merge"))
from merge_reference_model import KIND, SEQ, model_merge

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        ("a", pa.int32()),
        ("s", pa.string()),
        ("d", pa.float64()),
        ("op", pa.string()),
    ]
)
KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}
CONFIGS: dict[str, dict[str, str]] = {
    "deduplicate": {},
    "deduplicate-ignore-delete": {"ignore-delete": "true"},
    "partial-update": {"merge-engine": "partial-update"},
    "partial-update-ignore-delete": {"merge-engine": "partial-update", "ignore-delete": "true"},
    "partial-update-remove": {
        "merge-engine": "partial-update",
        "partial-update.remove-record-on-delete": "true",
    },
    "aggregation": {
        "merge-engine": "aggregation",
        "fields.a.aggregate-function": "sum",
        "fields.s.aggregate-function": "listagg",
        "fields.d.aggregate-function": "max",
        "fields.d.ignore-retract": "true",
        "fields.s.ignore-retract": "true",
    },
    "aggregation-remove": {
        "merge-engine": "aggregation",
        "aggregation.remove-record-on-delete": "true",
        "fields.a.aggregate-function": "sum",
        "fields.d.aggregate-function": "last_value",
    },
}

row_strategy = st.fixed_dictionaries(
    {
        "id": st.integers(0, 5),
        "a": st.none() | st.integers(-50, 50),
        "s": st.none() | st.sampled_from(["x", "y", "zz", " "]),
        "d": st.none() | st.sampled_from([0.5, -1.0, 2.25]),
        "op": st.sampled_from(["+I", "+I", "+U", "-U", "-D"]),
    }
)


@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    config=st.sampled_from(sorted(CONFIGS)),
    commits=st.lists(st.lists(row_strategy, min_size=1, max_size=12), min_size=1, max_size=4),
)
def test_merge_engines_read_back_like_model(
    tmp_path_factory: pytest.TempPathFactory, config: str, commits: list[list[dict[str, Any]]]
) -> None:
    catalog = CatalogFactory.create({"warehouse": str(tmp_path_factory.mktemp("wh"))})
    catalog.create_database("db", ignore_if_exists=True)
    options = {"bucket": "2", "rowkind.field": "op", **CONFIGS[config]}
    catalog.create_table(
        "db.t", Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    )
    table = catalog.get_table("db.t")
    ms = MergeSettings.from_table(table.store)

    flushed: list[dict[str, Any]] = []
    seq = 0
    for batch in commits:
        records = []
        for r in batch:
            records.append({**r, SEQ: seq, KIND: KINDS[r["op"]]})
            seq += 1
        if ms.ignore_delete:  # Java's write drops retractions (RowKindFilter)
            records = [r for r in records if r[KIND] in (0, 2)]
        try:
            flushed += model_merge(records, ["id"], ms, drop_delete=False)
        except MergeError:
            with pytest.raises(MergeError):
                write_commit(table, pa.Table.from_pylist(batch, schema=SCHEMA))
            return
        write_commit(table, pa.Table.from_pylist(batch, schema=SCHEMA))
    try:
        expected = model_merge(flushed, ["id"], ms, drop_delete=True)
    except MergeError:
        with pytest.raises(MergeError):
            read_all(table)
        return
    got = sorted(read_all(table).to_pylist(), key=lambda r: r["id"])
    want = [{k: v for k, v in r.items() if k not in (SEQ, KIND)} for r in expected]
    assert got == want
