"""What each step of tests/doors_script.py must return, computed here from the rows the script
writes (not from any run of it), in the script's JSON form; ``diff`` names the steps of a run
that differ."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

EVENT_IDS = range(400)  # two commits: 0..299, then 300..399
FIRST_COMMIT_IDS = range(300)


def _sorted(rows: Iterable[list[Any]]) -> list[list[Any]]:
    return sorted(rows, key=json.dumps)


def _events(ids: Iterable[int]) -> list[list[Any]]:
    return _sorted([i, f"n{i}", i / 2, f"d{i % 3}"] for i in ids)


def _upserted(first: range, second: range, tags: str) -> list[list[Any]]:
    """Rows (id, v) after writing ``first`` tagged ``tags[0]``, then ``second`` tagged
    ``tags[1]``: the later write wins on shared keys."""
    latest = {i: f"{tags[0]}{i}" for i in first} | {i: f"{tags[1]}{i}" for i in second}
    return _sorted([i, v] for i, v in latest.items())


def _per_dt(ids: Iterable[int]) -> dict[str, list[int]]:
    groups: dict[str, list[int]] = {}
    for i in ids:
        groups.setdefault(f"d{i % 3}", []).append(i)
    return groups


PK_ROWS = _upserted(range(200), range(100, 300), "ab")
MERGED = [[1, 15, "a"], [3, 30, "untouched"], [4, 40, "new"], [5, 50, "e"]]
"""db.m after the MERGE: 1 updated, 2 deleted, 3 untouched by the source, 4 inserted."""
STREAMED = _sorted([i, f"s{i}"] for i in range(100))

EXPECTED: dict[str, Any] = {
    "write_append": {"snapshots": [[1], [2]], "rows": _events(EVENT_IDS)},
    "write_pk": {"rows": PK_ROWS},
    "format_write_append": {"rows": _events(range(200))},
    "format_write_pk": {"rows": _upserted(range(150), range(100, 200), "xy")},
    "read_where_columns": {
        "columns": ["id", "name"],
        "rows": _sorted([i, f"n{i}"] for i in range(200) if i % 3 == 1),
    },
    "read_snapshot": {"rows": _sorted([i] for i in FIRST_COMMIT_IDS)},
    "format_load": {"rows": _events(EVENT_IDS)},
    "format_where": {
        "rows": _events(i for i in range(300, 400) if i % 3 == 2),
        "later_count": len(EVENT_IDS),  # the same DataFrame, unfiltered, after the filter
    },
    "format_view": {"rows": _sorted([i, f"d{i % 3}"] for i in range(390, 400))},
    "format_option_filter": {
        "columns": ["id"],
        "rows": _sorted([i] for i in EVENT_IDS if i % 3 == 0),
    },
    "sql_select": {
        "rows": _sorted(
            [dt, len(ids), sum(ids)] for dt, ids in _per_dt(i for i in EVENT_IDS if i >= 10).items()
        )
    },
    "sql_snapshots": {"rows": [[1, "APPEND"], [2, "APPEND"]]},
    "sql_files": {
        "rows": _sorted([f"{{{dt}}}", len(ids)] for dt, ids in _per_dt(EVENT_IDS).items())
    },
    "sql_script": {
        "calls": [[[True]], [[True]]],  # create_tag, compact: Java's single ``true`` row
        "rows": MERGED,
        "tag": [row for row in MERGED if row[0] > 3],
        "kinds": ["APPEND", "APPEND", "COMPACT"],  # INSERT, MERGE, compact
    },
    "streaming": {"rows": STREAMED},
    "compact_job": {"snapshot": 3, "kinds": ["APPEND", "APPEND", "COMPACT"], "rows": PK_ROWS},
    "orphan_files_job": {
        "deleted": ["data-orphan-doors-script.parquet"],
        "deleted_file_count": 1,
        "orphan_left": False,
        "rows": len(EVENT_IDS),
    },
}

JAVA_TABLES: dict[str, list[list[Any]]] = {
    "events": _events(EVENT_IDS),
    "pk": PK_ROWS,
    "fmt": _events(range(200)),
    "fmt_pk": _upserted(range(150), range(100, 200), "xy"),
    "m": MERGED,
    "sink": STREAMED,
}
"""The rows of each table the script leaves, as Java Paimon must read them."""


def diff(steps: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """The steps whose result differs from ``expected``: name -> (got, expected), abridged."""
    found = {}
    for name, want in expected.items():
        got = steps.get(name)
        if got != want:
            found[name] = (json.dumps(got)[:1500], json.dumps(want)[:300])
    return found
