"""Paimon's MurmurHash3 (x86_32 variant, seed 42), and the reference MurmurHash3 x86_32.

Mirrors org.apache.paimon.utils.MurmurHashUtils: ``hashBytesByWords`` (:func:`hash_bytes`,
:func:`hash_words`), the hash behind BinaryRow#hashCode and therefore behind fixed-bucket
assignment (spec section 5.2; rows are a multiple of 8 bytes long, so no tail), and
``hashBytes`` (:func:`hash_unaligned`, :func:`hash_binary_column`), BinaryString#hashCode,
which mixes each trailing byte, sign-extended, as a word of its own. :func:`murmur3_32` is
the reference algorithm (Guava's ``Hashing.murmur3_32()``, for entropy-injected file paths).

:func:`hash_bytes` serves single rows (partitions, tests). The vectorized functions keep one
uint32 state per row and advance all rows one word position at a time, so the Python-level
loop runs once per word position, never once per row: :func:`mix_column` feeds one word of
every row, :func:`mix_ragged` feeds runs of different lengths from one flat buffer, and
:func:`finalize` applies the length and avalanche step.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from paimon_pyspark.errors import PaimonError

SEED = 42
_C1 = np.uint32(0xCC9E2D51)
_C2 = np.uint32(0x1B873593)
_M = np.uint32(0xE6546B64)
_F1 = np.uint32(0x85EBCA6B)
_F2 = np.uint32(0xC2B2AE35)
_MASK = 0xFFFFFFFF
_U5 = np.uint32(5)
_S13, _S15, _S16, _S17, _S19 = (np.uint32(s) for s in (13, 15, 16, 17, 19))

# Once this few rows are still hashing, plain Python ints beat a dozen numpy calls per word.
_SCALAR_TAIL = 4

U32 = npt.NDArray[np.uint32]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]


def _mix_word(h: int, k: int) -> int:
    k = (k * 0xCC9E2D51) & _MASK
    k = ((k << 15) | (k >> 17)) & _MASK
    k = (k * 0x1B873593) & _MASK
    h ^= k
    h = ((h << 13) | (h >> 19)) & _MASK
    return (h * 5 + 0xE6546B64) & _MASK


def _fmix(h: int, length: int) -> int:
    h ^= length
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def hash_bytes(data: bytes | bytearray | memoryview, seed: int = SEED) -> int:
    """Java's ``MurmurHashUtils.hashBytesByWords(data, seed)`` as a signed int32.

    ``seed`` is only for checking against published MurmurHash3 vectors; Paimon uses 42.
    """
    n = len(data)
    if n % 4:
        raise PaimonError(f"Paimon hashes whole 4-byte words; got {n} bytes")
    h = seed & _MASK
    for k in np.frombuffer(bytes(data), dtype="<u4").tolist():
        h = _mix_word(h, k)
    return _fmix(h, n)


def hash_unaligned(data: bytes | bytearray | memoryview) -> int:
    """Java's ``MurmurHashUtils.hashBytes(data)`` (seed 42) as a signed int32: whole words,
    then each trailing byte, sign-extended, mixed as a word of its own."""
    n = len(data)
    aligned = n - n % 4
    h = SEED
    for k in np.frombuffer(bytes(data[:aligned]), dtype="<u4").tolist():
        h = _mix_word(h, k)
    for b in bytes(data[aligned:]):
        h = _mix_word(h, (b - 256 if b > 127 else b) & _MASK)
    return _fmix(h, n)


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """Reference MurmurHash3 x86_32 (Guava's ``Hashing.murmur3_32()``) as an unsigned int: the
    trailing bytes form one little-endian word, mixed into the state without a round."""
    n = len(data)
    aligned = n - n % 4
    h = seed & _MASK
    for k in np.frombuffer(bytes(data[:aligned]), dtype="<u4").tolist():
        h = _mix_word(h, k)
    if n > aligned:
        k = int.from_bytes(data[aligned:], "little")
        k = (k * 0xCC9E2D51) & _MASK
        k = ((k << 15) | (k >> 17)) & _MASK
        h ^= (k * 0x1B873593) & _MASK
    return _fmix(h, n) & _MASK


def hash_binary_column(binary: pa.Array) -> I32:
    """:func:`hash_unaligned` of every value of an Arrow ``large_binary`` array (nulls hash as
    empty), vectorized: whole words gathered into one flat buffer for :func:`mix_ragged`, then
    the up to three trailing bytes as one column round each."""
    n = len(binary)
    offsets = np.frombuffer(binary.buffers()[1], dtype=np.int64)[
        binary.offset : binary.offset + n + 1
    ]
    data_buf = binary.buffers()[2]
    data = (
        np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    )
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    n_words = lengths // 4
    word_starts = np.zeros(n, dtype=np.int64)
    np.cumsum(n_words[:-1], out=word_starts[1:])
    total_words = int(n_words.sum())
    if total_words:
        row_of_word = np.repeat(np.arange(n), n_words)
        index_in_row = np.arange(total_words) - word_starts[row_of_word]
        first_byte = starts[row_of_word] + 4 * index_in_row
        gathered = data[first_byte[:, None] + np.arange(4)]
        flat = gathered.reshape(-1).view("<u4").astype(np.uint32)
    else:
        flat = np.zeros(0, dtype=np.uint32)
    h = init_state(n)
    mix_ragged(h, flat, word_starts, n_words)
    for j in range(3):
        rows = np.nonzero(lengths % 4 > j)[0]
        if len(rows) == 0:
            break
        tail = data[starts[rows] + 4 * n_words[rows] + j].view(np.int8).astype(np.int32)
        sub = h[rows]
        mix_column(sub, tail.view(np.uint32))
        h[rows] = sub
    return finalize(h, lengths).copy()


def init_state(rows: int) -> U32:
    """Fresh hash states (the seed) for ``rows`` rows."""
    return np.full(rows, SEED, dtype=np.uint32)


def mix_column(h: U32, k: npt.NDArray[np.uint32] | None) -> None:
    """Feed one word per row into ``h`` in place; ``None`` stands for a word of zeros.

    ``k`` may be a strided view; it is not modified.
    """
    if k is not None:
        w = np.multiply(k, _C1, dtype=np.uint32)
        np.bitwise_or(np.left_shift(w, _S15), np.right_shift(w, _S17), out=w)
        np.multiply(w, _C2, out=w)
        np.bitwise_xor(h, w, out=h)
    np.bitwise_or(np.left_shift(h, _S13), np.right_shift(h, _S19), out=h)
    np.multiply(h, _U5, out=h)
    np.add(h, _M, out=h)


def finalize(h: U32, n_bytes: npt.NDArray[np.integer] | int) -> I32:
    """Length mix and avalanche (Java ``fmix``); returns the signed hashes, reusing ``h``."""
    np.bitwise_xor(h, np.asarray(n_bytes).astype(np.uint32), out=h)
    np.bitwise_xor(h, np.right_shift(h, _S16), out=h)
    np.multiply(h, _F1, out=h)
    np.bitwise_xor(h, np.right_shift(h, _S13), out=h)
    np.multiply(h, _F2, out=h)
    np.bitwise_xor(h, np.right_shift(h, _S16), out=h)
    return h.view(np.int32)


def mix_ragged(h: U32, flat: U32, starts: I64, n_words: npt.NDArray[np.integer]) -> None:
    """Feed row i the words ``flat[starts[i] : starts[i] + n_words[i]]``, in place on ``h``.

    Rows are visited longest first, so at word position ``j`` the rows still hashing are a
    prefix of that order and each step is one gather plus one vectorized round.
    """
    counts = np.asarray(n_words, dtype=np.int64)
    rows = counts.shape[0]
    if rows == 0:
        return
    lo, hi = int(counts.min()), int(counts.max())
    if lo == hi:
        if rows == 1 or bool(np.all(np.diff(starts) == lo)):
            base = int(starts[0])
            matrix = flat[base : base + rows * lo].reshape(rows, lo)
            for j in range(lo):
                mix_column(h, matrix[:, j])
        else:
            for j in range(lo):
                mix_column(h, flat[starts + j])
        return
    order = np.argsort(-counts, kind="stable")
    sorted_counts = counts[order]
    sorted_starts = starts[order]
    hs = h[order]
    active = rows - np.searchsorted(sorted_counts[::-1], np.arange(hi), side="right")
    for j in range(hi):
        m = int(active[j])
        if m <= _SCALAR_TAIL:
            _mix_tail(hs, flat, sorted_starts[:m], sorted_counts[:m], j)
            break
        head = hs[:m]
        mix_column(head, flat[sorted_starts[:m] + j])
    h[order] = hs


def _mix_tail(h: U32, flat: U32, starts: I64, counts: I64, first: int) -> None:
    """Finish the few longest rows word by word in Python ints."""
    for i in range(starts.shape[0]):
        s = int(starts[i])
        acc = int(h[i])
        for k in flat[s + first : s + int(counts[i])].tolist():
            acc = _mix_word(acc, k)
        h[i] = acc


def hash_words(words: npt.NDArray[np.uint32], n_words: npt.NDArray[np.integer] | int) -> I32:
    """Hash each row of a 2-D ``(rows, max_words)`` uint32 array over its first ``n_words``.

    ``n_words`` is one count for every row, or one per row; words past a row's count are
    ignored, so rows of different lengths can share one padded matrix.
    """
    w = np.ascontiguousarray(words, dtype=np.uint32)
    if w.ndim != 2:
        raise PaimonError(f"hash_words expects a 2-D word matrix, got {w.ndim} dimensions")
    rows, width = w.shape
    counts = np.broadcast_to(np.asarray(n_words, dtype=np.int64), (rows,))
    if rows and (int(counts.max()) > width or int(counts.min()) < 0):
        raise PaimonError(f"word counts must lie in [0, {width}]")
    h = init_state(rows)
    mix_ragged(h, w.reshape(-1), np.arange(rows, dtype=np.int64) * width, counts)
    return finalize(h, counts * 4)
