"""Damaged metadata: one file of a committed table (a snapshot, the schema, a manifest list, a
manifest, an index manifest or index file, the LATEST or EARLIEST hint) is emptied,
truncated, given flipped bytes or trailing garbage; then the table is opened, read, written
and committed to, and read again.

Properties: every call succeeds or raises a PaimonError. A read that succeeds returns exactly
the committed rows when the damage cannot pass for valid data (an empty or truncated file,
trailing garbage, any damage to a hint, which readers verify); a flipped byte can turn into
another valid value, so then only the error type is checked. A commit that fails leaves every
snapshot file as it was and the table reading as before; one that succeeds adds exactly the
next snapshot, whole. Nothing outside the table changes.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.fuzz.fuzz_support import (
    Outcome,
    Sandbox,
    canon_rows,
    check_snapshots,
    fuzz_settings,
    read_all,
    sandbox,
    snapshot_files,
    table_path,
)
from tests.integration.table_helpers import write_commit

from paimon_pyspark import Schema

SCHEMA = pa.schema([("k", pa.int64()), ("p", pa.string()), ("v", pa.string())])
TEMPLATES: dict[str, dict[str, Any]] = {
    "append": {"partition_keys": ["p"]},
    "pk": {"primary_keys": ["k"], "options": {"bucket": "2"}},
    "pk-dynamic": {"primary_keys": ["k"], "partition_keys": [], "options": {}},
}
HINTS = ("LATEST", "EARLIEST")


def _rows(keys: range, v: str) -> pa.Table:
    return pa.table(
        {"k": list(keys), "p": [f"p{k % 2}" for k in keys], "v": [f"{v}{k}" for k in keys]},
        schema=SCHEMA,
    )


@dataclass
class Template:
    name: str
    rows: Counter[Any]
    metadata: list[str]
    """Paths (relative to the table) of every metadata file, sorted."""


def make_templates(box: Sandbox) -> dict[str, Template]:
    """One table per kind with three commits (an update of some keys in the last), and the
    EARLIEST hint written as expiry writes it."""
    out = {}
    for kind, spec in TEMPLATES.items():
        name = f"tpl_{kind.replace('-', '_')}"
        box.catalog.create_table(f"db.{name}", Schema.from_pyarrow_schema(SCHEMA, **spec))
        table = box.catalog.get_table(f"db.{name}")
        write_commit(table, _rows(range(0, 6), "a"))
        write_commit(table, _rows(range(6, 9), "b"))
        write_commit(table, _rows(range(4, 8), "c"))
        table.snapshot_manager.write_earliest_hint(1)
        root = table_path(box, name)
        metadata = sorted(
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and not p.parent.name.startswith(("bucket-", "p="))
        )
        out[kind] = Template(name, Counter(canon_rows(read_all(table))), metadata)
    return out


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with sandbox(tmp_path_factory, "fuzz-corruption") as b:
        yield b


@pytest.fixture(scope="module")
def tpl(box: Sandbox) -> dict[str, Template]:
    return make_templates(box)


DAMAGE = st.one_of(
    st.tuples(st.just("empty")),
    st.tuples(st.just("truncate"), st.floats(0, 1, exclude_max=True)),
    st.tuples(
        st.just("flip"),
        st.lists(
            st.tuples(st.floats(0, 1, exclude_max=True), st.integers(1, 255)),
            min_size=1,
            max_size=3,
        ),
    ),
    st.tuples(st.just("append"), st.binary(min_size=1, max_size=16)),
)


def _damage(path: Path, damage: tuple[Any, ...]) -> None:
    data = bytearray(path.read_bytes())
    if damage[0] == "empty":
        data = bytearray()
    elif damage[0] == "truncate":
        data = data[: int(damage[1] * len(data))]
    elif damage[0] == "flip":
        for where, mask in damage[1]:
            if data:
                data[int(where * len(data))] ^= mask
    else:
        data += damage[1]
    path.write_bytes(bytes(data))


def _read(out: Outcome, table: Any) -> tuple[Counter[Any] | None, str | None]:
    result, error = out.step(lambda: read_all(table))
    if error is not None:
        return None, type(error).__name__
    assert result is not None
    return Counter(canon_rows(result)), None


@fuzz_settings(max_examples=260)
@given(
    kind=st.sampled_from(sorted(TEMPLATES)),
    pick=st.integers(0, 10**6),
    damage=DAMAGE,
)
def test_damaged_metadata(
    box: Sandbox, tpl: dict[str, Template], kind: str, pick: int, damage: tuple[Any, ...]
) -> None:
    with box.contained():
        _damage_read_commit(box, tpl[kind], pick, damage)


def _damage_read_commit(
    box: Sandbox, template: Template, pick: int, damage: tuple[Any, ...]
) -> None:
    out = Outcome("corruption")
    name = box.fresh_name("c")
    directory = table_path(box, name)
    shutil.copytree(table_path(box, template.name), directory)
    victim = template.metadata[pick % len(template.metadata)]
    _damage(directory / victim, damage)
    damaged_snapshot = (
        frozenset({int(os.path.basename(victim)[len("snapshot-") :])})
        if os.path.basename(victim).startswith("snapshot-")
        else frozenset()
    )
    strict = damage[0] != "flip" or os.path.basename(victim) in HINTS
    before = snapshot_files(directory)

    table, _ = out.step(lambda: box.catalog.get_table(f"db.{name}"))
    if table is not None:
        rows, read_error = _read(out, table)
        if strict and rows is not None:
            assert rows == template.rows, f"{victim} {damage[0]}: read other rows"
        if os.path.basename(victim) in HINTS:
            assert read_error is None, f"a damaged {victim} hint made the table unreadable"

        new = _rows(range(100, 103), "n")
        _, commit_error = out.step(lambda: write_commit(table, new))
        after = snapshot_files(directory)
        if commit_error is not None:
            assert after == before, "a failed commit changed the snapshot files"
            assert _read(out, table) == (rows, read_error), "a failed commit changed the table"
        else:
            added = sorted(set(after) - set(before))
            assert added == [max(before) + 1], f"snapshots {sorted(before)} -> {sorted(after)}"
            assert all(after[i] == before[i] for i in before), "a commit rewrote a snapshot"
            if strict and rows is not None:
                again, _ = _read(out, table)
                assert again == template.rows + Counter(canon_rows(new))
        check_snapshots(directory, ignore=damaged_snapshot)
    out.record()
