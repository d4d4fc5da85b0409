"""JSON text laid out as Jackson's default pretty printer lays it out.

Java Paimon writes schema and snapshot files with Jackson's DefaultPrettyPrinter; writing the same
shape keeps our files diff-able against Java's. Readers do not depend on the layout.
"""

from __future__ import annotations

import json
from typing import Any


def dumps(value: Any) -> str:
    return _dump(value, 0)


def _dump(value: Any, indent: int) -> str:
    pad = "  " * (indent + 1)
    if isinstance(value, dict):
        if not value:
            return "{ }"
        items = [f"{pad}{json.dumps(k)} : {_dump(v, indent + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(_dump(v, indent) for v in value) + " ]"
    return json.dumps(value, ensure_ascii=False)
