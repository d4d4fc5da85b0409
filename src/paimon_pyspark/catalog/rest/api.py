"""Paimon's REST catalog API on the wire: paths, JSON bodies and errors, as Java 1.4.2 has them.

The client (catalog/rest/catalog.py) and the server (server/) both build on this module, so the
two cannot drift apart, and both speak what Java's RESTCatalog and pypaimon speak: the paths of
org.apache.paimon.rest.ResourcePaths (``/v1/<prefix>/databases/<db>/tables/<t>/commit``, each
name URL-encoded as Java's URLEncoder does it), the field names of its requests/ and responses/
classes (camelCase, nulls written as Java's Jackson writes them), the ErrorResponse, and the
status → exception mapping of DefaultErrorHandler and RESTCatalog, onto our errors.

No HTTP library here: bodies are ``dict`` (``to_json``) and come back through ``from_json``.
"""

from __future__ import annotations

import json
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paimon_pyspark.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    CatalogError,
    ColumnAlreadyExistError,
    ColumnNotExistError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    ForbiddenError,
    InvalidArgumentError,
    NotAuthorizedError,
    PaimonError,
    RestCatalogError,
    TableAlreadyExistError,
    TableNotExistError,
    TagAlreadyExistError,
    TagNotExistError,
    UnsupportedOperationError,
)
from paimon_pyspark.schema import Schema
from paimon_pyspark.store.schema_change import (
    AddColumn,
    DropColumn,
    Move,
    MoveType,
    RemoveOption,
    RenameColumn,
    SchemaChange,
    SetOption,
    UpdateColumnComment,
    UpdateColumnNullability,
    UpdateColumnPosition,
    UpdateColumnType,
    UpdateComment,
)
from paimon_pyspark.types.data_types import DataField, parse_type_json

# --- catalog options (Java's RESTCatalogOptions / RESTCatalogInternalOptions names) ----------

URI = "uri"
WAREHOUSE = "warehouse"
TOKEN = "token"
TOKEN_PROVIDER = "token.provider"
"""Java's only provider without a cloud account is ``bear`` (BearTokenAuthProvider)."""
PREFIX = "prefix"
"""Sent by the server in ``/v1/config`` defaults; Java's client refuses a config without it."""
HEADER_PREFIX = "header."
"""``header.X = v`` options become request headers, from the client's options and the config."""
DATA_TOKEN_ENABLED = "data-token.enabled"

AUTHORIZATION_HEADER = "Authorization"
BEARER_PREFIX = "Bearer "
REQUEST_ID_HEADER = "x-request-id"

# --- query parameters (RESTApi) --------------------------------------------------------------

MAX_RESULTS = "maxResults"
PAGE_TOKEN = "pageToken"
DATABASE_NAME_PATTERN = "databaseNamePattern"
TABLE_NAME_PATTERN = "tableNamePattern"
TABLE_TYPE = "tableType"
PARTITION_NAME_PATTERN = "partitionNamePattern"
TAG_NAME_PREFIX = "tagNamePrefix"

# --- ErrorResponse resource types -------------------------------------------------------------

RESOURCE_TYPE_DATABASE = "DATABASE"
RESOURCE_TYPE_TABLE = "TABLE"
RESOURCE_TYPE_COLUMN = "COLUMN"
RESOURCE_TYPE_SNAPSHOT = "SNAPSHOT"
RESOURCE_TYPE_BRANCH = "BRANCH"
RESOURCE_TYPE_TAG = "TAG"
RESOURCE_TYPE_VIEW = "VIEW"
RESOURCE_TYPE_DIALECT = "DIALECT"
RESOURCE_TYPE_FUNCTION = "FUNCTION"
RESOURCE_TYPE_DEFINITION = "DEFINITION"

SYSTEM_TABLE_SPLITTER = "$"
BRANCH_PREFIX = "branch_"


