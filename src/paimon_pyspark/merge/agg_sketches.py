"""The sketch and bitmap aggregate functions: hll_sketch, theta_sketch, rbm32 and rbm64.

Mirrors FieldHllSketchAgg (HllSketchUtil.union), FieldThetaSketchAgg (ThetaSketch.union),
FieldRoaringBitmap32Agg (RoaringBitmap32) and FieldRoaringBitmap64Agg (RoaringBitmap64). Each
merge step unions the accumulator with the next value exactly as Java does, so the bytes are
Java's (tests/interop/test_aggregate_functions_java compares them with Java's own unions):

* HLL: Apache DataSketches' Python package is byte-compatible with datasketches-java: a union
  of the second sketch's ``lgK``, updated with the second then the first sketch, its HLL_4
  result in compact form.
* Theta: a union of nominal size 4096 (``lgK`` 12, seed 9001), its ordered compact result. The
  C++ library serializes three fields differently from datasketches-java 4.2.0 (the version
  inside Paimon 1.4.2), which :func:`_java_theta_bytes` sets as Java writes them.
* 32-bit roaring bitmaps (pyroaring): Java's ``RoaringBitmap`` serializes the portable format,
  after ``runOptimize``, as pyroaring does after ``run_optimize``.
* 64-bit roaring bitmaps: Java's ``Roaring64Bitmap`` serializes its own ART layout, which
  pyroaring's ``BitMap64`` does not read or write; ``roaring64`` is that codec and union.

Null inputs are skipped (Java's ``agg(acc, null)`` keeps ``acc``); none of these retract.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import datasketches as ds
from pyroaring import BitMap

from paimon_pyspark.merge import roaring64

HLL_SKETCH = "hll_sketch"
THETA_SKETCH = "theta_sketch"
RBM32 = "rbm32"
RBM64 = "rbm64"
FUNCTIONS = (HLL_SKETCH, THETA_SKETCH, RBM32, RBM64)

_HLL_MODE = 2  # the low bits of an HLL sketch's mode byte: 0 list, 1 set, 2 HLL array
_OUT_OF_ORDER = 0x10  # its flag: the HIP estimator no longer applies
_THETA_LG_K = 12  # SetOperationBuilder's default nominal entries, 4096
_EMPTY = 0x04
_SINGLE_ITEM = 0x20


def check_type(root: str) -> bool:
    """Every one of them takes VARBINARY (BYTES) only, as the factories check."""
    return root == "VARBINARY"


def _skip_nulls(union: Callable[[bytes, bytes], bytes]) -> Callable[[Any, Any], Any]:
    def agg(acc: Any, value: Any) -> Any:
        if acc is None or value is None:
            return value if acc is None else acc
        return union(acc, value)

    return agg


def _hll_union(acc: bytes, value: bytes) -> bytes:
    """HllSketchUtil.union. One difference from the C++ union is corrected: when one sketch is
    still a coupon list or set and the other an out-of-order HLL array (an earlier union's
    result), Java copies the array and keeps counting its HIP accumulator as it adds the
    coupons, where C++ resets the accumulator; so the array is given in order and the result
    marked out of order again."""
    hll = [_is_hll(acc), _is_hll(value)]
    reorder = hll[0] != hll[1] and (acc if hll[0] else value)[5] & _OUT_OF_ORDER
    if reorder and hll[0]:
        acc = _out_of_order(acc, False)
    elif reorder:
        value = _out_of_order(value, False)
    out = _hll_union_bytes(acc, value)
    return _out_of_order(out, True) if reorder else out


def _is_hll(sketch: bytes) -> bool:
    return len(sketch) > 7 and sketch[7] & 3 == _HLL_MODE


def _out_of_order(sketch: bytes, on: bool) -> bytes:
    flags = sketch[5] | _OUT_OF_ORDER if on else sketch[5] & ~_OUT_OF_ORDER
    return sketch[:5] + bytes([flags]) + sketch[6:]


def _hll_union_bytes(acc: bytes, value: bytes) -> bytes:
    first = ds.hll_sketch.deserialize(acc)
    second = ds.hll_sketch.deserialize(value)
    union = ds.hll_union(second.lg_config_k)
    union.update(second)
    union.update(first)
    return bytes(union.get_result(ds.tgt_hll_type.HLL_4).serialize_compact())


def _theta_union(acc: bytes, value: bytes) -> bytes:
    union = ds.theta_union(_THETA_LG_K)
    union.update(ds.compact_theta_sketch.deserialize(acc))
    union.update(ds.compact_theta_sketch.deserialize(value))
    return _java_theta_bytes(bytearray(union.get_result(True).serialize()))


def _java_theta_bytes(out: bytearray) -> bytes:
    """A serialized compact theta sketch (version 3) as datasketches-java 4.2.0 writes it: an
    empty sketch has a zero seed hash, a single-item sketch sets the SINGLE_ITEM flag, and a
    longer preamble holds the sampling probability ``p`` (1.0 for a union's result)."""
    pre_longs = out[0] & 0x3F
    if out[5] & _EMPTY:
        out[6:8] = b"\x00\x00"
    elif pre_longs == 1:
        out[5] |= _SINGLE_ITEM
    if pre_longs >= 2:
        out[12:16] = struct.pack("<f", 1.0)
    return bytes(out)


def _rbm32_union(acc: bytes, value: bytes) -> bytes:
    bitmap = BitMap.deserialize(acc) | BitMap.deserialize(value)
    bitmap.run_optimize()
    return bytes(bitmap.serialize())


def folder(func: str) -> Callable[[Any, Any], Any]:
    """Java's ``agg(accumulator, input)`` of ``func`` on Python bytes."""
    unions = {
        HLL_SKETCH: _hll_union,
        THETA_SKETCH: _theta_union,
        RBM32: _rbm32_union,
        RBM64: roaring64.union,
    }
    return _skip_nulls(unions[func])
