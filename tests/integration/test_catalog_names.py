"""Database and table names never reach outside the warehouse (issue 14).

Each test puts a directory with a sentinel file beside the warehouse, tries a name that would
point there, and checks that the catalog refused it with IdentifierError before creating or
deleting anything: the sentinel survives and nothing new appears outside.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema
from paimon_pyspark.errors import (
    IdentifierError,
    PaimonError,
    TableNotExistError,
)

DATA = pa.table({"k": pa.array([1, 2], pa.int64()), "v": ["a", "b"]})
SCHEMA = Schema.from_pyarrow_schema(DATA.schema)


def tree(root: Path) -> set[str]:
    """Every path under ``root``, relative to it."""
    return {str(p.relative_to(root)) for p in root.rglob("*")}


class Outside:
    """A directory beside the warehouse holding an unrelated file and an unrelated table's
    ``schema/schema-0`` (what drop_table looks for before deleting)."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "outside"
        (self.root / "victim.db").mkdir(parents=True)
        (self.root / "victim.db" / "unrelated.txt").write_text("not paimon")
        (self.root / "other" / "schema").mkdir(parents=True)
        (self.root / "other" / "schema" / "schema-0").write_text("{}")
        (self.root / "sentinel.txt").write_text("keep me")
        self.before = tree(tmp_path)
        self.tmp_path = tmp_path

    def assert_untouched(self) -> None:
        assert (self.root / "sentinel.txt").read_text() == "keep me"
        assert (self.root / "victim.db" / "unrelated.txt").read_text() == "not paimon"
        assert (self.root / "other" / "schema" / "schema-0").exists()
        new = {p for p in tree(self.tmp_path) - self.before if not p.startswith("warehouse")}
        assert new == set()


@pytest.fixture
def outside(tmp_path: Path, catalog: FileSystemCatalog) -> Iterator[Outside]:
    out = Outside(tmp_path)
    yield out
    out.assert_untouched()


def test_create_database_refuses_relative_escape(catalog: FileSystemCatalog, outside: Outside):
    for name in ["../outside/x", "../../outside/x", "..", "."]:
        with pytest.raises(IdentifierError, match="Database name") as e:
            catalog.create_database(name)
        assert repr(name) in str(e.value)
    assert not (outside.tmp_path / "outside" / "x.db").exists()
    assert catalog.list_databases() == ["db"]


def test_create_database_refuses_absolute_path(catalog: FileSystemCatalog, outside: Outside):
    name = str(outside.root / "x")
    with pytest.raises(IdentifierError, match="separator"):
        catalog.create_database(name)
    assert not (outside.root / "x.db").exists()


def test_create_table_refuses_absolute_path(catalog: FileSystemCatalog, outside: Outside):
    target = outside.root / "t"
    with pytest.raises(IdentifierError, match="separator"):
        catalog.create_table(f"db.{target}", SCHEMA)
    with pytest.raises(IdentifierError):
        catalog.create_table(("db", str(target)), SCHEMA)
    with pytest.raises(IdentifierError):
        catalog.create_table(("db", "../../outside/t"), SCHEMA)
    assert not target.exists()
    assert catalog.list_tables("db") == []


def test_drop_database_cascade_deletes_nothing_outside(
    catalog: FileSystemCatalog, outside: Outside
):
    for name in ["../outside/victim", str(outside.root / "victim")]:
        with pytest.raises(IdentifierError):
            catalog.drop_database(name, cascade=True)
        with pytest.raises(IdentifierError):
            catalog.drop_database(name, ignore_if_not_exists=True, cascade=True)


def test_drop_table_deletes_nothing_outside(catalog: FileSystemCatalog, outside: Outside):
    for identifier in [f"db.{outside.root / 'other'}", ("db", "../../outside/other")]:
        with pytest.raises(IdentifierError):
            catalog.drop_table(identifier)
        with pytest.raises(IdentifierError):
            catalog.drop_table(identifier, ignore_if_not_exists=True)
    # the database ".." of a table would be the warehouse's parent
    with pytest.raises(IdentifierError):
        catalog.drop_table(("..", "outside"), ignore_if_not_exists=True)


def test_get_and_list_refuse_escaping_names(catalog: FileSystemCatalog, outside: Outside):
    with pytest.raises(IdentifierError):
        catalog.get_table(f"db.{outside.root / 'other'}")
    with pytest.raises(IdentifierError):
        catalog.get_database("../outside/victim")
    with pytest.raises(IdentifierError):
        catalog.list_tables("../outside/victim")


def test_too_long_names_are_typed_errors(catalog: FileSystemCatalog, outside: Outside):
    long_table = "t" * 300
    with pytest.raises(IdentifierError, match="255 bytes") as e:
        catalog.create_table(("db", long_table), SCHEMA)
    assert long_table in str(e.value)
    with pytest.raises(IdentifierError, match="255 bytes"):
        catalog.get_table(f"db.{long_table}")
    # a database name's directory carries '.db': 252 bytes fit, 253 do not
    catalog.create_database("d" * 252)
    with pytest.raises(IdentifierError, match="255 bytes"):
        catalog.create_database("d" * 253)
    # bytes in UTF-8, not characters: 127 'é' are 254 bytes, 128 are 256
    catalog.create_table(("db", "é" * 127), SCHEMA)
    with pytest.raises(IdentifierError, match="255 bytes"):
        catalog.create_table(("db", "é" * 128), SCHEMA)
    assert catalog.list_tables("db") == ["é" * 127]


