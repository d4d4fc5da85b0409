"""Java Paimon's branch calls, through the ``java_oracle`` fixture's JVM.

Calls ``tests/interop/java/BranchOracle.java`` (built with the other oracle classes by ``make``)
on the same py4j gateway as PaimonOracle. ``table`` may name a branch (``t$branch_b``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from java_oracle import JavaOracle


def _java(oracle: JavaOracle) -> Any:
    return oracle._gateway.jvm.paimonoracle.BranchOracle


def create_branch(
    oracle: JavaOracle,
    warehouse: str | os.PathLike[str],
    db: str,
    table: str,
    branch: str,
    tag: str | None = None,
) -> None:
    _java(oracle).createBranch(os.fspath(warehouse), db, table, branch, tag or "")


def delete_branches(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, names: str
) -> None:
    _java(oracle).deleteBranches(os.fspath(warehouse), db, table, names)


def rename_branch(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, old: str, new: str
) -> None:
    _java(oracle).renameBranch(os.fspath(warehouse), db, table, old, new)


def fast_forward(
    oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str, branch: str
) -> None:
    _java(oracle).fastForward(os.fspath(warehouse), db, table, branch)


def branches(oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str) -> Any:
    return json.loads(_java(oracle).branches(os.fspath(warehouse), db, table))


def tags(oracle: JavaOracle, warehouse: str | os.PathLike[str], db: str, table: str) -> Any:
    return json.loads(_java(oracle).tags(os.fspath(warehouse), db, table))