def encode_string(text: str) -> str:
    """Java's ``URLEncoder.encode(text, UTF-8)`` (RESTUtil.encodeString): a space is ``+``, and
    everything but ``A-Za-z0-9 . - * _`` is percent-encoded (``~`` too, unlike Python's
    ``quote``). Names in paths go through it, so ``t$branch_b`` is ``t%24branch_b``."""
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def decode_string(text: str) -> str:
    """Java's ``URLDecoder.decode`` (RESTUtil.decodeString): ``+`` is a space."""
    return urllib.parse.unquote_plus(text)


def object_name(table: str, branch: str | None = None) -> str:
    """Java's ``Identifier.getObjectName``: ``t``, or ``t$branch_b`` for a branch other than
    ``main`` (any case), the name the paths carry."""
    if branch is not None and branch.lower() != "main":
        return f"{table}{SYSTEM_TABLE_SPLITTER}{BRANCH_PREFIX}{branch}"
    return table


def split_object_name(name: str) -> tuple[str, str | None]:
    """``t$branch_b`` → ``("t", "b")``; ``t`` → ``("t", None)``: the reverse of
    :func:`object_name`, for a server reading a path."""
    table, sep, rest = name.partition(SYSTEM_TABLE_SPLITTER)
    if sep and rest.startswith(BRANCH_PREFIX):
        return table, rest[len(BRANCH_PREFIX) :]
    return name, None


