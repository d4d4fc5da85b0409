"""Branches (maintenance/branches.py, Java's FileSystemBranchManager): create empty or from a
tag, drop, rename, fast-forward and list, laid out as Java lays them out; a crash at any store
call of create, fast-forward, a copying rename or drop leaves a readable table and a rerun
finishes; expiry, tag deletion and rollback keep the files (and changelogs) another branch
reads, orphan cleaning keeps a branch's files until it is dropped; the procedures, their CLI
commands and ``$branches``."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from tests.cli.helpers import run_error, run_json
from tests.integration.faulty_file_io import FaultyFileIO, InjectedFault
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import CatalogFactory, FileSystemCatalog, Schema, procedures
from paimon_pyspark.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    InvalidArgumentError,
    PaimonError,
    TagNotExistError,
)
from paimon_pyspark.maintenance import branches as br
from paimon_pyspark.maintenance.orphan_files import OrphanFilesClean
from paimon_pyspark.sql.procedure_args import SIGNATURES
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.table.file_store_table import FileStoreTable

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def _rows(i: int, n: int = 1) -> pa.Table:
    return pa.table({"id": list(range(i, i + n)), "v": [f"r{i}"] * n}, schema=SCHEMA)


def _ids(table: FileStoreTable) -> list[int]:
    return sorted(read_all(table).column("id").to_pylist())


def _table(catalog: FileSystemCatalog, options: dict[str, str] | None = None) -> FileStoreTable:
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA, options=options), False)
    return catalog.get_table("db.t")


def _listing(path: str) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs
    )


def test_create_from_tag_and_empty_then_drop_and_rename(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    write_commit(t, _rows(1))
    write_commit(t, _rows(2))
    t.create_tag("t2")
    write_commit(t, _rows(3))
    bm = t.branch_manager()
    bm.create_branch("b", "t2")
    bm.create_branch("e")
    bdir = os.path.join(t.path, "branch", "branch-b")
    assert _listing(bdir) == ["schema/schema-0", "snapshot/snapshot-2", "tag/tag-t2"]
    assert _listing(os.path.join(t.path, "branch", "branch-e")) == ["schema/schema-0"]
    assert bm.branches() == ["b", "e"] and catalog.list_branches("db.t") == ["b", "e"]
    assert _ids(catalog.get_table("db.t$branch_b")) == [1, 2]
    assert _ids(catalog.get_table("db.t$branch_e")) == []
    b = catalog.get_table("db.t$branch_b")
    write_commit(b, _rows(10))
    assert _ids(catalog.get_table("db.t$branch_b")) == [1, 2, 10] and _ids(t) == [1, 2, 3]

    with pytest.raises(BranchAlreadyExistError):
        bm.create_branch("b")
    bm.create_branch("b", ignore_if_exists=True)
    with pytest.raises(TagNotExistError):
        bm.create_branch("c", "nope")
    for bad in ("main", "123", "", "a/b", "..", "x$y"):
        with pytest.raises(InvalidArgumentError):
            bm.create_branch(bad)

    catalog.rename_branch("db.t", "b", "b2")
    assert bm.branches() == ["b2", "e"]
    assert _ids(catalog.get_table("db.t$branch_b2")) == [1, 2, 10]
    with pytest.raises(BranchNotExistError):
        catalog.rename_branch("db.t", "b", "x")
    with pytest.raises(BranchAlreadyExistError):
        catalog.rename_branch("db.t", "e", "b2")
    catalog.drop_branch("db.t", "b2")
    assert bm.branches() == ["e"] and not os.path.exists(
        os.path.join(t.path, "branch", "branch-b2")
    )
    with pytest.raises(BranchNotExistError):
        bm.drop_branch("b2")
    with pytest.raises(InvalidArgumentError, match="scan.fallback-branch"):
        t.copy({"scan.fallback-branch": "e"}).branch_manager().drop_branch("e")
    assert _ids(t) == [1, 2, 3]


def test_fast_forward_publishes_the_branch(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("t1")
    write_commit(t, _rows(2))
    t.create_tag("t2")
    catalog.create_branch("db.t", "b", "t1")
    b = catalog.get_table("db.t$branch_b")
    write_commit(b, _rows(10))
    write_commit(b, _rows(11))
    b.create_tag("bt")
    with pytest.raises(InvalidArgumentError):
        b.branch_manager().fast_forward("b")
    with pytest.raises(InvalidArgumentError):
        t.branch_manager().fast_forward("main")
    with pytest.raises(BranchNotExistError):
        t.branch_manager().fast_forward("nope")
    catalog.fast_forward("db.t", "b")
    main = catalog.get_table("db.t")
    assert _ids(main) == [1, 10, 11]
    assert main.snapshot_manager.list_ids() == [1, 2, 3]
    assert main.list_tags() == ["bt", "t1"]  # t2 (snapshot 2 >= the branch's earliest 1) gone
    write_commit(main, _rows(20))
    assert _ids(catalog.get_table("db.t")) == [1, 10, 11, 20]
    # a branch without snapshots cannot be fast-forwarded
    catalog.create_branch("db.t", "e")
    with pytest.raises(InvalidArgumentError, match="does not have snapshot"):
        catalog.fast_forward("db.t", "e")


@pytest.fixture
def fast_catalog(tmp_path: Path) -> Iterator[FileSystemCatalog]:
    """A catalog on tmpfs where there is one: the crash tests publish hundreds of fsynced
    files, and they are about the order of the calls, not about the disk."""
    shm = "/dev/shm"
    root = tempfile.mkdtemp(dir=shm) if os.access(shm, os.W_OK) else str(tmp_path)
    try:
        catalog = CatalogFactory.create({"warehouse": os.path.join(root, "wh")})
        catalog.create_database("db")
        yield catalog
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _faulty(table: FileStoreTable) -> tuple[FileStore, FaultyFileIO]:
    io = FaultyFileIO(table.file_io)
    s = table.store
    return FileStore(io, s.path, s.name, s.table_schema, s.dynamic_options), io


def _complete_schemas(t: FileStoreTable, branch: str) -> bool:
    """Every schema, no snapshot and no tag: what an empty branch is."""
    base = os.path.join(t.path, "branch", f"branch-{branch}")
    listed = {d: os.listdir(os.path.join(base, d)) for d in os.listdir(base)}
    return "schema-0" in listed.get("schema", []) and not any(
        n.startswith(("snapshot-", "tag-")) for names in listed.values() for n in names
    )


def test_a_crash_in_create_or_fast_forward_leaves_a_readable_table(
    fast_catalog: FileSystemCatalog,
) -> None:
    catalog = fast_catalog
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("t1")
    write_commit(t, _rows(2))
    store, io = _faulty(t)
    io.arm(None)
    br.create_branch(store, "probe", "t1")
    create_calls = len(io.calls)
    br.drop_branch(FileStore(t.file_io, t.path, t.name, t.table_schema), "probe")
    for k, mode in [(k, m) for k in range(1, create_calls + 1) for m in ("before", "after")]:
        io.arm(k, mode)
        with contextlib.suppress(InjectedFault, PaimonError):
            br.create_branch(store, "b", "t1")
        io.arm(None)
        tag_file = os.path.join(t.path, "branch", "branch-b", "tag", "tag-t1")
        if os.path.exists(tag_file) or (br.branch_exists(store, "b") and _complete_schemas(t, "b")):
            # done, or between the schemas and the snapshot: an empty branch, whole
            with pytest.raises(BranchAlreadyExistError):
                br.create_branch(store, "b", "t1")
            expected = [1] if os.path.exists(tag_file) else []
        else:
            br.create_branch(store, "b", "t1")  # a rerun finishes a half-made branch
            expected = [1]
        assert _ids(catalog.get_table("db.t$branch_b")) == expected
        br.drop_branch(store, "b")

    br.create_branch(store, "b", "t1")
    b = catalog.get_table("db.t$branch_b")
    write_commit(b, _rows(10))
    write_commit(b, _rows(11))
    io.arm(None)
    br.fast_forward(store, "b")
    ff_calls = len(io.calls)
    main_states = ([1], [1, 2], [1, 10], [1, 10, 11])
    for k, mode in [(k, m) for k in range(1, ff_calls + 1) for m in ("before", "after")]:
        # back to main's own history: main is a copy of the two snapshots again
        main_store = FileStore(t.file_io, t.path, t.name, t.table_schema)
        for sid in main_store.snapshot_manager.list_ids():
            if sid > 1:
                main_store.snapshot_manager.delete_snapshot(sid)
        io.arm(None)
        write_commit(catalog.get_table("db.t"), _rows(2))
        io.arm(k, mode)
        with contextlib.suppress(InjectedFault, PaimonError):
            br.fast_forward(store, "b")
        io.arm(None)
        assert _ids(catalog.get_table("db.t")) in [list(s) for s in main_states]
        br.fast_forward(store, "b")
        assert _ids(catalog.get_table("db.t")) == [1, 10, 11]


def _overwrite(table: FileStoreTable, data: pa.Table) -> None:
    builder = table.new_batch_write_builder().overwrite()
    with builder.new_write() as w:
        w.write_arrow(data)
        msgs = w.prepare_commit()
    builder.new_commit().commit(msgs)


def test_expiry_tag_deletion_and_rollback_keep_a_branchs_files(
    catalog: FileSystemCatalog,
) -> None:
    """Java 1.4.2 protects nothing here: b2's expiry would delete main's files, and main's
    tag deletion the files b1 reads."""
    t = _table(catalog, {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"})
    write_commit(t, _rows(1, 3))
    t.create_tag("t1")
    t.branch_manager().create_branch("b1", "t1")
    t.branch_manager().create_branch("b2", "t1")
    b2 = catalog.get_table("db.t$branch_b2")
    b2.delete_tag("t1")
    _overwrite(b2, _rows(50))
    write_commit(b2, _rows(51))
    assert b2.snapshot_manager.list_ids() == [3]
    assert _ids(catalog.get_table("db.t")) == [1, 2, 3]
    _overwrite(t, _rows(100))
    write_commit(t, _rows(101))
    assert t.snapshot_manager.list_ids() == [3]
    t.delete_tag("t1")
    t.rollback_to(3)
    assert _ids(catalog.get_table("db.t$branch_b1")) == [1, 2, 3]
    assert _ids(catalog.get_table("db.t$branch_b2")) == [50, 51]
    assert _ids(catalog.get_table("db.t")) == [100, 101]


def test_branch_names_fuzz(catalog: FileSystemCatalog) -> None:
    """Names from Java's rules and ours: only the good ones make a directory, and it is always
    ``branch/branch-<name>`` inside the table."""
    t = _table(catalog)
    write_commit(t, _rows(1))
    bm = t.branch_manager()
    names = [
        "ok",
        "a-b_c.d",
        "ünï",
        "x" * 248,
        "1a",
        " s ",
        "a\x00b",
        "a\nb",
        "../x",
        "a\\b",
        "x" * 249,
        ".",
        "main",
        "007",
        "\t",
        "a$b",
        None,
        5,
    ]
    made = []
    for name in names:
        try:
            bm.create_branch(name)  # type: ignore[arg-type]
        except InvalidArgumentError:
            continue
        made.append(name)
    assert made == ["ok", "a-b_c.d", "ünï", "x" * 248, "1a", " s "]
    root = os.path.realpath(os.path.join(t.path, "branch"))
    for d in os.listdir(root):
        assert os.path.dirname(os.path.realpath(os.path.join(root, d))) == root
    assert sorted(bm.branches()) == sorted(made)


def test_branch_procedures_and_the_branches_table(catalog: FileSystemCatalog) -> None:
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("v1")
    procedures.create_branch(catalog, "db.t", "b", "v1")
    procedures.create_branch(catalog, "db.t", "b", ignore_if_exists="TRUE")
    with pytest.raises(BranchAlreadyExistError):
        procedures.create_branch(catalog, "db.t", "b", None, "false")
    procedures.create_branch(catalog, "db.t", "c")
    procedures.rename_branch(catalog, "db.t", "c", "d")
    rows = catalog.get_table("db.t$branches").to_arrow().to_pylist()
    assert [r["branch_name"] for r in rows] == ["b", "d"]
    assert all(r["create_time"].year >= 2024 for r in rows)
    write_commit(catalog.get_table("db.t$branch_b"), _rows(5))
    branch_tags = catalog.get_table("db.t$branch_b$tags").to_arrow()
    assert branch_tags.column("tag_name").to_pylist() == ["v1"]
    procedures.fast_forward(catalog, "db.t", "b")
    assert _ids(catalog.get_table("db.t")) == [1, 5]
    assert procedures.delete_branch(catalog, "db.t", "b,d") == ["b", "d"]
    assert catalog.list_branches("db.t") == []
    assert SIGNATURES["create_branch"].names() == ("table", "branch", "tag", "ignoreifexists")


def test_branch_commands_of_the_cli(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    t = _table(catalog)
    write_commit(t, _rows(1))
    common = ["--warehouse", warehouse, "--table", "db.t"]
    code, doc, _ = run_json(["create-branch", *common, "--branch", "c"], capsys)
    assert (code, doc["result"]) == (0, {"result": True})
    code, _, line = run_error(["create-branch", *common, "--branch", "c"], capsys)
    assert code == 2 and "already exists" in line
    code, doc, _ = run_json(
        ["rename-branch", *common, "--from-branch", "c", "--to_branch", "d"], capsys
    )
    assert code == 0 and catalog.list_branches("db.t") == ["d"]
    write_commit(catalog.get_table("db.t$branch_d"), _rows(5))
    code, doc, _ = run_json(["fast-forward", *common, "--branch", "d"], capsys)
    assert code == 0 and _ids(catalog.get_table("db.t")) == [5]
    code, doc, _ = run_json(["delete-branch", *common, "--branch", "d"], capsys)
    assert code == 0 and catalog.list_branches("db.t") == []


def test_orphan_cleaning_keeps_branch_files_until_the_branch_goes(
    catalog: FileSystemCatalog,
) -> None:
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("v1")
    t.branch_manager().create_branch("b", "v1")
    write_commit(catalog.get_table("db.t$branch_b"), _rows(10))
    future = int(time.time() * 1000) + 86_400_000

    def clean(dry_run: bool) -> list[str]:
        store = catalog.get_table("db.t").store
        result = OrphanFilesClean(store, future, dry_run, None).run()
        return sorted(os.path.basename(p) for p in result.deleted_files)

    assert clean(dry_run=False) == []
    assert _ids(catalog.get_table("db.t$branch_b")) == [1, 10]
    t.branch_manager().drop_branch("b")
    gone = clean(dry_run=False)
    assert any(n.startswith("data-") for n in gone) and any(n.startswith("manifest-") for n in gone)
    assert _ids(catalog.get_table("db.t")) == [1]


def test_a_crash_in_a_copying_rename_is_finished_by_a_rerun(
    fast_catalog: FileSystemCatalog,
) -> None:
    """Where directories cannot be renamed (object stores), a rename copies, then deletes."""
    catalog = fast_catalog
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("t1")
    store, io = _faulty(t)
    io.is_local = False
    br.create_branch(store, "a", "t1")
    io.arm(None)
    br.rename_branch(store, "a", "z")
    calls = len(io.calls)
    br.rename_branch(store, "z", "a")
    for k, mode in [(k, m) for k in range(1, calls + 1) for m in ("before", "after")]:
        io.arm(k, mode)
        with contextlib.suppress(InjectedFault, PaimonError):
            br.rename_branch(store, "a", "z")
        io.arm(None)
        readable = [b for b in ("a", "z") if _readable(catalog, b)]
        assert readable, k
        if br.branches(store) != ["z"]:
            br.rename_branch(store, "a", "z")
        assert br.branches(store) == ["z"] and _ids(catalog.get_table("db.t$branch_z")) == [1]
        br.rename_branch(store, "z", "a")


def _readable(catalog: FileSystemCatalog, branch: str) -> bool:
    try:
        return _ids(catalog.get_table(f"db.t$branch_{branch}")) == [1]
    except BranchNotExistError:
        return False


def test_a_crash_in_drop_leaves_a_readable_branch_and_a_rerun_drops_it(
    fast_catalog: FileSystemCatalog,
) -> None:
    catalog = fast_catalog
    t = _table(catalog)
    write_commit(t, _rows(1))
    t.create_tag("t1")
    store, io = _faulty(t)
    br.create_branch(store, "d", "t1")
    io.arm(None)
    br.drop_branch(store, "d")
    calls = len(io.calls)
    for k in range(1, calls + 1):
        br.create_branch(store, "d", "t1")
        io.arm(k)
        with contextlib.suppress(InjectedFault, PaimonError):
            br.drop_branch(store, "d")
        io.arm(None)
        if br.branch_exists(store, "d"):
            # readable while it has schemas (they go last), not a branch once they are gone
            schema_dir = os.path.join(t.path, "branch", "branch-d", "schema")
            if os.path.isdir(schema_dir) and os.listdir(schema_dir):
                assert _ids(catalog.get_table("db.t$branch_d")) in ([], [1])
            else:
                with pytest.raises(BranchNotExistError):
                    catalog.get_table("db.t$branch_d")
            br.drop_branch(store, "d")
        assert br.branches(store) == []


def test_a_branchs_expiry_keeps_the_changelog_of_main_it_copied(
    catalog: FileSystemCatalog,
) -> None:
    pk = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
    options = {
        "bucket": "1",
        "changelog-producer": "input",
        "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "1",
    }
    catalog.create_table(
        "db.c", Schema.from_pyarrow_schema(pk, primary_keys=["id"], options=options), False
    )
    t = catalog.get_table("db.c")
    write_commit(t, pa.table({"id": [1], "v": ["a"]}, schema=pk))
    t.create_tag("t1")
    s1 = t.snapshot_manager.snapshot(1)
    mio = t.store.manifest_io
    assert s1.changelog_manifest_list
    entries = mio.read_entries(mio.read_manifest_list(s1.changelog_manifest_list))
    changelog_files = [os.path.join(t.path, "bucket-0", e.file.file_name) for e in entries]
    assert changelog_files and all(os.path.exists(f) for f in changelog_files)
    t.branch_manager().create_branch("b", "t1")
    b = catalog.get_table("db.c$branch_b")
    b.delete_tag("t1")
    write_commit(b, pa.table({"id": [2], "v": ["b"]}, schema=pk))
    write_commit(b, pa.table({"id": [3], "v": ["c"]}, schema=pk))
    assert b.snapshot_manager.list_ids() == [3]
    assert all(os.path.exists(f) for f in changelog_files)


def test_a_branchs_expiry_keeps_what_mains_retained_snapshots_read(
    catalog: FileSystemCatalog,
) -> None:
    """Main wrote a file after its earliest retained snapshot and dropped it before its latest:
    only snapshots in between read it. The branch made from a tag holding that file drops it
    and expires; main's time travel to those snapshots must still read it."""
    t = _table(catalog, {"snapshot.num-retained.min": "10"})
    write_commit(t, _rows(1))  # 1: main's earliest, without the file below
    write_commit(t, _rows(2))  # 2: adds the file
    t.create_tag("t2")
    t.branch_manager().create_branch("b", "t2")
    _overwrite(t, _rows(100))  # 3: main drops it; 2 still reads it
    t.delete_tag("t2")
    b = catalog.get_table("db.t$branch_b").copy(
        {"snapshot.num-retained.min": "1", "snapshot.num-retained.max": "1"}
    )
    b.delete_tag("t2")
    _overwrite(b, _rows(50))
    write_commit(b, _rows(51))
    assert b.snapshot_manager.list_ids() == [4]
    assert _ids(t.copy({"scan.snapshot-id": "2"})) == [1, 2]
    assert _ids(catalog.get_table("db.t")) == [100]
