"""Which type changes ``ALTER COLUMN ... TYPE`` may make: Java's two cast tables.

Mirrors org.apache.paimon.types.DataTypeCasts (implicit and explicit casting rules by type
root) and the rule lookup of org.apache.paimon.casting.CastExecutors (a change is allowed only
when a cast executor exists for the pair, so e.g. DATE to DATE has none and is refused). Both
are keyed by Java's DataTypeRoot names and families, so each table reads like Java's.
"""

from __future__ import annotations

from paimon_pyspark.types.data_types import (
    MAX_LENGTH,
    AtomicType,
    CharType,
    DataType,
)

_INT_ROOTS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
FAMILIES: dict[str, tuple[str, ...]] = {
    "CHAR": ("PREDEFINED", "CHARACTER_STRING"),
    "VARCHAR": ("PREDEFINED", "CHARACTER_STRING"),
    "BOOLEAN": ("PREDEFINED",),
    "BINARY": ("PREDEFINED", "BINARY_STRING"),
    "VARBINARY": ("PREDEFINED", "BINARY_STRING"),
    "DECIMAL": ("PREDEFINED", "NUMERIC", "EXACT_NUMERIC"),
    **{r: ("PREDEFINED", "NUMERIC", "INTEGER_NUMERIC", "EXACT_NUMERIC") for r in _INT_ROOTS},
    "FLOAT": ("PREDEFINED", "NUMERIC", "APPROXIMATE_NUMERIC"),
    "DOUBLE": ("PREDEFINED", "NUMERIC", "APPROXIMATE_NUMERIC"),
    "DATE": ("PREDEFINED", "DATETIME"),
    "TIME_WITHOUT_TIME_ZONE": ("PREDEFINED", "DATETIME", "TIME"),
    "TIMESTAMP_WITHOUT_TIME_ZONE": ("PREDEFINED", "DATETIME", "TIMESTAMP"),
    "TIMESTAMP_WITH_LOCAL_TIME_ZONE": ("PREDEFINED", "DATETIME", "TIMESTAMP", "EXTENSION"),
    "VARIANT": ("PREDEFINED",),
    "BLOB": ("PREDEFINED",),
    "ARRAY": ("CONSTRUCTED", "COLLECTION"),
    "VECTOR": ("CONSTRUCTED", "COLLECTION"),
    "MULTISET": ("CONSTRUCTED", "COLLECTION"),
    "MAP": ("CONSTRUCTED", "EXTENSION"),
    "ROW": ("CONSTRUCTED",),
}

_TS = "TIMESTAMP_WITHOUT_TIME_ZONE"
_LTZ = "TIMESTAMP_WITH_LOCAL_TIME_ZONE"
_TIME = "TIME_WITHOUT_TIME_ZONE"


def java_root(t: DataType) -> str:
    """Java's DataTypeRoot name of ``t`` (INT is INTEGER, TIME and TIMESTAMP are spelled out)."""
    root = t.root
    return {
        "INT": "INTEGER",
        "TIME": _TIME,
        "TIMESTAMP": _TS,
        "TIMESTAMP_WITH_LOCAL_TIME_ZONE": _LTZ,
    }.get(root, root)


def _roots(*names: str) -> frozenset[str]:
    """Roots named directly or through a family."""
    out = set()
    for name in names:
        if name in FAMILIES:
            out.add(name)
        else:
            out.update(r for r, fams in FAMILIES.items() if name in fams)
    return frozenset(out)


_NUM_TS_FROM = ("BOOLEAN", _TS, _LTZ)
_IMPLICIT: dict[str, frozenset[str]] = {
    "CHAR": _roots("CHAR"),
    "VARCHAR": _roots("CHARACTER_STRING"),
    "BOOLEAN": _roots("BOOLEAN"),
    "BINARY": _roots("BINARY"),
    "VARBINARY": _roots("BINARY_STRING"),
    "DECIMAL": _roots("NUMERIC"),
    "TINYINT": _roots("TINYINT"),
    "SMALLINT": _roots("TINYINT", "SMALLINT"),
    "INTEGER": _roots("TINYINT", "SMALLINT", "INTEGER"),
    "BIGINT": _roots(*_INT_ROOTS),
    "FLOAT": _roots(*_INT_ROOTS, "FLOAT", "DECIMAL"),
    "DOUBLE": _roots("NUMERIC"),
    "DATE": _roots("DATE", _TS),
    _TIME: _roots(_TIME, _TS),
    _TS: _roots(_TS, _LTZ),
    _LTZ: _roots(_LTZ, _TS),
}
"""DataTypeCasts' implicit rules: target root -> source roots (identity casts included)."""

