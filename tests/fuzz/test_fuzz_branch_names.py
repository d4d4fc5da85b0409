"""Random branch names (the names of test_fuzz_names.py: separators, ``..``, absolute paths
aimed at the sentinel, unicode, control characters, very long names) through create, open,
rename and drop of a branch (maintenance/branches.py, store/branches.py).

Every call succeeds or raises a PaimonError; a branch created is the directory
``<table>/branch/branch-<name>``, a direct child of ``branch/``; nothing appears beside the
warehouse, the sentinel never changes, and a dropped branch leaves nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pyarrow as pa
import pytest
from hypothesis import given
from tests.fuzz.fuzz_support import Outcome, Sandbox, fuzz_settings, sandbox
from tests.fuzz.test_fuzz_names import ABSOLUTE, NAMES

from paimon_pyspark import Schema


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with sandbox(tmp_path_factory, "fuzz-branches") as b:
        b.catalog.create_table("db.bt", Schema.from_pyarrow_schema(pa.schema([("a", pa.int32())])))
        yield b


@fuzz_settings(max_examples=200)
@given(name=NAMES, other=NAMES)
def test_branch_names_stay_in_the_table(box: Sandbox, name: str, other: str) -> None:
    name = name.replace(ABSOLUTE, str(box.sentinel))
    other = other.replace(ABSOLUTE, str(box.sentinel))
    table = box.catalog.get_table("db.bt")
    root = os.path.join(table.path, "branch")
    bm, out = table.branch_manager(), Outcome("branch names")
    with box.contained():
        _, error = out.step(lambda: bm.create_branch(name))
        if error is None:
            made = os.path.join(root, "branch-" + name)
            assert os.path.dirname(os.path.normpath(made)) == root and os.path.isdir(made)
            assert bm.branches() == [name]
            out.step(lambda: box.catalog.get_table(f"db.bt$branch_{name}"))
            _, renamed = out.step(lambda: bm.rename_branch(name, other))
            current = name if renamed is not None else other
            assert bm.branches() == [current]
            out.step(lambda: bm.drop_branch(current))
        assert not os.path.exists(root) or os.listdir(root) == []
        out.record()
