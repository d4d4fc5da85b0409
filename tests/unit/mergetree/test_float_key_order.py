"""Float keys in file metadata: ordered as the records are, cut into sections as Java cuts them.

A file whose first key is NaN meets the file before it (Java's comparator finds NaN equal to
any key), so both go into one section and merge as the merge-on-read merges them.
"""

from __future__ import annotations

import math

from paimon_pyspark.mergetree.universal import interval_partition, key_order
from paimon_pyspark.spec.binary_row import serialize_with_arity
from paimon_pyspark.spec.data_file_meta import EMPTY_STATS, DataFileMeta
from paimon_pyspark.types.data_types import DOUBLE, FLOAT, INT, DataType

NAN, INF = math.nan, math.inf
D = DOUBLE().copy(nullable=False)


def meta(name: str, low: list[object], high: list[object], types: list[DataType]) -> DataFileMeta:
    return DataFileMeta(
        file_name=name,
        file_size=100,
        row_count=1,
        min_key=serialize_with_arity(low, types),
        max_key=serialize_with_arity(high, types),
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=0,
        max_sequence_number=0,
        schema_id=0,
        level=0,
    )


def test_key_order_sorts_floats_by_normalized_key() -> None:
    for t in (D, FLOAT().copy(nullable=False)):
        order = key_order([t])
        values = [NAN, 2.0, 0.0, -0.0, -INF, INF, -1.0]
        ranked = sorted(values, key=lambda v, t=t: order(serialize_with_arity([v], [t])))
        assert [("NaN" if math.isnan(v) else v.hex()) for v in ranked] == [
            (-INF).hex(),
            (-1.0).hex(),
            (-0.0).hex(),
            (0.0).hex(),
            (2.0).hex(),
            INF.hex(),
            "NaN",
        ]


def test_key_order_same_is_javas_comparator() -> None:
    order = key_order([INT().copy(nullable=False), D])

    def key(a: int, k: float) -> tuple[tuple[bool, object], ...]:
        return order(serialize_with_arity([a, k], [INT(), D]))

    assert order.same(key(1, -0.0), key(1, 0.0))
    assert order.same(key(1, NAN), key(1, 5.0))
    assert not order.same(key(1, NAN), key(2, NAN))
    assert not order.same(key(1, 1.0), key(1, 2.0))


def test_a_file_starting_at_nan_joins_the_section_before_it() -> None:
    files = [meta("low", [1.0], [5.0], [D]), meta("nan", [NAN], [NAN], [D])]
    (section,) = interval_partition(files, key_order([D]))
    assert sorted(f.file_name for r in section for f in r.files) == ["low", "nan"]
    # under another prefix the NaN file is a section of its own
    types: list[DataType] = [INT(), D]
    files = [meta("a1", [1, 1.0], [1, 5.0], types), meta("a2", [2, NAN], [2, NAN], types)]
    assert len(interval_partition(files, key_order(types))) == 2
