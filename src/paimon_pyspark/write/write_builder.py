"""BatchWriteBuilder: the entry to the write protocol, named as pypaimon names it.

Mirrors org.apache.paimon.table.sink.BatchWriteBuilderImpl: one commit user per builder, so the
writes and the commit made from it belong together.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from paimon_pyspark.commit.table_commit import TableCommit
from paimon_pyspark.write.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


class BatchWriteBuilder:
    def __init__(self, table: FileStoreTable, commit_user: str | None = None) -> None:
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())

    def new_write(self) -> TableWrite:
        return TableWrite(self.table, self.commit_user)

    def new_commit(self) -> TableCommit:
        return TableCommit(self.table, self.commit_user)