_EXPLICIT: dict[str, frozenset[str]] = {
    "CHAR": _roots("PREDEFINED", "CONSTRUCTED"),
    "VARCHAR": _roots("PREDEFINED", "CONSTRUCTED"),
    "BOOLEAN": _roots("CHARACTER_STRING", "INTEGER_NUMERIC"),
    "BINARY": _roots("CHARACTER_STRING", "VARBINARY"),
    "VARBINARY": _roots("CHARACTER_STRING", "BINARY"),
    "DECIMAL": _roots("CHARACTER_STRING", *_NUM_TS_FROM),
    **{r: _roots("NUMERIC", "CHARACTER_STRING", *_NUM_TS_FROM) for r in _INT_ROOTS},
    "FLOAT": _roots("NUMERIC", "CHARACTER_STRING", *_NUM_TS_FROM),
    "DOUBLE": _roots("CHARACTER_STRING", *_NUM_TS_FROM),
    "DATE": _roots("TIMESTAMP", "CHARACTER_STRING"),
    _TIME: _roots("TIME", "TIMESTAMP", "CHARACTER_STRING"),
    _TS: _roots("DATETIME", "CHARACTER_STRING", "NUMERIC"),
    _LTZ: _roots("DATETIME", "CHARACTER_STRING", "NUMERIC"),
}
"""DataTypeCasts' explicit rules: target root -> source roots."""

_STRING_ONLY = "STRING"
"""A CastExecutors rule whose target is exactly the nullable STRING (VarCharType.STRING_TYPE)."""

_EXECUTOR_RULES: tuple[tuple[frozenset[str], frozenset[str] | str], ...] = (
    (_roots("DECIMAL"), _roots("DECIMAL")),
    (_roots("INTEGER_NUMERIC", "APPROXIMATE_NUMERIC"), _roots("DECIMAL")),
    (_roots("DECIMAL"), _roots("INTEGER_NUMERIC", "APPROXIMATE_NUMERIC")),
    (
        _roots("INTEGER_NUMERIC", "APPROXIMATE_NUMERIC"),
        _roots("INTEGER_NUMERIC", "APPROXIMATE_NUMERIC"),
    ),
    (_roots("NUMERIC"), _roots(_TS, _LTZ)),
    (_roots("BOOLEAN"), _roots("NUMERIC")),
    (_roots("INTEGER_NUMERIC"), _roots("BOOLEAN")),
    (_roots("NUMERIC"), _roots("CHARACTER_STRING")),
    (_roots("BOOLEAN"), _roots("CHARACTER_STRING")),
    (_roots("TIMESTAMP"), _STRING_ONLY),
    (_roots(_TIME), _STRING_ONLY),
    (_roots("DATE"), _STRING_ONLY),
    (_roots("CHARACTER_STRING"), _roots("CHARACTER_STRING")),
    (_roots("ARRAY", "MAP", "ROW"), _roots("CHARACTER_STRING")),
    (
        _roots("CHARACTER_STRING"),
        _roots(
            "BOOLEAN",
            "DECIMAL",
            "INTEGER_NUMERIC",
            "APPROXIMATE_NUMERIC",
            "DATE",
            _TIME,
            "TIMESTAMP",
            "BINARY_STRING",
            "ARRAY",
            "MAP",
            "ROW",
        ),
    ),
    (_roots(_TS, _LTZ), _roots(_TS, _LTZ, "DATE", _TIME)),
    (_roots("DATE", _TIME), _roots(_TS, _LTZ)),
    (_roots(_TS, _LTZ), _roots("BIGINT", "INTEGER")),
    (_roots("BINARY_STRING"), _roots("BINARY_STRING", "CHARACTER_STRING")),
)
"""CastExecutors' rules as (source roots, target roots); only whether one exists matters."""


def _same_ignoring_nullability(a: DataType, b: DataType) -> bool:
    return a.copy(nullable=True) == b.copy(nullable=True)


def supports_cast(source: DataType, target: DataType, allow_explicit: bool) -> bool:
    """DataTypeCasts.supportsCast: may a ``source`` column become ``target``?"""
    if source.nullable and not target.nullable and not allow_explicit:
        return False
    if _same_ignoring_nullability(source, target):
        return True
    src, dst = java_root(source), java_root(target)
    if src in _IMPLICIT.get(dst, frozenset()):
        return True
    return allow_explicit and src in _EXPLICIT.get(dst, frozenset())


def has_cast_executor(source: DataType, target: DataType) -> bool:
    """CastExecutors.resolve(source, target) != null: Java can convert the old values."""
    src, dst = java_root(source), java_root(target)
    for sources, targets in _EXECUTOR_RULES:
        if src not in sources:
            continue
        if isinstance(targets, str):
            if target == CharType(MAX_LENGTH, True):
                return True
        elif dst in targets:
            return True
    return False


def is_implicit_widening(source: DataType, target: DataType) -> bool:
    """True when every ``source`` value is the same value of ``target`` in Python (integer
    and float widening, same type): stats of old files then still bound the new column."""
    if _same_ignoring_nullability(source, target):
        return True
    numeric = {"TINYINT": 0, "SMALLINT": 1, "INT": 2, "BIGINT": 3}
    if isinstance(source, AtomicType) and isinstance(target, AtomicType):
        if source.name in numeric and target.name in numeric:
            return numeric[source.name] <= numeric[target.name]
        if source.name in numeric and target.name == "DOUBLE":
            return True
        if source.name in ("TINYINT", "SMALLINT", "INT", "FLOAT") and target.name == "DOUBLE":
            return True
    return False
