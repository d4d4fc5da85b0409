"""``one_array``: a column as one Array, without copying a column that is one chunk already."""

from __future__ import annotations

import pyarrow as pa

from paimon_pyspark.types.arrow import one_array


def test_one_chunk_is_handed_on_as_it_is() -> None:
    chunk = pa.array(["a", "b", None, "d"])
    out = one_array(pa.chunked_array([chunk]))
    assert out.equals(chunk)
    assert [b.address for b in out.buffers() if b] == [b.address for b in chunk.buffers() if b]


def test_many_chunks_are_joined_and_an_array_passes_through() -> None:
    column = pa.chunked_array([[1, 2], [], [3]], pa.int64())
    assert one_array(column).equals(pa.array([1, 2, 3], pa.int64()))
    array = pa.array([1.5])
    assert one_array(array) is array
    assert one_array(pa.chunked_array([], pa.int32())).equals(pa.array([], pa.int32()))
