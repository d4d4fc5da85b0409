"""Java Paimon's sketch and bitmap helpers (HllSketchUtil, ThetaSketch, RoaringBitmap32/64),
through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/AggOracle.java`` (built with the other oracle classes by ``make``):
Java builds the sketches and bitmaps a test writes, and unions them as its aggregate functions
do, so their bytes can be compared with ours.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable

from java_oracle import JavaOracle


def _csv(values: Iterable[int]) -> str:
    return ",".join(str(v) for v in values)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class JavaSketches:
    """Java's bytes for sketches and bitmaps of given ints, and of their unions."""

    def __init__(self, oracle: JavaOracle) -> None:
        self._java = oracle._gateway.jvm.paimonoracle.AggOracle

    def of(self, kind: str, values: Iterable[int]) -> bytes:
        """``kind`` in hll, theta, rbm32, rbm64: Java's serialized sketch / bitmap of values."""
        make = {
            "hll": self._java.hllOf,
            "theta": self._java.thetaOf,
            "rbm32": self._java.rbm32Of,
            "rbm64": self._java.rbm64Of,
        }[kind]
        return base64.b64decode(make(_csv(values)))

    def union(self, kind: str, acc: bytes, value: bytes) -> bytes:
        """Java's aggregate function ``agg(acc, value)`` for ``kind``."""
        union = {
            "hll": self._java.hllUnion,
            "theta": self._java.thetaUnion,
            "rbm32": self._java.rbm32Union,
            "rbm64": self._java.rbm64Union,
        }[kind]
        return base64.b64decode(union(_b64(acc), _b64(value)))
