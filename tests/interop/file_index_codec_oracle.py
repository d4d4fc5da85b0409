"""Java Paimon's file index codecs, one column at a time, through the ``java_oracle`` JVM.

Calls ``tests/interop/java/FileIndexCodecOracle.java``: Java's index bytes for a list of
values, and whether Java's reader keeps a file for a predicate on given bytes.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from java_oracle import JavaOracle

from paimon_pyspark.types.data_types import DataType

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _json_value(v: Any) -> Any:
    """A Python value (as Arrow's to_pylist gives it) as PaimonOracle.decodeValue reads it."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return repr(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, datetime.datetime):
        delta = v - (_EPOCH_UTC if v.tzinfo is not None else _EPOCH)
        return str((delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1_000)
    if isinstance(v, datetime.date):
        return (v - _EPOCH.date()).days
    if isinstance(v, datetime.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    raise TypeError(f"no JSON form for {v!r}")


def java_build(
    oracle: JavaOracle,
    index_type: str,
    data_type: DataType,
    values: Sequence[Any],
    options: Mapping[str, str] | None = None,
) -> bytes | str:
    """Java's bytes, or Java's refusal as ``"ERROR: ..."``."""
    java = oracle._gateway.jvm.paimonoracle.FileIndexCodecOracle
    out: str = java.build(
        index_type,
        json.dumps(data_type.to_json()),
        json.dumps(dict(options or {})),
        json.dumps([_json_value(v) for v in values]),
    )
    return out if out.startswith("ERROR:") else base64.b64decode(out)


def java_remain(
    oracle: JavaOracle,
    index_type: str,
    data_type: DataType,
    data: bytes,
    operation: str,
    literals: Sequence[Any],
    options: Mapping[str, str] | None = None,
) -> bool:
    """Whether Java's reader over ``data`` keeps the file for ``operation`` on ``literals``."""
    java = oracle._gateway.jvm.paimonoracle.FileIndexCodecOracle
    return bool(
        java.remain(
            index_type,
            json.dumps(data_type.to_json()),
            json.dumps(dict(options or {})),
            base64.b64encode(data).decode(),
            operation,
            json.dumps([_json_value(v) for v in literals]),
        )
    )
