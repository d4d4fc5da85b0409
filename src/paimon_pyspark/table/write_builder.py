"""BatchWriteBuilder: the entry to the write protocol, named as pypaimon names it.

Mirrors org.apache.paimon.table.sink.BatchWriteBuilderImpl: one commit user per builder, so the
writes and the commit made from it belong together. A fresh builder gets a fresh commit user; a
driver that may retry its commit passes its own (``commit_user=`` or ``with_commit_user``) and
reuses it, so the retried commit is recognised as done (see TableCommit.commit).

``overwrite()`` turns the builder's commit into an insert overwrite (Java's ``withOverwrite``,
pypaimon's ``overwrite``, seed 004's ``with_overwrite``: one call under three names); its writers
then ignore the files already in the table, as Java's ``withIgnorePreviousFiles`` does, since
those are replaced.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paimon_pyspark.commit.overwrite import Overwrite
from paimon_pyspark.errors import CommitError, InvalidArgumentError, describe
from paimon_pyspark.read.bootstrap import bootstrapped_global_assigner
from paimon_pyspark.table.table_commit import TableCommit, static_partition_spec
from paimon_pyspark.table.upsert import UpsertTableWrite, is_upsert_table, refuse_upsert
from paimon_pyspark.write.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable


class BatchWriteBuilder:
    def __init__(
        self,
        table: FileStoreTable,
        commit_user: str | None = None,
        overwrite_spec: Overwrite | None = None,
    ) -> None:
        """``overwrite_spec``: an overwrite planned elsewhere (a distributed job's driver)."""
        if commit_user is not None and not isinstance(commit_user, str):
            raise InvalidArgumentError(
                f"Table '{table.name}': new_batch_write_builder(commit_user) must be a string "
                f"or None, got {describe(commit_user)}."
            )
        self.table = table
        self.commit_user = commit_user or str(uuid.uuid4())
        self.overwrite_spec = overwrite_spec
        self._new_user = not commit_user
        """No TableCommit was made for a generated commit user yet: it has committed nothing."""

    def with_commit_user(self, commit_user: str) -> BatchWriteBuilder:
        """Use ``commit_user`` for the writes and commits made from this builder."""
        if not isinstance(commit_user, str):
            raise InvalidArgumentError(
                f"Table '{self.table.name}': BatchWriteBuilder.with_commit_user(commit_user) "
                f"must be a non-empty string, got {describe(commit_user)}."
            )
        if not commit_user:
            raise CommitError("A commit user must be a non-empty string.")
        self.commit_user = commit_user
        self._new_user = False
        return self

    def overwrite(self, static_partition: Mapping[str, Any] | None = None) -> BatchWriteBuilder:
        """Make the commit an insert overwrite.

        ``overwrite()``: the partitions the new data falls in are replaced and the others kept
        (with ``dynamic-partition-overwrite = false``, or an unpartitioned table, the whole
        table is replaced). ``overwrite({"dt": "2026-06-26"})``: exactly the partitions that
        spec matches are replaced (all of them if it names only some partition keys), even by
        no data; writing outside it fails the commit. Values are Python values of the
        partition type or their SQL text; a key that is not a partition key, or a value that
        does not fit, raises PartitionSpecError here.

        The latest snapshot now is the one this overwrite is planned against: if another
        writer changes rows of the replaced partitions before this commit, the commit fails
        with CommitConflictError rather than silently dropping those rows.
        """
        return self._overwrite(static_partition, "BatchWriteBuilder.overwrite(static_partition)")

    def with_overwrite(
        self, static_partition: Mapping[str, Any] | None = None
    ) -> BatchWriteBuilder:
        """``overwrite`` by its name in seed 004's (paimon-rust's) Python API; the same call.

        Its commit then overwrites through ``commit(messages)`` as well as through
        ``TableCommit.overwrite(messages, static_partitions)``.
        """
        return self._overwrite(
            static_partition, "BatchWriteBuilder.with_overwrite(static_partition)"
        )

    def _overwrite(self, static_partition: object, call: str) -> BatchWriteBuilder:
        spec = static_partition_spec(self.table.store, static_partition, call)
        latest = self.table.store.snapshot_manager.latest_id()
        self.overwrite_spec = Overwrite(spec, latest if latest is not None else 0)
        return self

    def new_write(self, sequence_slot: tuple[int, int] | None = None) -> TableWrite:
        """A TableWrite; ``sequence_slot`` = (index, stride) for writers sharing PK buckets.
        An insert into an ``upsert-key`` table upserts (table/upsert.py)."""
        if self.overwrite_spec is None and is_upsert_table(self.table.store):
            if sequence_slot is not None:
                refuse_upsert(self.table.store, "a write shared by several writers")
            return UpsertTableWrite(self.table, self.commit_user).with_table(self.table)
        return TableWrite(
            self.table.store,
            self.commit_user,
            sequence_slot,
            ignore_previous_files=self.overwrite_spec is not None,
            key_index_bootstrap=bootstrapped_global_assigner,
        ).with_table(self.table)

    def new_commit(self) -> TableCommit:
        new_user, self._new_user = self._new_user, False
        return TableCommit(self.table.store, self.commit_user, self.overwrite_spec, new_user)
