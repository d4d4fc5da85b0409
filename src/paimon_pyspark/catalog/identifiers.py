"""Database and table names, checked once for every catalog call.

A name becomes one path component under the warehouse (``<database>.db/<table>``), so a name
is refused with IdentifierError when Java's catalog refuses it, or when it could name another
place: Java's filesystem catalog (1.4.2) builds ``new Path(warehouse, name + ".db")`` without
looking and lets ``../x``, ``/abs`` or ``.`` escape, which we do not copy.

Java's rules kept here: ``sys`` is the system database (nothing is created or dropped in it;
its global system tables are not provided here), ``$`` in a table name marks a system table
(``t$snapshots``) or a branch (``t$branch_b``), so no table is created with one; the catalog
opens ``t$<system table>`` read-only and ``t$branch_b`` as the table on branch ``b``
(:func:`parse_table_identifier`); an empty
table name is invalid, and a name with ``:`` cannot become a Hadoop path. Names are
case-sensitive, as in Java's filesystem catalog (``case-sensitive`` defaults to true there).

Ours on top: no ``/`` or ``\\``, not ``.`` or ``..``, no control characters, not empty or
blank, encodable as UTF-8, and at most 255 bytes as a path component (``.db`` included).

:func:`check_inside` is the second guard: whatever the names, every path the catalog creates
or deletes must lie strictly under the warehouse.
"""

from __future__ import annotations

import posixpath
import unicodedata

from paimon_pyspark.errors import IdentifierError, InvalidArgumentError
from paimon_pyspark.store.branches import check_branch_path_name

DB_SUFFIX = ".db"
SYSTEM_DATABASE = "sys"
SYSTEM_TABLE_SPLITTER = "$"
MAX_COMPONENT_BYTES = 255
"""NAME_MAX of Linux and macOS filesystems, and what most object stores allow per segment."""


def _problem(name: object, suffix: str) -> str | None:
    """Why ``name`` cannot be one path component (with ``suffix`` appended), or None."""
    if not isinstance(name, str):
        return f"must be a string, not {type(name).__name__}"
    if not name.strip():
        return "is empty"
    if name in (".", ".."):
        return "would name a directory other than its own"
    if "/" in name or "\\" in name:
        return "contains a path separator ('/' or '\\')"
    if any(unicodedata.category(c) == "Cc" for c in name):
        return "contains a control character"
    if ":" in name:
        return "contains ':', which Java's catalog cannot turn into a path"
    try:
        size = len((name + suffix).encode("utf-8"))
    except UnicodeEncodeError:
        return "is not valid Unicode (it cannot be encoded as UTF-8)"
    if size > MAX_COMPONENT_BYTES:
        extra = f" with '{suffix}'" if suffix else ""
        return (
            f"is {size} bytes in UTF-8{extra}; a directory name is at most "
            f"{MAX_COMPONENT_BYTES} bytes"
        )
    return None


def check_database_name(name: object) -> str:
    """``name`` if it may name a database directory, else IdentifierError naming it."""
    problem = _problem(name, DB_SUFFIX)
    if problem:
        raise IdentifierError(f"Database name {name!r} {problem}.")
    assert isinstance(name, str)
    if name == SYSTEM_DATABASE:
        raise IdentifierError(
            f"Database name '{name}' is Java Paimon's system database: nothing can be created "
            "or dropped in it, and paimon_pyspark does not provide its system tables."
        )
    return name


def check_table_name(database: str, name: object) -> str:
    """``name`` if it may name a table directory in ``database``, else IdentifierError."""
    problem = _problem(name, "")
    if problem:
        raise IdentifierError(f"Table name {name!r} in database '{database}' {problem}.")
    assert isinstance(name, str)
    if SYSTEM_TABLE_SPLITTER in name:
        raise IdentifierError(
            f"Table name '{database}.{name}': '$' marks a system table (t$snapshots) or a "
            "branch (t$branch_b) in Java Paimon; paimon_pyspark supports neither, and no table "
            "can be created with '$' in its name."
        )
    return name


def is_valid_database_name(name: str) -> bool:
    return _problem(name, DB_SUFFIX) is None and name != SYSTEM_DATABASE


def is_valid_table_name(name: str) -> bool:
    return _problem(name, "") is None and SYSTEM_TABLE_SPLITTER not in name


