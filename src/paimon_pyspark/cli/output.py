"""What a command prints: rich tables for people, or one JSON document with ``--json``.

A command returns a ``Report``: the JSON document, and the views (titled tables, then
``key: value`` lines) a person reads. Values that JSON has no type for (dates, times,
decimals, bytes) are written as text.
"""

from __future__ import annotations

import base64
import datetime
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rich.console import Console
from rich.table import Table


@dataclass(frozen=True)
class View:
    """One table on the screen."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]


@dataclass(frozen=True)
class Report:
    document: dict[str, Any]
    views: Sequence[View] = ()
    lines: Sequence[str] = field(default_factory=tuple)


def plain(value: Any) -> Any:
    """``value`` as JSON takes it."""
    if isinstance(value, datetime.datetime):
        if not value.microsecond:
            return value.isoformat(sep=" ")
        spec = "milliseconds" if value.microsecond % 1000 == 0 else "microseconds"
        return value.isoformat(sep=" ", timespec=spec)
    if isinstance(value, datetime.date | datetime.time):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(plain(document), ensure_ascii=False)


def stdout_console() -> Console:
    """Tables as wide as the terminal; in a pipe, wide enough that file paths stay whole."""
    terminal = sys.stdout.isatty()
    return Console(file=sys.stdout, width=None if terminal else 200, soft_wrap=not terminal)


def stderr_console() -> Console:
    return Console(file=sys.stderr, stderr=True)


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(plain(value))


def render(report: Report, as_json: bool) -> None:
    if as_json:
        print(dumps(report.document), flush=True)
        return
    console = stdout_console()
    for view in report.views:
        table = Table(title=view.title, title_justify="left", show_lines=False)
        for column in view.columns:
            table.add_column(column, overflow="fold")
        for row in view.rows:
            table.add_row(*(_cell(v) for v in row))
        if not view.rows:
            table.caption = "(none)"
        console.print(table)
    for line in report.lines:
        console.print(line, highlight=False, markup=False)