class ResourcePaths:
    """Java's ResourcePaths: every path under ``/v1/<prefix>`` (prefix from ``/v1/config``,
    itself URL-encoded; left out when the server gave none), names URL-encoded."""

    V1 = "/v1"

    def __init__(self, prefix: str | None) -> None:
        self.base = self.V1 + (f"/{encode_string(prefix)}" if prefix else "")

    @staticmethod
    def config() -> str:
        return "/v1/config"

    def databases(self) -> str:
        return f"{self.base}/databases"

    def database(self, database: str) -> str:
        return f"{self.base}/databases/{encode_string(database)}"

    def tables(self, database: str) -> str:
        return f"{self.database(database)}/tables"

    def table_details(self, database: str) -> str:
        return f"{self.database(database)}/table-details"

    def table(self, database: str, name: str) -> str:
        return f"{self.tables(database)}/{encode_string(name)}"

    def rename_table(self) -> str:
        return f"{self.base}/tables/rename"

    def commit_table(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/commit"

    def table_snapshot(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/snapshot"

    def table_snapshot_version(self, database: str, name: str, version: str) -> str:
        """Java's ``tableSnapshot(db, t, version)``: the version is not encoded."""
        return f"{self.table(database, name)}/snapshots/{version}"

    def snapshots(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/snapshots"

    def rollback_table(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/rollback"

    def table_token(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/token"

    def partitions(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/partitions"

    def branches(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/branches"

    def branch(self, database: str, name: str, branch: str) -> str:
        return f"{self.branches(database, name)}/{encode_string(branch)}"

    def forward_branch(self, database: str, name: str, branch: str) -> str:
        return f"{self.branch(database, name, branch)}/forward"

    def rename_branch(self, database: str, name: str, branch: str) -> str:
        return f"{self.branch(database, name, branch)}/rename"

    def tags(self, database: str, name: str) -> str:
        return f"{self.table(database, name)}/tags"

    def tag(self, database: str, name: str, tag: str) -> str:
        return f"{self.tags(database, name)}/{encode_string(tag)}"


def dumps(body: Mapping[str, Any]) -> str:
    """A body as Java's Jackson writes it (compact, UTF-8 kept)."""
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def _str_map(value: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (value or {}).items()}


def _int(value: Any) -> int:
    return int(value) if value is not None else 0


# --- shared JSON pieces -----------------------------------------------------------------------


def identifier_to_json(database: str, name: str) -> dict[str, Any]:
    """Java's Identifier: ``{"database", "object"}`` (``object`` may carry ``$branch_b``)."""
    return {"database": database, "object": name}


def identifier_from_json(obj: Mapping[str, Any]) -> tuple[str, str]:
    return str(obj["database"]), str(obj["object"])


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """Java's ``org.apache.paimon.schema.Schema`` (what CreateTableRequest and GetTableResponse
    carry): fields as in a schema file, the key lists, options, and the comment only when
    set (NON_NULL)."""
    out: dict[str, Any] = {
        "fields": [f.to_json() for f in schema.fields],
        "partitionKeys": list(schema.partition_keys),
        "primaryKeys": list(schema.primary_keys),
        "options": dict(schema.options),
    }
    if schema.comment is not None:
        out["comment"] = schema.comment
    return out


def schema_from_json(obj: Mapping[str, Any]) -> Schema:
    return Schema(
        fields=[DataField.from_json(f) for f in obj.get("fields") or []],
        partition_keys=[str(k) for k in obj.get("partitionKeys") or []],
        primary_keys=[str(k) for k in obj.get("primaryKeys") or []],
        options=_str_map(obj.get("options")),
        comment=obj.get("comment"),
    )


def _move_to_json(move: Move | None) -> dict[str, Any] | None:
    if move is None:
        return None
    return {
        "fieldName": move.field_name,
        "referenceFieldName": move.reference_field_name,
        "type": move.type.value,
    }


def _move_from_json(obj: Mapping[str, Any] | None) -> Move | None:
    if obj is None:
        return None
    return Move(str(obj["fieldName"]), obj.get("referenceFieldName"), MoveType(obj["type"]))


def schema_change_to_json(change: SchemaChange) -> dict[str, Any]:
    """Java's SchemaChange JSON: ``action`` names the kind (``setOption``, ``addColumn``, ...),
    the other fields are the class's, nulls included as Jackson writes them."""
    if isinstance(change, SetOption):
        return {"action": "setOption", "key": change.key, "value": change.value}
    if isinstance(change, RemoveOption):
        return {"action": "removeOption", "key": change.key}
    if isinstance(change, UpdateComment):
        return {"action": "updateComment", "comment": change.comment}
    if isinstance(change, AddColumn):
        return {
            "action": "addColumn",
            "fieldNames": list(change.field_names),
            "dataType": change.data_type.to_json(),
            "comment": change.comment,
            "move": _move_to_json(change.move),
        }
    if isinstance(change, RenameColumn):
        return {
            "action": "renameColumn",
            "fieldNames": list(change.field_names),
            "newName": change.new_name,
        }
    if isinstance(change, DropColumn):
        return {"action": "dropColumn", "fieldNames": list(change.field_names)}
    if isinstance(change, UpdateColumnType):
        return {
            "action": "updateColumnType",
            "fieldNames": list(change.field_names),
            "newDataType": change.new_data_type.to_json(),
            "keepNullability": change.keep_nullability,
        }
    if isinstance(change, UpdateColumnNullability):
        return {
            "action": "updateColumnNullability",
            "fieldNames": list(change.field_names),
            "newNullability": change.new_nullability,
        }
    if isinstance(change, UpdateColumnComment):
        return {
            "action": "updateColumnComment",
            "fieldNames": list(change.field_names),
            "newComment": change.new_comment,
        }
    if isinstance(change, UpdateColumnPosition):
        return {"action": "updateColumnPosition", "move": _move_to_json(change.move)}
    raise UnsupportedOperationError(
        f"Schema change {type(change).__name__} has no REST form in Java's API."
    )


def schema_change_from_json(obj: Mapping[str, Any]) -> SchemaChange:
    """The reverse of :func:`schema_change_to_json`; InvalidArgumentError for an action Java
    has that paimon_pyspark cannot apply (``updateColumnDefaultValue``, ``dropPrimaryKey``)
    or one Java does not have."""
    action = obj.get("action")
    names = tuple(str(n) for n in obj.get("fieldNames") or ())
    try:
        if action == "setOption":
            return SetOption(str(obj["key"]), str(obj["value"]))
        if action == "removeOption":
            return RemoveOption(str(obj["key"]))
        if action == "updateComment":
            return UpdateComment(obj.get("comment"))
        if action == "addColumn":
            return AddColumn(
                names,
                parse_type_json(obj["dataType"]),
                obj.get("comment"),
                _move_from_json(obj.get("move")),
            )
        if action == "renameColumn":
            return RenameColumn(names, str(obj["newName"]))
        if action == "dropColumn":
            return DropColumn(names)
        if action == "updateColumnType":
            return UpdateColumnType(
                names, parse_type_json(obj["newDataType"]), bool(obj.get("keepNullability"))
            )
        if action == "updateColumnNullability":
            return UpdateColumnNullability(names, bool(obj["newNullability"]))
        if action == "updateColumnComment":
            return UpdateColumnComment(names, obj.get("newComment"))
        if action == "updateColumnPosition":
            move = _move_from_json(obj["move"])
            assert move is not None
            return UpdateColumnPosition(move)
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidArgumentError(f"Schema change {dict(obj)!r} is malformed: {e!r}") from e
    raise InvalidArgumentError(
        f"Schema change action {action!r} is not supported by paimon_pyspark (it applies "
        "setOption, removeOption, updateComment, addColumn, renameColumn, dropColumn, "
        "updateColumnType, updateColumnNullability, updateColumnComment, updateColumnPosition)."
    )


@dataclass
class PartitionStatistics:
    """Java's PartitionStatistics: the delta of one partition in a commit (a
    CommitTableRequest's ``statistics``); ``spec`` holds the partition's values as strings."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int

    def to_json(self) -> dict[str, Any]:
        return {
            "spec": dict(self.spec),
            "recordCount": self.record_count,
            "fileSizeInBytes": self.file_size_in_bytes,
            "fileCount": self.file_count,
            "lastFileCreationTime": self.last_file_creation_time,
            "totalBuckets": self.total_buckets,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> PartitionStatistics:
        return PartitionStatistics(
            spec=_str_map(obj.get("spec")),
            record_count=_int(obj.get("recordCount")),
            file_size_in_bytes=_int(obj.get("fileSizeInBytes")),
            file_count=_int(obj.get("fileCount")),
            last_file_creation_time=_int(obj.get("lastFileCreationTime")),
            total_buckets=_int(obj.get("totalBuckets")),
        )


def partition_to_json(
    spec: Mapping[str, str],
    record_count: int,
    file_size_in_bytes: int,
    file_count: int,
    last_file_creation_time: int,
    total_buckets: int,
    done: bool = False,
) -> dict[str, Any]:
    """Java's Partition (PartitionStatistics + ``done``; the audit fields and ``options`` are
    NON_NULL and left out)."""
    return {
        "spec": dict(spec),
        "recordCount": record_count,
        "fileSizeInBytes": file_size_in_bytes,
        "fileCount": file_count,
        "lastFileCreationTime": last_file_creation_time,
        "totalBuckets": total_buckets,
        "done": done,
    }


# --- requests ---------------------------------------------------------------------------------


@dataclass
class CreateDatabaseRequest:
    name: str
    options: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options)}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> CreateDatabaseRequest:
        return CreateDatabaseRequest(str(obj["name"]), _str_map(obj.get("options")))


@dataclass
class AlterDatabaseRequest:
    removals: list[str]
    updates: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"removals": list(self.removals), "updates": dict(self.updates)}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> AlterDatabaseRequest:
        return AlterDatabaseRequest(
            [str(k) for k in obj.get("removals") or []], _str_map(obj.get("updates"))
        )


@dataclass
class CreateTableRequest:
    database: str
    name: str
    schema: Schema

    def to_json(self) -> dict[str, Any]:
        return {
            "identifier": identifier_to_json(self.database, self.name),
            "schema": schema_to_json(self.schema),
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> CreateTableRequest:
        db, name = identifier_from_json(obj["identifier"])
        return CreateTableRequest(db, name, schema_from_json(obj["schema"]))


@dataclass
class RenameTableRequest:
    source: tuple[str, str]
    destination: tuple[str, str]

    def to_json(self) -> dict[str, Any]:
        return {
            "source": identifier_to_json(*self.source),
            "destination": identifier_to_json(*self.destination),
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> RenameTableRequest:
        return RenameTableRequest(
            identifier_from_json(obj["source"]), identifier_from_json(obj["destination"])
        )


@dataclass
class AlterTableRequest:
    changes: list[SchemaChange]

    def to_json(self) -> dict[str, Any]:
        return {"changes": [schema_change_to_json(c) for c in self.changes]}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> AlterTableRequest:
        return AlterTableRequest([schema_change_from_json(c) for c in obj.get("changes") or []])


@dataclass
class CommitTableRequest:
    """POST .../commit: Java's CommitTableRequest. ``snapshot`` is the snapshot's JSON as in
    its file (a dict: spec/snapshot.py ``Snapshot.to_json`` parsed); ``table_id`` the table's
    uuid from GetTableResponse ``id`` (Java sends it; the server may check it)."""

    table_id: str | None
    snapshot: dict[str, Any]
    statistics: list[PartitionStatistics] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "tableId": self.table_id,
            "snapshot": self.snapshot,
            "statistics": [s.to_json() for s in self.statistics],
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> CommitTableRequest:
        return CommitTableRequest(
            obj.get("tableId"),
            dict(obj["snapshot"]),
            [PartitionStatistics.from_json(s) for s in obj.get("statistics") or []],
        )


@dataclass
class CreateBranchRequest:
    branch: str
    from_tag: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "fromTag": self.from_tag}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> CreateBranchRequest:
        return CreateBranchRequest(str(obj["branch"]), obj.get("fromTag"))


@dataclass
class RenameBranchRequest:
    to_branch: str

    def to_json(self) -> dict[str, Any]:
        return {"toBranch": self.to_branch}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> RenameBranchRequest:
        return RenameBranchRequest(str(obj["toBranch"]))


# --- responses --------------------------------------------------------------------------------


@dataclass
class ConfigResponse:
    """GET /v1/config?warehouse=W: the server's ``defaults`` (under the client's options) and
    ``overrides`` (over them); ``prefix`` is among the defaults."""

    defaults: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)

    def merge(self, client_options: Mapping[str, str]) -> dict[str, str]:
        """Java's ConfigResponse.merge: defaults, then the client's options, then overrides."""
        return {**self.defaults, **client_options, **self.overrides}

    def to_json(self) -> dict[str, Any]:
        return {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> ConfigResponse:
        return ConfigResponse(_str_map(obj.get("defaults")), _str_map(obj.get("overrides")))


@dataclass
class Audit:
    """AuditRESTResponse's fields, on GetDatabaseResponse and GetTableResponse."""

    owner: str | None = None
    created_at: int = 0
    created_by: str | None = None
    updated_at: int = 0
    updated_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "owner": self.owner,
            "createdAt": self.created_at,
            "createdBy": self.created_by,
            "updatedAt": self.updated_at,
            "updatedBy": self.updated_by,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> Audit:
        return Audit(
            obj.get("owner"),
            _int(obj.get("createdAt")),
            obj.get("createdBy"),
            _int(obj.get("updatedAt")),
            obj.get("updatedBy"),
        )


@dataclass
class GetDatabaseResponse:
    id: str | None
    name: str
    location: str | None
    options: dict[str, str] = field(default_factory=dict)
    audit: Audit = field(default_factory=Audit)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "location": self.location,
            "options": dict(self.options),
            **self.audit.to_json(),
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> GetDatabaseResponse:
        return GetDatabaseResponse(
            obj.get("id"),
            str(obj["name"]),
            obj.get("location"),
            _str_map(obj.get("options")),
            Audit.from_json(obj),
        )


@dataclass
class GetTableResponse:
    """GET .../tables/<t>: where the table is (``path``, a URI the client opens with its own
    FileIO), its uuid (``id``, sent back in commits) and its latest schema (``schemaId`` and a
    Java Schema: no ``highestFieldId``, recomputed from the fields as Java's
    TableSchema.create does)."""

    id: str | None
    database: str | None
    name: str
    path: str
    is_external: bool
    schema_id: int
    schema: Schema
    audit: Audit = field(default_factory=Audit)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "database": self.database,
            "name": self.name,
            "path": self.path,
            "isExternal": self.is_external,
            "schemaId": self.schema_id,
            "schema": schema_to_json(self.schema),
            **self.audit.to_json(),
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> GetTableResponse:
        return GetTableResponse(
            obj.get("id"),
            obj.get("database"),
            str(obj["name"]),
            str(obj["path"]),
            bool(obj.get("isExternal")),
            _int(obj.get("schemaId")),
            schema_from_json(obj["schema"]),
            Audit.from_json(obj),
        )


@dataclass
class CommitTableResponse:
    """``success`` false: the snapshot id was taken by another commit (the client retries on
    the new latest snapshot)."""

    success: bool

    def to_json(self) -> dict[str, Any]:
        return {"success": self.success}

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> CommitTableResponse:
        return CommitTableResponse(bool(obj["success"]))


def paged_json(key: str, items: Sequence[Any], next_page_token: str | None) -> dict[str, Any]:
    """A paged list response (ListDatabasesResponse ``databases``, ListTablesResponse
    ``tables``, ListPartitionsResponse ``partitions``, ListSnapshotsResponse ``snapshots``):
    the items under ``key`` and ``nextPageToken``."""
    return {key: list(items), "nextPageToken": next_page_token}


def table_snapshot_json(
    snapshot: Mapping[str, Any],
    record_count: int,
    file_size_in_bytes: int,
    file_count: int,
    last_file_creation_time: int,
) -> dict[str, Any]:
    """GetTableSnapshotResponse: ``{"snapshot": TableSnapshot}``, the latest snapshot and the
    table's totals."""
    return {
        "snapshot": {
            "snapshot": dict(snapshot),
            "recordCount": record_count,
            "fileSizeInBytes": file_size_in_bytes,
            "fileCount": file_count,
            "lastFileCreationTime": last_file_creation_time,
        }
    }


# --- errors -----------------------------------------------------------------------------------


@dataclass
class ErrorResponse:
    """Every non-2xx body: ``code`` is the HTTP status; ``resourceType`` (DATABASE, TABLE,
    COLUMN, SNAPSHOT, BRANCH, TAG, ...) and ``resourceName`` say what is missing or exists."""

    message: str
    code: int
    resource_type: str | None = None
    resource_name: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "resourceType": self.resource_type,
            "resourceName": self.resource_name,
            "message": self.message,
            "code": self.code,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any], status: int = 0) -> ErrorResponse:
        code = obj.get("code")
        return ErrorResponse(
            str(obj.get("message") or ""),
            int(code) if isinstance(code, int) and code else status,
            obj.get("resourceType"),
            obj.get("resourceName"),
        )


def error_from_response(error: ErrorResponse, request: str, status: int = 0) -> PaimonError:
    """The typed error for an ErrorResponse, as Java's DefaultErrorHandler and RESTCatalog map
    them: 401 NotAuthorizedError, 403 ForbiddenError, 404/409 the missing/existing resource's
    error by ``resourceType`` (DatabaseNotExistError, TableAlreadyExistError,
    ColumnNotExistError, ...; RestCatalogError when the type is not one of ours), 400
    InvalidArgumentError, 501 UnsupportedOperationError, any other RestCatalogError. The
    message names ``request`` (``GET /v1/...``) and the server's message. Every error returned
    carries ``status``, ``resource_type`` and ``resource_name`` (the callers refine by them, as
    RESTCatalog does per call)."""
    code = error.code or status
    name = error.resource_name or ""
    kind = error.resource_type
    detail = f"{request}: {error.message}" if error.message else request
    typed: PaimonError | None = None
    if code == 401:
        typed = NotAuthorizedError(f"Not authorized: {detail}", code, error.code)
    elif code == 403:
        typed = ForbiddenError(f"Forbidden: {detail}", code, error.code)
    elif code == 404:
        typed = _not_found(kind, name)
    elif code == 409:
        typed = _exists(kind, name)
    elif code == 400:
        typed = InvalidArgumentError(detail)
    elif code == 501:
        typed = UnsupportedOperationError(detail)
    if typed is None:
        label = {500: "Server error", 503: "Service unavailable"}.get(code, "Unable to process")
        typed = RestCatalogError(f"{label}: {detail}", code, error.code)
    elif code in (404, 409):
        typed.args = (f"{typed} ({detail})",)
    typed.status = code  # type: ignore[attr-defined]
    typed.resource_type = kind  # type: ignore[attr-defined]
    typed.resource_name = error.resource_name  # type: ignore[attr-defined]
    return typed


def _not_found(kind: str | None, name: str) -> CatalogError | None:
    if kind == RESOURCE_TYPE_DATABASE:
        return DatabaseNotExistError(name)
    if kind == RESOURCE_TYPE_TABLE:
        return TableNotExistError(name)
    if kind == RESOURCE_TYPE_COLUMN:
        return ColumnNotExistError(name)
    if kind == RESOURCE_TYPE_BRANCH:
        return BranchNotExistError(name)
    if kind == RESOURCE_TYPE_TAG:
        return TagNotExistError(name)
    return None


def _exists(kind: str | None, name: str) -> CatalogError | None:
    if kind == RESOURCE_TYPE_DATABASE:
        return DatabaseAlreadyExistError(name)
    if kind == RESOURCE_TYPE_TABLE:
        return TableAlreadyExistError(name)
    if kind == RESOURCE_TYPE_COLUMN:
        return ColumnAlreadyExistError(name)
    if kind == RESOURCE_TYPE_BRANCH:
        return BranchAlreadyExistError(name)
    if kind == RESOURCE_TYPE_TAG:
        return TagAlreadyExistError(name)
    return None


def error_response_for(exc: BaseException) -> ErrorResponse:
    """The ErrorResponse a server sends for one of our errors, so that Java's, pypaimon's and
    our clients raise the matching exception: the inverse of :func:`error_from_response`.
    Unknown errors are 500 (the message names the error's type)."""
    message = str(exc)
    if isinstance(exc, NotAuthorizedError):
        return ErrorResponse(message, 401)
    if isinstance(exc, ForbiddenError):
        return ErrorResponse(message, 403)
    for cls, code, kind, attr in _ERROR_RESOURCES:
        if isinstance(exc, cls):
            value = getattr(exc, attr, None)
            if isinstance(value, tuple):
                value = ".".join(value)
            return ErrorResponse(message, code, kind, None if value is None else str(value))
    if isinstance(exc, UnsupportedOperationError):
        return ErrorResponse(message, 501)
    if isinstance(exc, InvalidArgumentError | CatalogError) or _is_schema_error(exc):
        return ErrorResponse(message, 400)
    return ErrorResponse(f"{type(exc).__name__}: {message}", 500)


def _is_schema_error(exc: BaseException) -> bool:
    from paimon_pyspark.errors import OptionError, SchemaError

    return isinstance(exc, SchemaError | OptionError)


_ERROR_RESOURCES: tuple[tuple[type[BaseException], int, str, str], ...] = (
    (DatabaseNotExistError, 404, RESOURCE_TYPE_DATABASE, "database"),
    (TableNotExistError, 404, RESOURCE_TYPE_TABLE, "identifier"),
    (ColumnNotExistError, 404, RESOURCE_TYPE_COLUMN, "column"),
    (BranchNotExistError, 404, RESOURCE_TYPE_BRANCH, "branch"),
    (TagNotExistError, 404, RESOURCE_TYPE_TAG, "tag"),
    (DatabaseAlreadyExistError, 409, RESOURCE_TYPE_DATABASE, "database"),
    (TableAlreadyExistError, 409, RESOURCE_TYPE_TABLE, "identifier"),
    (ColumnAlreadyExistError, 409, RESOURCE_TYPE_COLUMN, "column"),
    (BranchAlreadyExistError, 409, RESOURCE_TYPE_BRANCH, "branch"),
    (TagAlreadyExistError, 409, RESOURCE_TYPE_TAG, "tag"),
)
