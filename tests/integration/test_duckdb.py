"""TableRead.to_duckdb: the splits' rows registered in DuckDB as an Arrow stream, queried with
SQL and compared with the same aggregate computed with pyarrow."""

from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from table_helpers import write_commit

from paimon_pyspark import FileStoreTable, FileSystemCatalog, Schema
from paimon_pyspark.errors import InvalidArgumentError

SCHEMA = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("dt", pa.string(), nullable=False),
        ("grp", pa.string()),
        ("amount", pa.int64()),
    ]
)


def make_rows(start: int, n: int) -> pa.Table:
    ids = np.arange(start, start + n)
    return pa.table(
        {
            "id": ids,
            "dt": pc.cast(pa.array(ids % 3), pa.string()),
            "grp": pc.cast(pa.array(ids % 5), pa.string()),
            "amount": ids * 7 % 101,
        },
        schema=SCHEMA,
    )


@pytest.fixture(params=[False, True], ids=["append", "pk"])
def table(request: pytest.FixtureRequest, catalog: FileSystemCatalog) -> FileStoreTable:
    primary_key = request.param
    catalog.create_table(
        "db.t",
        Schema.from_pyarrow_schema(
            SCHEMA,
            partition_keys=["dt"],
            primary_keys=["id", "dt"] if primary_key else [],
            options={"bucket": "2"} if primary_key else {},
        ),
    )
    t = catalog.get_table("db.t")
    write_commit(t, make_rows(0, 6000))
    write_commit(t, make_rows(3000, 6000))  # a PK table upserts ids 3000..5999
    return t


def test_group_by_sum_equals_pyarrow(table: FileStoreTable) -> None:
    rb = table.new_read_builder()
    read = rb.new_read()
    splits = rb.new_scan().plan().splits()
    ours = read.to_arrow(splits)
    expected = {
        r["grp"]: (r["amount_sum"], r["count_all"])
        for r in ours.group_by("grp").aggregate([("amount", "sum"), ([], "count_all")]).to_pylist()
    }

    con = read.to_duckdb(splits, "paimon_t")
    got = con.execute(
        "SELECT grp, SUM(amount), COUNT(*) FROM paimon_t GROUP BY grp ORDER BY grp"
    ).fetchall()

    assert {g: (s, c) for g, s, c in got} == expected
    assert sum(c for _, _, c in got) == (9000 if table.primary_keys else 12000)
    # a second query over the same view reads the splits again, with the same rows
    assert con.execute("SELECT COUNT(*), SUM(id) FROM paimon_t").fetchone() == (
        ours.num_rows,
        pc.sum(ours["id"]).as_py(),
    )


def test_projection_and_filter_reach_duckdb_on_a_given_connection(table: FileStoreTable) -> None:
    rb = table.new_read_builder()
    pb = rb.new_predicate_builder()
    rb = rb.with_filter(pb.equal("dt", "1")).with_projection(["grp", "amount"])
    read = rb.new_read()
    splits = rb.new_scan().plan().splits()
    con = duckdb.connect()

    returned = read.to_duckdb(splits, "filtered", connection=con)

    assert returned is con
    columns = [d[0] for d in con.execute("SELECT * FROM filtered LIMIT 0").description]
    assert columns == ["grp", "amount"]
    ours = read.to_arrow(splits)
    assert 0 < ours.num_rows < 9000
    assert con.execute("SELECT COUNT(*), SUM(amount) FROM filtered").fetchone() == (
        ours.num_rows,
        pc.sum(ours["amount"]).as_py(),
    )


def test_to_duckdb_refuses_a_blank_table_name(table: FileStoreTable) -> None:
    rb = table.new_read_builder()
    with pytest.raises(InvalidArgumentError, match=r"db\.t.*to_duckdb\(table_name\)"):
        rb.new_read().to_duckdb(rb.new_scan().plan().splits(), " ")
