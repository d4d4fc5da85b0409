"""Value statistics taken from a Parquet file's footer equal the ones computed from its rows, for
every type and stats mode, across row groups, nulls, and values too long for the footer."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_pyspark.format.stats import FOOTER_MAX_BOUND_BYTES, StatsCollector, collect_stats
from paimon_pyspark.format.writers import FormatWriter
from paimon_pyspark.fs.local import LocalFileIO
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import SimpleStats
from paimon_pyspark.types.arrow import from_arrow_type
from paimon_pyspark.types.data_types import DataField

LONG = "z" * (FOOTER_MAX_BOUND_BYTES + 10)


def _pieces() -> list[pa.Table]:
    rng = np.random.default_rng(3)

    def piece(n: int, offset: int, long_value: bool = False) -> pa.Table:
        ids = np.arange(offset, offset + n, dtype=np.int64)
        words = [f"w{int(x):05d}" for x in rng.integers(0, 90_000, n)]
        if long_value:
            words[n // 2] = LONG
        return pa.table(
            {
                "i8": pa.array(ids % 100 - 50, pa.int8()),
                "i16": pa.array(ids % 1000 - 500, pa.int16()),
                "i32": pa.array(-ids, pa.int32()),
                "i64": pa.array(ids * 3, pa.int64()),
                "b": pa.array(ids % 3 == 0),
                "s": pa.array(words, pa.string()),
                "bin": pa.array([w.encode() for w in words], pa.binary()),
                "f": pa.array(rng.random(n)),
                "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in ids]),
                "dec": pa.array([decimal.Decimal(int(x)) / 100 for x in ids], pa.decimal128(10, 2)),
                "n": pa.nulls(n, pa.string()),
                "some": pa.array([None if x % 4 else f"v{x}" for x in ids], pa.string()),
            }
        )

    return [piece(700, 0), piece(500, 700, long_value=True), piece(900, 1200)]


def _fields(schema: pa.Schema) -> list[DataField]:
    return [DataField(i, f.name, from_arrow_type(f.type)) for i, f in enumerate(schema)]


@pytest.mark.parametrize("mode", ["truncate(16)", "full", "counts", "none", "truncate(3)"])
@pytest.mark.parametrize("with_long", [True, False])
def test_footer_statistics_equal_the_ones_computed_from_the_rows(
    tmp_path: Path, mode: str, with_long: bool
) -> None:
    pieces = _pieces() if with_long else [p for i, p in enumerate(_pieces()) if i != 1]
    fields = _fields(pieces[0].schema)
    writer = FormatWriter(
        LocalFileIO(), str(tmp_path / "f.parquet"), pieces[0].schema, "parquet", "zstd", 1, fields
    )
    collector = StatsCollector(fields, mode, parquet_footer=True)
    for piece in pieces:  # one row group each
        writer.write(piece)
        collector.update(piece)
    writer.close()
    assert writer.footer is not None and writer.footer.num_row_groups == len(pieces)
    collector.add_footer(writer.footer)
    expected = collect_stats(pa.concat_tables(pieces), fields, mode)
    assert collector.result() == expected
    if mode == "full":
        assert any(collector.footer) and collector.computed[5] == with_long


def test_a_footer_without_bounds_states_none(tmp_path: Path) -> None:
    """A piece the collector was told needs no pass, whose footer has no bounds (a writer that
    keeps no statistics), leaves the column unbounded instead of bounded by the other pieces."""
    table = pa.table({"s": ["b", "a", "c"]})
    fields = _fields(table.schema)
    path = tmp_path / "f.parquet"
    pq.write_table(table, path, write_statistics=False)
    collector = StatsCollector(fields, "full", parquet_footer=True)
    collector.update(table)
    collector.add_footer(pq.ParquetFile(path).metadata)
    none = serialize_with_arity([None], [fields[0].type])
    assert collector.result() == SimpleStats(none, none, (0,))


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ([[1.0, None, 3.0], [None], [-2.5]], (-2.5, 3.0)),
        ([[1.0, None, 3.0], [float("nan")]], (None, None)),
        ([[float("nan"), 1.0], [2.0]], (None, None)),
        ([[None, None], [float("-inf"), float("inf")]], (float("-inf"), float("inf"))),
        ([[5.0]], (5.0, 5.0)),
    ],
)
@pytest.mark.parametrize("arrow_type", [pa.float64(), pa.float32()])
def test_float_bounds_skip_nulls_and_a_nan_voids_them(
    chunks: list[list[float | None]],
    expected: tuple[float | None, float | None],
    arrow_type: pa.DataType,
) -> None:
    column = pa.chunked_array([pa.array(c, arrow_type) for c in chunks])
    fields = [DataField(0, "x", from_arrow_type(arrow_type))]
    collector = StatsCollector(fields, "full")
    collector.update(pa.table({"x": column}))
    assert (collector.mins[0], collector.maxs[0]) == expected
    assert collector.unknown[0] == (expected[0] is None)
