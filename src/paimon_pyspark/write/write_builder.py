"""BatchWriteBuilder: the entry to the write protocol, named as pypaimon names it.

Mirrors org.apache.paimon.table.sink.BatchWriteBuilderImpl: one commit user per builder, so the
writes and the commit made from it belong together. A fresh builder gets a fresh commit user; a
driver that may retry its commit passes its own (``commit_user=`` or ``with_commit_user``) and
reuses it, so the retried commit is recognised as done (see TableCommit.commit).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from paimon_pyspark.commit.table_commit import TableCommit
from paimon_pyspark.errors import CommitError
from paimon_pyspark.write.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


class BatchWriteBuilder:
    def __init__(self, table: FileStoreTable, commit_user: str | None = None) -> None:
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())

    def with_commit_user(self, commit_user: str) -> BatchWriteBuilder:
        """Use ``commit_user`` for the writes and commits made from this builder."""
        if not commit_user:
            raise CommitError("A commit user must be a non-empty string.")
        self.commit_user = commit_user
        return self

    def new_write(self, sequence_slot: tuple[int, int] | None = None) -> TableWrite:
        """A TableWrite; ``sequence_slot`` = (index, stride) for writers sharing PK buckets."""
        return TableWrite(self.table, self.commit_user, sequence_slot)

    def new_commit(self) -> TableCommit:
        return TableCommit(self.table, self.commit_user)
