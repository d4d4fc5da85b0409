"""Paimon's MurmurHash3 (x86_32 variant over whole 4-byte little-endian words, seed 42).

Mirrors org.apache.paimon.utils.MurmurHashUtils#hashBytesByWords, the hash behind
BinaryRow#hashCode and therefore behind fixed-bucket assignment (spec section 5.2). Rows are
always a multiple of 8 bytes long, so Java never hashes a tail and neither do we.

:func:`hash_bytes` serves single rows (partitions, tests). The vectorized functions keep one
uint32 state per row and advance all rows one word position at a time, so the Python-level
loop runs once per word position, never once per row: :func:`mix_column` feeds one word of
every row, :func:`mix_ragged` feeds runs of different lengths from one flat buffer, and
:func:`finalize` applies the length and avalanche step.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

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
