"""Branch names and where a branch keeps its metadata.

Mirrors org.apache.paimon.utils.BranchManager's static rules: the main branch is the table
directory itself; any other branch ``b`` keeps its own ``snapshot/``, ``schema/``, ``tag/``,
``consumer/`` and ``changelog/`` under ``<table>/branch/branch-b/``, while data files,
manifests and index files stay in the table directory, shared by every branch.

Java's rules for a new name (not ``main``, not blank, not only digits) are kept; ours add what
keeps a branch inside its table directory (issue 14's hardening): no path separator, no ``.`` or
``..``, no control character, no ``$`` (it would split ``t$branch_b$files`` elsewhere), at most
248 bytes (``branch-<name>`` is one directory name, at most 255).
"""

from __future__ import annotations

import os

from paimon_pyspark.errors import InvalidArgumentError

MAIN_BRANCH = "main"
BRANCH_DIR = "branch"
BRANCH_PREFIX = "branch-"
"""A branch's directory is ``branch/branch-<name>`` (Java's BRANCH_PREFIX)."""


def normalize_branch(branch: str | None) -> str:
    """``main`` for None or a blank name (Java's normalizeBranch)."""
    return MAIN_BRANCH if branch is None or not branch.strip() else branch


def is_main_branch(branch: str) -> bool:
    return branch == MAIN_BRANCH


def branch_path(table_path: str, branch: str) -> str:
    """The directory holding ``branch``'s metadata: the table directory for ``main``."""
    if is_main_branch(branch):
        return table_path
    return os.path.join(table_path, BRANCH_DIR, BRANCH_PREFIX + branch)


def check_branch_path_name(branch: object, table: str) -> str:
    """A branch name that names a directory inside the table: any existing branch we open
    passes this, and :func:`check_new_branch_name` adds Java's rules for a new one."""
    problem = None
    if not isinstance(branch, str):
        problem = f"is {type(branch).__name__}, not a string"
    elif not branch.strip():
        problem = "is blank"
    elif "/" in branch or "\\" in branch:
        problem = "holds a path separator"
    elif branch in (".", ".."):
        problem = "is a relative directory"
    elif any(ord(c) < 0x20 or ord(c) == 0x7F for c in branch):
        problem = "holds a control character"
    elif "$" in branch:
        problem = "holds '$', which separates branches and system tables in table names"
    elif len((BRANCH_PREFIX + branch).encode("utf-8")) > 255:
        limit = 255 - len(BRANCH_PREFIX)
        problem = f"is longer than {limit} bytes ('{BRANCH_PREFIX}<name>' names a directory)"
    if problem is not None:
        raise InvalidArgumentError(f"Table '{table}': branch name {branch!r} {problem}.")
    assert isinstance(branch, str)
    return branch


def check_new_branch_name(branch: object, table: str) -> str:
    """Java's validateBranch (not ``main``, not blank, not only digits) and our path rules."""
    if branch == MAIN_BRANCH:
        raise InvalidArgumentError(
            f"Table '{table}': branch name '{MAIN_BRANCH}' is the default branch and cannot be "
            "used."
        )
    name = check_branch_path_name(branch, table)
    if name.isdigit():
        raise InvalidArgumentError(
            f"Table '{table}': branch name cannot be pure numeric string but is '{name}'."
        )
    return name


__all__ = [
    "BRANCH_DIR",
    "BRANCH_PREFIX",
    "MAIN_BRANCH",
    "branch_path",
    "check_branch_path_name",
    "check_new_branch_name",
    "is_main_branch",
    "normalize_branch",
]
