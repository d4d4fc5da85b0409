"""Random database and table names through the catalog: separators, ``..``, absolute paths
(aimed at the sentinel beside the warehouse), unicode, control characters, very long names.

Each name is created, opened, listed and dropped. Every call succeeds or raises a PaimonError;
a database created is a direct child of the warehouse and a table a direct child of its
database; nothing ever appears beside the warehouse and the sentinel never changes. Names that
would reach outside the sandbox (above its root) are never handed over.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tests.fuzz.fuzz_support import Outcome, Sandbox, fuzz_settings, sandbox

from paimon_pyspark import Schema

SCHEMA = Schema.from_pyarrow_schema(pa.schema([("a", pa.int32())]))
ABSOLUTE = "\0abs\0"
"""Stands for the sentinel's absolute path, known only when the sandbox exists."""

_SPECIAL = st.sampled_from(
    [
        "",
        ".",
        "..",
        "...",
        "../x",
        "../sentinel",
        "../sentinel/inner",
        "../../x",
        "x/..",
        "x/../../sentinel/y",
        "./x",
        "a/b",
        "a\\b",
        "a.b",
        "sys",
        " ",
        "a\0b",
        "\n",
        "x" * 255,
        "x" * 252,
        "x" * 300,
        "é" * 128,
        "\U0001f600" * 64,
        "ascii_ok",
        "UPPER",
        "with space",
        "t$1",
        "%2F",
        "schema",
        "snapshot",
    ]
)
_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from("abcXYZ_-.$/\\ %:*?\"<>|'\0\t\n"),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    max_size=40,
)
NAMES = st.one_of(
    _SPECIAL,
    _TEXT,
    st.builds(lambda tail: ABSOLUTE + tail, st.sampled_from(["", "/x", "/inner", "/new"])),
    st.builds(lambda c, n: c * n, st.sampled_from("aé\U0001f600."), st.integers(200, 400)),
)


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with sandbox(tmp_path_factory, "fuzz-names") as b:
        yield b


def _resolve(box: Sandbox, name: str) -> str:
    return name.replace(ABSOLUTE, str(box.sentinel))


def _direct_child(parent: Path | str, path: str) -> bool:
    return os.path.dirname(os.path.normpath(path)) == os.path.normpath(parent)


@fuzz_settings(max_examples=600)
@given(
    db=NAMES,
    table=NAMES,
    as_tuple=st.booleans(),
    fresh_db=st.booleans(),
)
def test_names_stay_in_the_warehouse(
    box: Sandbox, db: str, table: str, as_tuple: bool, fresh_db: bool
) -> None:
    db, table = _resolve(box, db), _resolve(box, table)
    db_dir = os.path.join(box.warehouse, db + ".db")
    assume(box.inside(db_dir) and box.inside(os.path.join(db_dir, table)))
    assume(box.inside(os.path.join(box.warehouse, "db.db", table)))
    with box.contained(), _warehouse_left_clean(box):
        _create_use_drop(box, db, table, as_tuple, fresh_db)


def _create_use_drop(box: Sandbox, db: str, table: str, as_tuple: bool, fresh_db: bool) -> None:
    catalog, out = box.catalog, Outcome("names")
    db_dir = os.path.join(box.warehouse, db + ".db")
    if fresh_db:
        _, error = out.step(lambda: catalog.create_database(db))
        if error is None:
            assert _direct_child(box.warehouse, db_dir) and os.path.isdir(db_dir), db_dir
            assert db in catalog.list_databases()
            out.step(lambda: catalog.get_database(db))
        else:
            db = "db"
    else:
        db = "db"
    ident = (db, table) if as_tuple else f"{db}.{table}"
    _, error = out.step(lambda: catalog.create_table(ident, SCHEMA))
    if error is None:
        path = os.path.join(box.warehouse, db + ".db", table)
        assert _direct_child(os.path.join(box.warehouse, db + ".db"), path), path
        assert os.path.isdir(os.path.join(path, "schema")), path
        t, _ = out.step(lambda: catalog.get_table(ident))
        assert t is not None and os.path.normpath(t.path) == os.path.normpath(path)
        assert table in catalog.list_tables(db)
        out.step(lambda: catalog.drop_table(ident))
        assert not os.path.exists(path)
    if db != "db":
        out.step(lambda: catalog.drop_database(db, cascade=True))
        assert not os.path.exists(db_dir)
    out.record()


@contextmanager
def _warehouse_left_clean(box: Sandbox) -> Iterator[None]:
    """Every database and table an example created is dropped by it; what is left is removed
    (even when the example raised) before the example fails."""
    try:
        yield
    finally:
        left = [p for p in box.warehouse.iterdir() if p.name != "db.db"]
        left += list((box.warehouse / "db.db").iterdir())
        for path in left:
            shutil.rmtree(path, ignore_errors=True)
    assert not left, f"left in the warehouse: {[str(p) for p in left]}"
