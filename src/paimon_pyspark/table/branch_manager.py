"""The table's BranchManager as pypaimon hands it out: ``table.branch_manager()``.

pypaimon's FileStoreTable.branch_manager() returns a FileSystemBranchManager with
``create_branch(branch_name, tag_name=None, ignore_if_exists=False)``, ``drop_branch``,
``rename_branch``, ``fast_forward``, ``branches`` and ``branch_exists``; these are the same
calls over maintenance/branches.py, acting from the handle's branch (Java's manager is built
from the current branch's managers), and pypaimon's static helpers. Errors are ours, typed:
BranchNotExistError, BranchAlreadyExistError, TagNotExistError, InvalidArgumentError (where
pypaimon raises ValueError); a name also passes our path rules (store/branches.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paimon_pyspark.maintenance import branches as br
from paimon_pyspark.store import branches as names

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


class BranchManager:
    def __init__(self, store: FileStore) -> None:
        self.store = store

    def create_branch(
        self, branch_name: str, tag_name: str | None = None, ignore_if_exists: bool = False
    ) -> None:
        """An empty branch (the current schemas), or one from tag ``tag_name``."""
        br.create_branch(self.store, branch_name, tag_name, ignore_if_exists)

    def drop_branch(self, branch_name: str) -> None:
        """Delete a branch's metadata; its data files stay until ``remove_orphan_files``."""
        br.drop_branch(self.store, branch_name)

    def rename_branch(self, from_branch: str, to_branch: str) -> None:
        br.rename_branch(self.store, from_branch, to_branch)

    def fast_forward(self, branch_name: str) -> None:
        """Make this handle's branch (main, usually) what ``branch_name`` is."""
        br.fast_forward(self.store, branch_name)

    def branches(self) -> list[str]:
        """Every branch but ``main``, sorted by name."""
        return br.branches(self.store)

    def branch_exists(self, branch_name: str) -> bool:
        return br.branch_exists(self.store, branch_name)

    @staticmethod
    def branch_path(table_path: str, branch: str) -> str:
        """``<table>/branch/branch-<name>``, the table directory for ``main``."""
        return names.branch_path(table_path, branch)

    @staticmethod
    def normalize_branch(branch: str) -> str:
        return names.normalize_branch(branch)

    @staticmethod
    def is_main_branch(branch: str) -> bool:
        return names.is_main_branch(branch)

    @staticmethod
    def validate_branch(branch_name: str) -> None:
        """Java's rules for a new name, and ours (InvalidArgumentError)."""
        names.check_new_branch_name(branch_name, "")

    @staticmethod
    def fast_forward_validate(branch_name: str, current_branch: str) -> None:
        br.check_fast_forward(branch_name, current_branch, "")
