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
    def __init__(self, identifier: object, hint: str = "") -> None:
        """``identifier``: 'db.table', or as :func:`full_name` takes it (pypaimon's Identifier)."""
        name = full_name(identifier)
        super().__init__(f"Table '{name}' does not exist." + (f" {hint}" if hint else ""))
        self.identifier = identifier


class TableAlreadyExistError(CatalogError):
    def __init__(self, identifier: object) -> None:
        super().__init__(f"Table '{full_name(identifier)}' already exists.")
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


class InconsistentBucketsError(OptionError):
    """An incremental diff between two snapshots whose bucket numbers differ (Java's
    InconsistentTagBucketException): ``start_id`` and ``end_id`` are the two snapshots."""

    def __init__(self, message: str, start_id: int, end_id: int) -> None:
        super().__init__(message)
        self.start_id = start_id
        self.end_id = end_id


class CorruptTableError(PaimonError):
    """Table metadata (snapshot, manifest, schema) is missing or unreadable."""


class FileMissingError(CorruptTableError):
    """A file the table's metadata names is not in the store (``path``: where it was looked
    for). Raised by every FileIO's ``read_bytes``, so the layers above can tell a missing file
    from an unreadable one without looking at the cause."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(message)
        self.path = path


class SnapshotExpiredError(CorruptTableError):
    """A snapshot asked for (time travel) was removed by snapshot expiration; the message names
    it and the earliest snapshot still there."""


class ManifestMissingError(CorruptTableError):
    """A manifest list or manifest file that a snapshot names is not in the store (``name`` is
    the file's name). Either it went with its snapshot's expiry, which a plan of the latest
    snapshot answers by planning again (``store/latest_plan.py``), or it is lost: corruption."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


class ConcurrentExpiryError(SnapshotExpiredError):
    """A plan of the latest snapshot found that snapshot expired under it (its manifest files
    deleted) on each of its bounded tries; the message names the table and the snapshot ids
    tried. Expiry keeps ``snapshot.num-retained.min`` snapshots: fewer commits and expiries
    racing the plan, or a higher minimum, let it finish."""


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


class ExternalPathError(CorruptTableError):
    """A manifest names an external data file path under none of the table's configured
    ``data-file.external-paths`` roots (another engine's mistake, or tampering): the read
    raises and reads nothing from it; expiry deletes nothing there."""


class InvalidArgumentError(PaimonError, TypeError):
    """An argument of a public call has the wrong type or value (``write_arrow(None)``, a
    negative limit, ...); the message names the call, the argument and what it got."""


class InvalidSplitError(InvalidArgumentError):
    """A DataSplit handed to a read (built by hand, or decoded from bytes in another process)
    names a bucket directory, data file or deletion-vector file that is not the table's; the
    read refuses it before opening anything."""


class StoreError(PaimonError, OSError):
    """The store (the operating system or an object store) refused an operation for one of its
    limits: a name too long, no space left, no permission. Carries the ``errno`` and names the
    path."""


class StoreRetriesExhaustedError(StoreError):
    """An object-store call that kept failing the transient way (5xx, reset, timeout) after
    every retry the ``s3.*`` options allow; names the path, the attempts and the last cause."""


class SchemaChangeError(SchemaError):
    """An ``ALTER TABLE`` change Java's SchemaManager refuses too (an immutable option such as
    ``primary-key`` or ``merge-engine``, a bucket change it does not allow); the message names
    the table, the option and the value."""


class UnsupportedOperationError(PaimonError):
    """A row-level operation the table cannot do as Java's connector does it (``UPDATE`` of a
    primary-key or partition column, ``DELETE`` under a merge engine that cannot retract); the
    message names the table and the reason."""


class UnsupportedPysparkError(PaimonError, ImportError):
    """The installed pyspark lacks what ``paimon_pyspark.spark`` is built on (its Python Data
    Source API as pyspark 4.1 has it); raised on import, naming the version found and the
    classes missing."""


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


class MergeCardinalityError(SqlError):
    """A ``MERGE INTO`` whose ON condition matches one target row with several source rows
    while a MATCHED clause could change it (Spark's MERGE_CARDINALITY_VIOLATION); the message
    names the table. Nothing is committed."""


def describe(value: object) -> str:
    """What a call got, for an :class:`InvalidArgumentError` message: the type, and a short
    repr for built-in values (a DataFrame's repr is a whole table)."""
    kind = type(value)
    if kind.__module__ != "builtins":
        return f"{kind.__module__}.{kind.__qualname__}"
    text = " ".join(repr(value).split())
    return f"{kind.__name__} {text[:60] + '...' if len(text) > 60 else text}"


# --- pypaimon's names (pypaimon.catalog.catalog_exception) -----------------------------------
# A pypaimon program's ``except TableNotExistException`` catches ours: the names we raise are
# aliases of our classes, and those we do not raise yet are classes of this hierarchy that take
# pypaimon's constructor arguments. An identifier argument may be a 'db.table' string, a
# (database, table) pair, or pypaimon's Identifier (anything with ``get_full_name()``).

CatalogException = CatalogError
DatabaseNotExistException = DatabaseNotExistError
DatabaseAlreadyExistException = DatabaseAlreadyExistError
TableNotExistException = TableNotExistError
TableAlreadyExistException = TableAlreadyExistError


def full_name(identifier: object) -> str:
    """``db.table`` for a string, a (database, table) pair or pypaimon's Identifier."""
    if isinstance(identifier, str):
        return identifier
    if isinstance(identifier, tuple) and len(identifier) == 2:
        return f"{identifier[0]}.{identifier[1]}"
    get_full_name = getattr(identifier, "get_full_name", None)
    if callable(get_full_name):
        return str(get_full_name())
    return str(identifier)


class _ObjectError(CatalogError):
    """A catalog object (view, function, ...) missing or already there; pypaimon's
    ``(identifier)`` constructor. Not raised by the filesystem catalog, which has none."""

    _what = "Object"
    _state = "does not exist"

    def __init__(self, identifier: object) -> None:
        super().__init__(f"{self._what} '{full_name(identifier)}' {self._state}.")
        self.identifier = identifier


class DatabaseNoPermissionError(CatalogError):
    def __init__(self, database: str) -> None:
        super().__init__(f"No permission to access database '{database}'.")
        self.database = database


class TableNoPermissionError(_ObjectError):
    _what, _state = "Table", "cannot be accessed: no permission"


class ViewNotExistError(_ObjectError):
    _what = "View"


class ViewAlreadyExistError(_ObjectError):
    _what, _state = "View", "already exists"


class FunctionNotExistError(_ObjectError):
    _what = "Function"


class FunctionAlreadyExistError(_ObjectError):
    _what, _state = "Function", "already exists"


class ColumnNotExistError(SchemaChangeError, CatalogError):
    """A schema change names a column the table does not have (pypaimon's
    ColumnNotExistException); ``table`` is ours, for the message."""

    def __init__(self, column: str, table: str = "") -> None:
        where = f"Table '{table}': c" if table else "C"
        super().__init__(f"{where}olumn '{column}' does not exist.")
        self.column = column


class ColumnAlreadyExistError(SchemaChangeError, CatalogError):
    """A schema change adds or renames to a column the table has already (pypaimon's
    ColumnAlreadyExistException); ``table`` is ours, for the message."""

    def __init__(self, column: str, table: str = "") -> None:
        where = f"Table '{table}': c" if table else "C"
        super().__init__(f"{where}olumn '{column}' already exists.")
        self.column = column


class _NamedInTableError(CatalogError):
    """A definition or dialect of a view, missing or already there: pypaimon's
    ``(identifier, name)`` constructor."""

    _what = "Definition"
    _state = "does not exist"

    def __init__(self, identifier: object, name: str) -> None:
        super().__init__(f"{self._what} '{name}' {self._state} in '{full_name(identifier)}'.")
        self.identifier = identifier
        self.name = name


class DefinitionNotExistError(_NamedInTableError):
    pass


class DefinitionAlreadyExistError(_NamedInTableError):
    _state = "already exists"


class DialectNotExistError(_NamedInTableError):
    _what = "Dialect"


class DialectAlreadyExistError(_NamedInTableError):
    _what, _state = "Dialect", "already exists"


class BranchNotExistError(CatalogError):
    """pypaimon's BranchNotExistException; ``table`` is ours, for the message."""

    def __init__(self, branch: str, table: str = "") -> None:
        where = f"Table '{table}': b" if table else "B"
        super().__init__(f"{where}ranch '{branch}' does not exist.")
        self.branch = branch


class BranchAlreadyExistError(CatalogError):
    """pypaimon's BranchAlreadyExistException; ``table`` is ours, for the message."""

    def __init__(self, branch: str, table: str = "") -> None:
        where = f"Table '{table}': b" if table else "B"
        super().__init__(f"{where}ranch '{branch}' already exists.")
        self.branch = branch


class TagNotExistError(InvalidArgumentError, CatalogError):
    """pypaimon's TagNotExistException; ``table`` is ours, for the message. An
    InvalidArgumentError too, which is what a missing tag raised before it existed."""

    def __init__(self, tag: str, table: str = "") -> None:
        where = f"Table '{table}': t" if table else "T"
        super().__init__(f"{where}ag '{tag}' does not exist.")
        self.tag = tag


class TagAlreadyExistError(InvalidArgumentError, CatalogError):
    """pypaimon's TagAlreadyExistException (pypaimon 2.x); an InvalidArgumentError too, as
    for :class:`TagNotExistError`."""

    def __init__(self, tag: str, table: str = "") -> None:
        where = f"Table '{table}': t" if table else "T"
        super().__init__(f"{where}ag '{tag}' already exists.")
        self.tag = tag


class PartitionNotExistError(CatalogError):
    """A statement names partitions the table does not hold (Spark's PARTITIONS_NOT_FOUND)."""

    def __init__(self, table: str, partitions: list[str]) -> None:
        listed = "; ".join(f"({p})" for p in partitions)
        super().__init__(f"Table '{table}': partition(s) {listed} cannot be found.")
        self.table = table
        self.partitions = partitions


class PartitionAlreadyExistError(CatalogError):
    """A statement adds partitions the table holds already (Spark's
    PARTITIONS_ALREADY_EXIST)."""

    def __init__(self, table: str, partitions: list[str]) -> None:
        listed = "; ".join(f"({p})" for p in partitions)
        super().__init__(f"Table '{table}': partition(s) {listed} already exist.")
        self.table = table
        self.partitions = partitions


class IllegalStateError(CatalogError):
    """pypaimon 2.x's IllegalStateError; not raised by paimon_pyspark."""


class CatalogLockError(CatalogError):
    """A catalog's commit lock (the JDBC catalog's ``lock.enabled``) was not acquired within
    ``lock.acquire-timeout``; the message names the table and the lock. Nothing was committed."""


class CatalogConnectionError(CatalogError, OSError):
    """The catalog's database or server could not be reached, or broke off; the message names
    the catalog's ``uri``."""


class RestCatalogError(CatalogError):
    """A REST catalog server refused a request: ``status`` is its HTTP status, ``code`` and the
    message what its ErrorResponse said, the message also names the request."""

    def __init__(self, message: str, status: int = 0, code: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class NotAuthorizedError(RestCatalogError):
    """The REST server refused the request's credentials (HTTP 401): no token, or a wrong one."""


class ForbiddenError(RestCatalogError):
    """The REST server refused the request (HTTP 403): a path outside its warehouse, or an
    object the token may not reach."""


DatabaseNoPermissionException = DatabaseNoPermissionError
TableNoPermissionException = TableNoPermissionError
ViewNotExistException = ViewNotExistError
ViewAlreadyExistException = ViewAlreadyExistError
FunctionNotExistException = FunctionNotExistError
FunctionAlreadyExistException = FunctionAlreadyExistError
ColumnNotExistException = ColumnNotExistError
ColumnAlreadyExistException = ColumnAlreadyExistError
DefinitionNotExistException = DefinitionNotExistError
DefinitionAlreadyExistException = DefinitionAlreadyExistError
DialectNotExistException = DialectNotExistError
DialectAlreadyExistException = DialectAlreadyExistError
BranchNotExistException = BranchNotExistError
BranchAlreadyExistException = BranchAlreadyExistError
TagNotExistException = TagNotExistError
TagAlreadyExistException = TagAlreadyExistError
IllegalArgumentError = InvalidArgumentError
"""pypaimon 2.x's name; ours is no CatalogError, since it is raised by every kind of call."""