def test_java_rules_system_database_and_dollar(catalog: FileSystemCatalog, outside: Outside):
    for call in [
        lambda: catalog.create_database("sys"),
        lambda: catalog.drop_database("sys", ignore_if_not_exists=True),
        lambda: catalog.create_table("sys.t", SCHEMA),
        lambda: catalog.get_table("sys.all_table_options"),
        lambda: catalog.create_table("db.t$snapshots", SCHEMA),
        lambda: catalog.create_table("db.t$branch_b", SCHEMA),
        lambda: catalog.drop_table("db.t$branch_b", ignore_if_not_exists=True),
        lambda: catalog.create_table("db.", SCHEMA),
        lambda: catalog.create_table(("db", ""), SCHEMA),
        lambda: catalog.create_database(""),
        lambda: catalog.create_database("a:b"),
    ]:
        with pytest.raises(IdentifierError):
            call()
    assert not (Path(catalog.warehouse) / "sys.db").exists()
    assert catalog.list_tables("db") == []
    # a branch of a table that does not exist: the table is named (branches open since issue 41)
    with pytest.raises(TableNotExistError, match="'db.t'"):
        catalog.get_table("db.t$branch_b")


def test_names_java_allows_keep_working(catalog: FileSystemCatalog, outside: Outside):
    """Upper case (the filesystem catalog is case-sensitive), dashes, spaces, unicode, a
    database with '$', a table called 'branch_x' and one with '.' (Java splits 'db.a.b' at its
    first dot): created, written, read, listed and dropped."""
    databases = ["Sales", "dash-db", "a$b", "données"]
    for db in databases:
        catalog.create_database(db)
    names = [
        ("Sales", "Orders"),
        ("dash-db", "my-table"),
        ("a$b", "with space"),
        ("données", "tâble_ü"),
        ("db", "branch_x"),
        ("db", "d.e"),
    ]
    for db, name in names:
        catalog.create_table((db, name), SCHEMA)
        write_commit(catalog.get_table((db, name)), DATA)
        assert read_all(catalog.get_table(f"{db}.{name}")).sort_by("k").equals(DATA)
        assert (Path(catalog.warehouse) / f"{db}.db" / name / "schema" / "schema-0").exists()
    assert catalog.list_databases() == sorted(["db", *databases])
    assert catalog.list_tables("db") == ["branch_x", "d.e"]
    for db, name in names:
        catalog.drop_table((db, name))
        with pytest.raises(TableNotExistError):
            catalog.get_table((db, name))
    for db in databases:
        catalog.drop_database(db)
    assert catalog.list_databases() == ["db"]


def test_control_characters_and_separators(catalog: FileSystemCatalog, outside: Outside):
    for bad in ["a\x00b", "a\nb", "tab\tx", "a\\b", "a/b", "\x7f", "  ", "\udc80"]:
        with pytest.raises(IdentifierError):
            catalog.create_database(bad)
        with pytest.raises(IdentifierError):
            catalog.create_table(("db", bad), SCHEMA)
    assert catalog.list_databases() == ["db"]


def test_listing_skips_directories_a_name_could_not_reach(catalog: FileSystemCatalog):
    """A directory someone made by hand under a name the catalog refuses is not listed: every
    name a listing returns can be opened."""
    wh = Path(catalog.warehouse)
    (wh / "sys.db").mkdir()
    (wh / "a:b.db").mkdir()
    catalog.create_table("db.t", SCHEMA)
    (wh / "db.db" / "t$x" / "schema").mkdir(parents=True)
    (wh / "db.db" / "t$x" / "schema" / "schema-0").write_text("{}")
    assert catalog.list_databases() == ["db"]
    assert catalog.list_tables("db") == ["t"]


def test_every_error_is_a_paimon_error(catalog: FileSystemCatalog, outside: Outside):
    with pytest.raises(PaimonError):
        catalog.create_table(("db", 42), SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(PaimonError):
        catalog.get_table(("db",))  # type: ignore[arg-type]
    with pytest.raises(PaimonError):
        catalog.get_table(None)  # type: ignore[arg-type]


def test_object_store_warehouse(s3_catalog: FileSystemCatalog):
    """On s3://bucket/wh a name cannot reach bucket/other or another prefix of the bucket."""
    bucket = s3_catalog.warehouse.split("/", 1)[0]
    outside = f"{bucket}/other/victim.db/unrelated.txt"
    s3_catalog.file_io.write_bytes(outside, b"not paimon")
    for name in ["../other/victim", "/other/victim", f"../../{bucket}/other/victim"]:
        with pytest.raises(IdentifierError):
            s3_catalog.create_database(name)
        with pytest.raises(IdentifierError):
            s3_catalog.drop_database(name, cascade=True)
    with pytest.raises(IdentifierError):
        s3_catalog.drop_table(("db", "../../other/victim.db"))
    assert s3_catalog.file_io.read_bytes(outside) == b"not paimon"
    assert s3_catalog.file_io.list_names(f"{bucket}/other") == ["victim.db"]
    s3_catalog.create_table("db.Orders", SCHEMA)
    assert s3_catalog.list_tables("db") == ["Orders"]


def test_warehouse_given_with_trailing_slash_or_file_uri(tmp_path: Path):
    for uri in [f"{tmp_path}/wh/", f"file://{tmp_path}/wh/", f"file:{tmp_path}/wh"]:
        cat = CatalogFactory.create({"warehouse": uri})
        cat.create_database("db", ignore_if_exists=True)
        cat.create_table("db.t", SCHEMA, ignore_if_exists=True)
        with pytest.raises(IdentifierError):
            cat.create_database("../x")
        assert os.listdir(tmp_path) == ["wh"]
