"""The name rules of catalog/identifiers.py and the warehouse guard, without a filesystem."""

from __future__ import annotations

import pytest

from paimon_pyspark.catalog.identifiers import (
    check_database_name,
    check_inside,
    check_table_name,
    is_valid_database_name,
    is_valid_table_name,
    parse_identifier,
)
from paimon_pyspark.errors import CatalogError, IdentifierError

# refused as a database and as a table name, each for a reason the message gives
BAD = {
    "": "is empty",
    "   ": "is empty",
    ".": "other than its own",
    "..": "other than its own",
    "a/b": "separator",
    "/abs/path": "separator",
    "../../outside/x": "separator",
    "a\\b": "separator",
    "..\\x": "separator",
    "a\x00b": "control character",
    "a\nb": "control character",
    "\x1b[31m": "control character",
    "a\x7fb": "control character",
    "a\x85b": "control character",
    "a:b": "':'",
    "c:": "':'",
    "bad\udc80": "UTF-8",
    "x" * 300: "255 bytes",
}

# names Java's filesystem catalog accepts and that stay one directory inside the warehouse
GOOD = [
    "db",
    "Orders",
    "UPPER",
    "my-table",
    "with space",
    " lead",
    "données",
    "表",
    "a.b",
    "branch_x",
    "...",
    ".hidden",
    "a#b",
    "a%b",
    "a?b",
    "a*b",
    "x" * 252,
]


@pytest.mark.parametrize("name", list(BAD), ids=[repr(n)[:20] for n in BAD])
def test_bad_names_are_refused_and_named(name: str) -> None:
    with pytest.raises(IdentifierError, match=BAD[name]) as e:
        check_database_name(name)
    assert repr(name) in str(e.value)
    with pytest.raises(IdentifierError, match=BAD[name]) as e:
        check_table_name("db", name)
    assert repr(name) in str(e.value)
    assert not is_valid_database_name(name)
    assert not is_valid_table_name(name)


@pytest.mark.parametrize("name", GOOD)
def test_good_names_pass_unchanged(name: str) -> None:
    assert check_database_name(name) == name
    assert check_table_name("db", name) == name
    assert is_valid_database_name(name)
    assert is_valid_table_name(name)


def test_length_counts_utf8_bytes_and_the_db_suffix() -> None:
    assert check_table_name("db", "x" * 255) == "x" * 255
    with pytest.raises(IdentifierError, match="256 bytes"):
        check_table_name("db", "x" * 256)
    check_database_name("x" * 252)
    with pytest.raises(IdentifierError, match=r"256 bytes in UTF-8 with '\.db'"):
        check_database_name("x" * 253)
    check_table_name("db", "é" * 127)
    with pytest.raises(IdentifierError, match="256 bytes"):
        check_table_name("db", "é" * 128)
    with pytest.raises(IdentifierError, match="256 bytes"):
        check_table_name("db", "表" * 85 + "x")


def test_java_rules() -> None:
    with pytest.raises(IdentifierError, match="system database"):
        check_database_name("sys")
    assert not is_valid_database_name("sys")
    assert check_database_name("SYS") == "SYS"  # case-sensitive, as Java's equals
    for name in ["t$snapshots", "t$branch_b", "t$branch_b$files", "a$b$c", "$"]:
        with pytest.raises(IdentifierError, match="system table"):
            check_table_name("db", name)
        assert not is_valid_table_name(name)
    assert check_database_name("a$b") == "a$b"  # Java allows '$' in a database name


def test_parse_identifier() -> None:
    assert parse_identifier("db.t") == ("db", "t")
    assert parse_identifier(("db", "t")) == ("db", "t")
    assert parse_identifier("db.a.b") == ("db", "a.b")  # first dot, as Identifier.fromString
    for bad in ["db", "db.", ".t", "", "db./abs/path", "../x.t", "sys.t", "db.t$files"]:
        with pytest.raises(IdentifierError):
            parse_identifier(bad)
    for bad_type in [None, 42, ("db",), ("db", "t", "x"), ("db", 1), ["db", "t"]]:
        with pytest.raises(IdentifierError):
            parse_identifier(bad_type)
    assert issubclass(IdentifierError, CatalogError)


@pytest.mark.parametrize(
    "warehouse",
    ["/tmp/wh", "/tmp/wh/", "bucket/prefix", "bucket", "/"],
)
def test_check_inside_accepts_children(warehouse: str) -> None:
    root = warehouse.rstrip("/") or ""
    for child in [f"{root}/db.db", f"{root}/db.db/t", f"{root}/a/../db.db"]:
        assert check_inside(warehouse, child, "x") == child


@pytest.mark.parametrize(
    ("warehouse", "path"),
    [
        ("/tmp/wh", "/tmp/wh"),
        ("/tmp/wh", "/tmp/wh/"),
        ("/tmp/wh", "/tmp/wh/."),
        ("/tmp/wh", "/tmp/wh/db.db/../.."),
        ("/tmp/wh", "/tmp/wh/../outside/x.db"),
        ("/tmp/wh", "/tmp/wh-other/db.db"),
        ("/tmp/wh", "/tmp/whx"),
        ("/tmp/wh", "/abs/path"),
        ("/tmp/wh", "tmp/wh/db.db"),
        ("bucket/prefix", "bucket/prefix-other/db.db"),
        ("bucket/prefix", "bucket/other/db.db"),
        ("bucket/prefix", "bucket/prefix/../other"),
        ("bucket/prefix", "other-bucket/prefix/db.db"),
        ("bucket", "bucket2/db.db"),
        ("bucket", "bucket/.."),
    ],
)
def test_check_inside_refuses_everything_else(warehouse: str, path: str) -> None:
    with pytest.raises(IdentifierError, match="not inside the warehouse") as e:
        check_inside(warehouse, path, "Database 'x'")
    assert "Database 'x'" in str(e.value)
    assert path in str(e.value)
