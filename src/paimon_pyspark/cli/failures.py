"""Any failure of a command as one line: the table it was about, and the cause.

The cause is the typed error (errors.py) that started it. An error raised on the driver is
itself, or in its ``__cause__``/``__context__`` chain; one raised in a Python worker or a data
source reaches the driver only as text inside Spark's wrappers (``PythonException``,
``AnalysisException``, py4j's ``Py4JJavaError``), as the last ``paimon_pyspark.errors.X: ...``
line of the worker's traceback, which is taken from there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from paimon_pyspark import errors

_TYPED = re.compile(r"^\s*(?:[\w.]+\.)?(paimon_pyspark\.errors\.(\w+)): (.+)$", re.MULTILINE)
_STACK = re.compile(r"^\s+at |^JVM stacktrace|^\tat |^org\.apache\.|^py4j")
_ANY = re.compile(r"^\s*(?:[\w.]+\.)?(\w+(?:Error|Exception)): (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    """What the command line prints: ``error: <table>: <message>`` and, with --json,
    ``{"error": {"type", "message", "table"}}``."""

    type: str
    message: str
    table: str | None

    def line(self) -> str:
        if self.table and self.table not in self.message:
            return f"error: {self.table}: {self.message}"
        return f"error: {self.message}"

    def to_json(self) -> dict[str, object]:
        return {"error": {"type": self.type, "message": self.message, "table": self.table}}


def _chain(error: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    at: BaseException | None = error
    while at is not None and at not in seen:
        seen.append(at)
        at = at.__cause__ or at.__context__
    return seen


def _one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.strip().splitlines() if part.strip())


def _typed_in_text(text: str) -> tuple[str, str] | None:
    """The last typed error a (worker's) traceback in ``text`` ends with, its message with
    the lines that continue it (up to a blank line or the JVM's stack)."""
    found = None
    for m in _TYPED.finditer(text):
        if isinstance(getattr(errors, m.group(2), None), type):
            found = m
    if found is None:
        return None
    message = [found.group(3)]
    for line in text[found.end() :].splitlines()[1:]:
        if not line.strip() or _STACK.match(line):
            break
        message.append(line)
    return found.group(2), "\n".join(message)


def _spark_text(error: BaseException) -> str | None:
    """The text of Spark's and py4j's wrappers (their ``str`` carries the JVM's message)."""
    module = type(error).__module__
    if module.startswith(("pyspark", "py4j")):
        return str(error)
    return None


def failure(error: BaseException, table: str | None) -> Failure:
    """``error`` unwrapped to its typed cause, as one line about ``table``."""
    chain = _chain(error)
    for e in chain:
        if isinstance(e, errors.PaimonError):
            return Failure(type(e).__name__, _one_line(str(e)) or type(e).__name__, table)
    for e in chain:
        text = _spark_text(e)
        if text is None:
            continue
        typed = _typed_in_text(text)
        if typed is not None:
            return Failure(typed[0], _one_line(typed[1]), table)
    for e in chain:
        text = _spark_text(e)
        if text is not None:
            first = _ANY.search(text)
            message = first.group(2) if first else (text.strip().splitlines() or [""])[0]
            name = first.group(1) if first else type(e).__name__
            return Failure(name, _one_line(_strip_spark_tail(message)) or name, table)
    message = _one_line(str(error))
    return Failure(type(error).__name__, message or type(error).__name__, table)


def _strip_spark_tail(message: str) -> str:
    """Spark's error class prefix ``[TABLE_OR_VIEW_NOT_FOUND] `` and SQLSTATE suffix stay;
    the query context after them (``;\\n'Project ...``) goes."""
    return message.split(" SQLSTATE:")[0] if " SQLSTATE:" in message else message
