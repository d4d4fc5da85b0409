"""The table's TagManager as pypaimon hands it out: ``table.tag_manager()``.

pypaimon's FileStoreTable.tag_manager is a method, and its TagManager has ``list_tags`` and
``get_or_throw``; ours is a property over store/managers.py's TagManager. As with
table/snapshot_manager.py, this subclass is both: calling it returns itself. ``get`` returns
the tagged Snapshot (pypaimon's Tag is a Snapshot with the tag's retention; the retention is
not read here). Creating and deleting tags goes through the table (``create_tag``,
``delete_tag``), which also cleans up the files only a deleted tag kept.
"""

from __future__ import annotations

import os

from paimon_pyspark.errors import TagNotExistError
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.managers import TagManager


class TableTagManager(TagManager):
    def __call__(self) -> TableTagManager:
        """Itself, for pypaimon's ``table.tag_manager()``."""
        return self

    def tag_directory(self) -> str:
        return self.tag_dir

    def list_tags(self) -> list[str]:
        """The tag names, sorted by name (pypaimon lists them in directory order)."""
        return self.tag_names()

    def get_or_throw(self, tag_name: str) -> Snapshot:
        """The tagged snapshot; TagNotExistError (pypaimon's TagNotExistException) if none."""
        tagged = self.get(tag_name)
        if tagged is None:
            raise TagNotExistError(tag_name, os.path.dirname(self.tag_dir))
        return tagged
