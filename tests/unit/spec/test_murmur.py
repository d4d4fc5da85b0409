"""Paimon's word-wise MurmurHash3: Java's vectors, public MurmurHash3 vectors, vector == scalar."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_pyspark.errors import PaimonError
from paimon_pyspark.spec.binary_row import EMPTY_ROW, serialize_row
from paimon_pyspark.spec.murmur import hash_bytes, hash_words
from paimon_pyspark.types.data_types import INT, STRING


def test_java_bucket_key_vector() -> None:
    assert hash_bytes(bytes.fromhex("00000000000000000500000000000000")) == 260196596


def test_spec_row_hashes() -> None:
    assert hash_bytes(serialize_row([1], [INT()])) == 1465514398
    assert hash_bytes(serialize_row([1, "abc"], [INT(), STRING()])) == 261371745
    assert hash_bytes(EMPTY_ROW[4:]) == -1670924195


@pytest.mark.parametrize(
    ("data", "seed", "expected"),
    [
        (b"", 0, 0),
        (b"", 1, 0x514E28B7),
        (b"", 0xFFFFFFFF, 0x81F16F39),
        (b"\0\0\0\0", 0, 0x2362F9DE),
        (b"aaaa", 0x9747B28C, 0x5A97808A),
        (b"abcd", 0x9747B28C, 0xF0478627),
        (b"test", 0, 0xBA6BD213),
    ],
)
def test_matches_published_murmur3_x86_32_vectors(data: bytes, seed: int, expected: int) -> None:
    assert hash_bytes(data, seed) & 0xFFFFFFFF == expected


def test_rejects_partial_words() -> None:
    with pytest.raises(PaimonError):
        hash_bytes(b"abc")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40).map(lambda b: b[: len(b) // 4 * 4]), max_size=30))
def test_hash_words_equals_scalar_for_ragged_rows(rows: list[bytes]) -> None:
    width = max((len(r) // 4 for r in rows), default=0)
    words = np.zeros((len(rows), width), np.uint32)
    for i, r in enumerate(rows):
        words[i, : len(r) // 4] = np.frombuffer(r, "<u4")
    counts = np.array([len(r) // 4 for r in rows], np.int64)
    assert hash_words(words, counts).tolist() == [hash_bytes(r) for r in rows]


def test_hash_words_with_one_long_tail_row() -> None:
    rng = np.random.default_rng(7)
    words = rng.integers(0, 2**32, (50, 300), dtype=np.uint32)
    counts = np.full(50, 4)
    counts[3] = 300
    counts[9] = 299
    expected = [hash_bytes(words[i, : counts[i]].tobytes()) for i in range(50)]
    assert hash_words(words, counts).tolist() == expected
    assert hash_words(words[:, :4], 4).tolist() == [
        hash_bytes(words[i, :4].tobytes()) for i in range(50)
    ]
