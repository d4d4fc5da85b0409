"""The one exception hierarchy of paimon_pyspark.

Every error the library raises on purpose derives from :class:`PaimonError`, so a caller can
catch the whole family, or one precise kind. Messages name the table, field and value involved.
"""

from __future__ import annotations


class PaimonError(Exception):
    """Base of every error raised by paimon_pyspark."""


class CatalogError(PaimonError):
    """A catalog operation failed (database or table missing, already existing, ...)."""


class DatabaseNotExistError(CatalogError):
    def __init__(self, database: str) -> None:
        super().__init__(f"Database '{database}' does not exist.")
        self.database = database


class DatabaseAlreadyExistError(CatalogError):
    def __init__(self, database: str) -> None:
        super().__init__(f"Database '{database}' already exists.")
        self.database = database


class TableNotExistError(CatalogError):
    def __init__(self, identifier: str, hint: str = "") -> None:
        super().__init__(f"Table '{identifier}' does not exist." + (f" {hint}" if hint else ""))
        self.identifier = identifier


class TableAlreadyExistError(CatalogError):
    def __init__(self, identifier: str) -> None:
        super().__init__(f"Table '{identifier}' already exists.")
        self.identifier = identifier


class SchemaError(PaimonError):
    """A table schema, or data given against it, is invalid."""


class SchemaMismatchError(SchemaError):
    """Written data does not match the table schema."""


class NullViolationError(SchemaError):
    """A null was written into a NOT NULL column."""


class UnsupportedTypeError(SchemaError):
    """A data type that paimon_pyspark cannot map to or from Arrow."""


class OptionError(PaimonError):
    """A table option has an invalid value or an invalid combination with others."""


class UnsupportedOptionError(OptionError):
    """A table option paimon_pyspark does not implement; ignoring it would corrupt results."""


class CorruptTableError(PaimonError):
    """Table metadata (snapshot, manifest, schema) is missing or unreadable."""


class SnapshotExpiredError(CorruptTableError):
    """A snapshot asked for (time travel) was removed by snapshot expiration; the message names
    it and the earliest snapshot still there."""


class CommitError(PaimonError):
    """A commit could not be completed; the table keeps its previous snapshot (except for
    CommitOutcomeUnknownError, which says it cannot tell)."""


class CommitConflictError(CommitError):
    """A concurrent commit conflicts with this one; nothing of this commit was published."""


class PredicateError(PaimonError):
    """A filter predicate refers to an unknown field or has a literal of the wrong type."""


class CommitMessageSerdeError(PaimonError):
    """CommitMessage bytes of an unknown version, truncated, with trailing bytes, or a message
    that the requested serializer version cannot represent without losing a field."""


class MergeError(PaimonError):
    """Records of one primary key cannot be merged by the table's merge engine: a retraction the
    engine or an aggregate function does not accept, or an aggregate that overflows its type."""


class PartitionSpecError(SchemaError):
    """A static partition spec names a key that is not a partition key, or gives a value that
    does not fit the partition key's type; the message names the key and the value."""


class CorruptRecordError(CorruptTableError):
    """Bytes paimon_pyspark wrote for itself (a distributed job's staging record, a task's
    result, a task's input) that do not decode: not one of our records (another magic, as a
    pickle has), an unknown version, truncated or trailing bytes, or a field that does not
    decode. Nothing in such bytes is run or used; the message names the record, and the file
    for one read from disk."""


class CompactArgumentError(PaimonError):
    """An argument of a ``CALL sys.*`` procedure that Java's procedure would refuse too."""


class UnsafeStoreError(PaimonError):
    """A warehouse's store cannot publish a file atomically (create-if-absent), so concurrent
    commits could lose each other's snapshots; set ``fs.single-writer`` to accept one writer."""


class CommitOutcomeUnknownError(CommitError):
    """The commit's publish request was sent but its outcome could not be learnt: the snapshot
    may or may not be in. Retrying the same commit (same commit user and identifier) is safe:
    an identifier that is already committed is skipped."""


class IdentifierError(CatalogError):
    """A database or table name that Java's catalog refuses, or that would name a path outside
    the warehouse (a separator, ``..``, an absolute path, a name too long for the filesystem);
    the message names the name."""


class InvalidCommitMessageError(CommitError):
    """A commit message from outside (deserialized bytes, or objects a user passes in) names a
    file that is not a bare file name of the table, or an external path outside the table's
    configured ``data-file.external-paths``; nothing is committed and nothing is deleted."""


class InvalidArgumentError(PaimonError, TypeError):
    """An argument of a public call has the wrong type or value (``write_arrow(None)``, a
    negative limit, ...); the message names the call, the argument and what it got."""


class StoreError(PaimonError, OSError):
    """The store (the operating system or an object store) refused an operation for one of its
    limits: a name too long, no space left, no permission. Carries the ``errno`` and names the
    path."""


class SchemaChangeError(SchemaError):
    """An ``ALTER TABLE`` change Java's SchemaManager refuses too (an immutable option such as
    ``primary-key`` or ``merge-engine``, a bucket change it does not allow); the message names
    the table, the option and the value."""


class UnsupportedOperationError(PaimonError):
    """A row-level operation the table cannot do as Java's connector does it (``UPDATE`` of a
    primary-key or partition column, ``DELETE`` under a merge engine that cannot retract); the
    message names the table and the reason."""


class SqlError(PaimonError):
    """A SQL statement of the SQL door that cannot run; nothing of it is committed."""


class SqlSyntaxError(SqlError):
    """SQL the parser cannot read; the message shows the parser's line and column."""

    def __init__(self, message: str, line: int | None = None, col: int | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.col = col


class UnsupportedStatementError(SqlError):
    """A statement kind (or clause) the SQL door does not run; the message names it."""


def describe(value: object) -> str:
    """What a call got, for an :class:`InvalidArgumentError` message: the type, and a short
    repr for built-in values (a DataFrame's repr is a whole table)."""
    kind = type(value)
    if kind.__module__ != "builtins":
        return f"{kind.__module__}.{kind.__qualname__}"
    text = " ".join(repr(value).split())
    return f"{kind.__name__} {text[:60] + '...' if len(text) > 60 else text}"
