"""TableCommit: the user-facing end of the write protocol.

Mirrors org.apache.paimon.table.sink.TableCommitImpl (batch flavour): one commit per builder,
identifier Long.MAX_VALUE unless the caller numbers its commits.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from paimon_pyspark.errors import CommitError
from paimon_pyspark.spec.binary_row import deserialize_with_arity
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.snapshot import BATCH_COMMIT_IDENTIFIER
from paimon_pyspark.table.paths import bucket_dir

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


class TableCommit:
    def __init__(self, table: FileStoreTable, commit_user: str) -> None:
        self.table = table
        self.commit_user = commit_user
        self._committed = False

    def commit(
        self, commit_messages: Sequence[CommitMessage], commit_identifier: int | None = None
    ) -> list[int]:
        """Commit the messages of every writer as one snapshot; returns the new snapshot ids."""
        if self._committed and commit_identifier is None:
            raise CommitError(
                f"Table '{self.table.name}': a batch commit can only be committed once."
            )
        for m in commit_messages:
            if not isinstance(m, CommitMessage):
                raise CommitError(
                    f"Table '{self.table.name}': commit() takes CommitMessage objects from "
                    f"prepare_commit(), got {type(m).__name__}."
                )
        self._check_files_exist(commit_messages)
        store_commit = self.table.store_commit(self.commit_user)
        ids = store_commit.commit(
            commit_messages,
            BATCH_COMMIT_IDENTIFIER if commit_identifier is None else commit_identifier,
        )
        self._committed = True
        return ids

    def _check_files_exist(self, messages: Sequence[CommitMessage]) -> None:
        for m in messages:
            for f in m.data_increment.new_files + m.compact_increment.compact_after:
                path = self.data_file_path(m, f.file_name)
                if not self.table.file_io.exists(path):
                    raise CommitError(
                        f"Table '{self.table.name}': data file {path} of a commit message is "
                        "missing; nothing was committed."
                    )

    def data_file_path(self, m: CommitMessage, file_name: str) -> str:
        values = deserialize_with_arity(m.partition, self.table.partition_types)
        rel = self.table.partition_rel_path(values)
        base = os.path.join(self.table.path, rel) if rel else self.table.path
        return os.path.join(base, bucket_dir(m.bucket), file_name)

    def abort(self, commit_messages: Sequence[CommitMessage]) -> None:
        """Delete the files that uncommitted messages point to."""
        for m in commit_messages:
            for f in m.data_increment.new_files + m.compact_increment.compact_after:
                self.table.file_io.delete_quietly(self.data_file_path(m, f.file_name))

    def close(self) -> None:
        pass