def parse_identifier(identifier: object) -> tuple[str, str]:
    """``(database, table)`` of ``'db.table'`` or of a ``(database, table)`` tuple, both names
    checked. A string splits at its first ``.``, as Java's ``Identifier.fromString``: the
    table ``d.e`` of database ``db`` is ``'db.d.e'``."""
    db, name = _split_identifier(identifier)
    db = check_database_name(db)
    return db, check_table_name(db, name)


BRANCH_PREFIX = "branch_"


def parse_system_identifier(identifier: object) -> tuple[str, str, str | None]:
    """``(database, table, system table or None)``: ``'db.t$snapshots'`` names the system
    table ``snapshots`` of ``db.t`` (Java's Identifier: the part after ``$``). The table name
    passes :func:`check_table_name`; a branch (``t$branch_b``, ``t$branch_b$files``) or an
    empty part raises IdentifierError: callers that open branches use
    :func:`parse_table_identifier`."""
    db, name, branch, system = parse_table_identifier(identifier)
    if branch is not None:
        raise IdentifierError(
            f"Table name '{db}.{_display(name, branch, system)}': this call takes a table or "
            "a system table, not a branch."
        )
    return db, name, system


def parse_table_identifier(identifier: object) -> tuple[str, str, str | None, str | None]:
    """``(database, table, branch or None, system table or None)`` as Java's Identifier
    splits ``'db.t$branch_b$files'``: ``t$branch_b`` is branch ``b`` of ``t``, ``t$files`` the
    system table ``files`` of its main branch, ``t$branch_b$files`` that of branch ``b``. The
    table name passes :func:`check_table_name`; a branch name passes
    ``store/branches.check_branch_path_name``; anything else raises IdentifierError."""
    db, name = _split_identifier(identifier)
    db = check_database_name(db)
    if not isinstance(name, str) or SYSTEM_TABLE_SPLITTER not in name:
        return db, check_table_name(db, name), None, None
    parts = name.split(SYSTEM_TABLE_SPLITTER)
    table, rest = parts[0], parts[1:]
    branch: str | None = None
    if rest and rest[0].startswith(BRANCH_PREFIX):
        branch = rest[0][len(BRANCH_PREFIX) :]
        rest = rest[1:]
        try:
            check_branch_path_name(branch, f"{db}.{table}")
        except InvalidArgumentError as e:
            raise IdentifierError(str(e)) from e
    if len(rest) > 1 or (rest and not rest[0]) or (branch is None and not rest):
        raise IdentifierError(
            f"Table name '{db}.{name}' must be '<table>$<system table>', '<table>$branch_<name>' "
            "or '<table>$branch_<name>$<system table>', e.g. 'orders$snapshots'."
        )
    return db, check_table_name(db, table), branch, (rest[0] if rest else None)


def _display(name: str, branch: str | None, system: str | None) -> str:
    text = name
    if branch is not None:
        text += f"{SYSTEM_TABLE_SPLITTER}{BRANCH_PREFIX}{branch}"
    if system is not None:
        text += f"{SYSTEM_TABLE_SPLITTER}{system}"
    return text


def _split_identifier(identifier: object) -> tuple[object, object]:
    if isinstance(identifier, tuple):
        if len(identifier) != 2:
            raise IdentifierError(
                f"Table identifier {identifier!r} must be a (database, table) pair."
            )
        db, name = identifier
    elif isinstance(identifier, str):
        db, sep, name = identifier.partition(".")
        if not sep:
            raise IdentifierError(
                f"Table identifier {identifier!r} must be '<database>.<table>', "
                "e.g. 'default.orders'."
            )
    else:
        raise IdentifierError(
            f"Table identifier {identifier!r} must be a string '<database>.<table>' or a "
            f"(database, table) tuple, not {type(identifier).__name__}."
        )
    return db, name


def check_inside(warehouse: str, path: str, describe: str) -> str:
    """``path`` if it lies strictly under ``warehouse`` once both are normalized, else
    IdentifierError naming ``describe`` (what the path is for).

    Paths are the scheme-less strings of fs/ (``/abs/dir`` locally, ``bucket/key`` on an
    object store), so one lexical, ``/``-separated comparison serves every store.
    """
    root = posixpath.normpath(warehouse)
    target = posixpath.normpath(path)
    prefix = root if root.endswith("/") else root + "/"
    if target == root or not target.startswith(prefix):
        raise IdentifierError(
            f"{describe}: its path '{path}' is not inside the warehouse '{warehouse}'."
        )
    return path
