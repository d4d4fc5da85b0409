"""A branch's metadata lives in ``branch/branch-<name>/`` (store/branches.py, Java's layout):
opening ``db.t$branch_b`` reads and commits there, while data files and manifests stay in the
table directory; names that could leave the table are refused."""

from __future__ import annotations

import os
import shutil

import pyarrow as pa
import pytest
from tests.integration.table_helpers import read_all, write_commit

from paimon_pyspark import FileSystemCatalog, Schema
from paimon_pyspark.errors import BranchNotExistError, IdentifierError

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])


def test_branch_handle_commits_into_its_own_directory(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db", True)
    catalog.create_table("db.t", Schema.from_pyarrow_schema(SCHEMA), False)
    main = catalog.get_table("db.t")
    write_commit(main, pa.table({"id": [1], "v": ["main"]}, schema=SCHEMA))
    with pytest.raises(BranchNotExistError, match="'db.t': branch 'b'"):
        catalog.get_table("db.t$branch_b")
    # an empty branch is its schema files copied (Java's createBranch without a tag)
    branch_dir = os.path.join(main.path, "branch", "branch-b", "schema")
    os.makedirs(branch_dir)
    shutil.copy(os.path.join(main.path, "schema", "schema-0"), branch_dir)

    branch = catalog.get_table("db.t$branch_b")
    assert branch.name == "db.t$branch_b" and branch.store.branch == "b"
    assert read_all(branch).num_rows == 0
    write_commit(branch, pa.table({"id": [2, 3], "v": ["b", "b"]}, schema=SCHEMA))
    assert sorted(read_all(branch).column("id").to_pylist()) == [2, 3]
    assert read_all(catalog.get_table("db.t")).column("id").to_pylist() == [1]
    snapshot_dir = os.path.join(main.path, "branch", "branch-b", "snapshot")
    assert "snapshot-1" in os.listdir(snapshot_dir)
    assert not os.path.exists(os.path.join(main.path, "branch", "branch-b", "manifest"))
    # the copy of a handle switches branch with the branch's own schema
    assert main.copy({"branch": "b"}).store.snapshot_manager.latest_id() == 1
    assert catalog.get_table("db.t$branch_b$snapshots").to_arrow().num_rows == 1


@pytest.mark.parametrize("name", ["t$branch_", "t$branch_..", "t$branch_a/b", "t$branch_a$x$y"])
def test_branch_names_stay_inside_the_table(catalog: FileSystemCatalog, name: str) -> None:
    catalog.create_database("db", True)
    with pytest.raises(IdentifierError):
        catalog.get_table(f"db.{name}")
