"""CommitMessage: what a writer hands to the committer for one (partition, bucket).

Mirrors org.apache.paimon.table.sink.CommitMessageImpl with its DataIncrement and
CompactIncrement. A plain immutable value that pickles as is, so a user's worker process can
send it to the driver that commits (pypaimon's contract). The engine's own processes exchange
it as CommitMessageSerializer bytes instead (spec/commit_message_serde.py), never as pickle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.manifest import IndexFileMeta


@dataclass(frozen=True)
class DataIncrement:
    new_files: tuple[DataFileMeta, ...] = ()
    deleted_files: tuple[DataFileMeta, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    new_index_files: tuple[IndexFileMeta, ...] = ()
    deleted_index_files: tuple[IndexFileMeta, ...] = ()

    def is_empty(self) -> bool:
        return not (
            self.new_files
            or self.deleted_files
            or self.changelog_files
            or self.new_index_files
            or self.deleted_index_files
        )


@dataclass(frozen=True)
class CompactIncrement:
    compact_before: tuple[DataFileMeta, ...] = ()
    compact_after: tuple[DataFileMeta, ...] = ()
    changelog_files: tuple[DataFileMeta, ...] = ()
    new_index_files: tuple[IndexFileMeta, ...] = ()
    deleted_index_files: tuple[IndexFileMeta, ...] = ()

    def is_empty(self) -> bool:
        return not (
            self.compact_before
            or self.compact_after
            or self.changelog_files
            or self.new_index_files
            or self.deleted_index_files
        )


@dataclass(frozen=True)
class CommitMessage:
    """Files added or removed in one bucket of one partition.

    ``partition`` is the partition BinaryRow serialized with its arity prefix, the form it takes
    in manifests; ``total_buckets`` is the bucket count of the partition (None: the committer
    uses the table's ``bucket`` option).
    """

    partition: bytes
    bucket: int
    total_buckets: int | None
    data_increment: DataIncrement = field(default_factory=DataIncrement)
    compact_increment: CompactIncrement = field(default_factory=CompactIncrement)

    def is_empty(self) -> bool:
        return self.data_increment.is_empty() and self.compact_increment.is_empty()

    @property
    def new_files(self) -> tuple[DataFileMeta, ...]:
        return self.data_increment.new_files


@dataclass(frozen=True)
class ManifestCommittable:
    """The messages of one commit under one identifier; Java's ManifestCommittable.

    ``legacy_log_offsets`` are the (bucket, offset) pairs that ManifestCommittable versions up to
    4 still carried; Java ignores them since version 5, and they are kept here only so those
    bytes re-serialize exactly.
    """

    identifier: int
    watermark: int | None = None
    file_committables: tuple[CommitMessage, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)
    legacy_log_offsets: tuple[tuple[int, int], ...] = ()
