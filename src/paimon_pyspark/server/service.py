"""What the REST catalog server answers: Paimon's REST catalog API over a FileSystemCatalog.

The routes, request and response fields are those of Java 1.4.2's RESTApi and ResourcePaths
(paimon-api org.apache.paimon.rest) and of its test server RESTCatalogServer, which is what
Java's RESTCatalog and pypaimon's REST catalog call. This module needs no web framework: the
FastAPI shell (server/app.py) hands it the method, the raw path, the query and the body, and
sends back the status and JSON it returns, so every route, including an unknown one, goes
through the same checks.

Commits are made here: ``POST .../tables/<t>/commit`` publishes the client's snapshot at its
id with create-if-absent, one commit at a time per table and branch, and answers
``success: false`` when the id is taken, as Java's server does. Names go through
catalog/identifiers.py: a name that would lead outside the warehouse is refused with 403, as is
a table whose ``path`` option would put it elsewhere (external tables are not served).
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote_plus

from paimon_pyspark.catalog.filesystem_catalog import FileSystemCatalog
from paimon_pyspark.catalog.identifiers import parse_table_identifier
from paimon_pyspark.catalog.rest import api
from paimon_pyspark.errors import (
    CatalogError,
    CorruptTableError,
    IdentifierError,
    PaimonError,
    TableNotExistError,
)
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.store.managers import SchemaManager
from paimon_pyspark.store.path_checks import name_problem
from paimon_pyspark.store.schema_change import SetOption

T = TypeVar("T")

DEFAULT_PREFIX = "paimon"
"""The path prefix the config tells clients to use (``/v1/<prefix>/databases``): Java's
ResourcePaths refuses a missing one."""

OWNER = "paimon-pyspark"
"""The audit fields' owner and author: the filesystem records neither; Java's client copies
them into the table's options, so they are strings, never null."""

_JAVA_ONLY = frozenset(
    {
        "views",
        "view-details",
        "functions",
        "function-details",
        "register",
        "token",
        "auth",
        "rollback",
        "rollback-schema",
        "branches",
        "tags",
        "snapshots",
        "consumers",
        "mark",
        "list-by-names",
        "id",
    }
)
"""Resources of Java's API this server does not serve: 501, which Java's client turns into
NotImplementedException (and, for partitions, a fallback to the filesystem)."""


@dataclass
class Reply:
    """An answer: HTTP status, JSON body (None for an empty one), and, for a refusal, why (the
    shell writes it to the server's log)."""

    status: int
    body: dict[str, Any] | None = None
    refused: str | None = None


class Refused(CatalogError):
    """A request the server will not run: a path outside the warehouse (403)."""


def error_reply(
    status: int, message: str, resource_type: str | None = None, resource_name: str | None = None
) -> Reply:
    """Java's ErrorResponse: ``message``, ``resourceType``, ``resourceName``, ``code``."""
    return Reply(status, api.ErrorResponse(message, status, resource_type, resource_name).to_json())


class RestCatalogService:
    def __init__(
        self,
        catalog: FileSystemCatalog,
        prefix: str = DEFAULT_PREFIX,
        client_options: Mapping[str, str] | None = None,
        on_commit: Callable[[str], None] | None = None,
    ) -> None:
        self.catalog = catalog
        self.prefix = prefix
        self.client_options = dict(client_options or {})
        self.on_commit = on_commit
        self._locks: dict[str, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    # --- paths -----------------------------------------------------------------------------

    def uri_of(self, path: str) -> str:
        """``path`` (scheme-less, as fs/ holds it) as clients open it: ``file:/abs`` on a local
        warehouse (Java's Path spelling), ``s3://bucket/key`` on an object store."""
        uri = self.catalog.uri
        if "://" in uri and not uri.startswith(("file:", "local:")):
            return f"{uri.split('://', 1)[0]}://{path}"
        return "file:" + path

    # --- dispatch --------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, query: Mapping[str, str], body: bytes) -> Reply:
        """Route one request; ``raw_path`` still percent-encoded, so an encoded ``/`` stays
        inside its name (and is refused there)."""
        segments = [unquote_plus(s) for s in raw_path.split("/")[1:]]
        try:
            return self._route(method, segments, query, body)
        except (Refused, IdentifierError) as e:
            return _refusal(error_reply(403, str(e)))
        except (_BadRequest, CorruptTableError) as e:
            # a body that is not the route's JSON, or a snapshot that is not one
            return error_reply(400, str(e))
        except PaimonError as e:
            reply = api.error_response_for(e)
            return Reply(reply.code, reply.to_json())

    def _route(self, method: str, seg: list[str], query: Mapping[str, str], body: bytes) -> Reply:
        if len(seg) < 2 or seg[0] != "v1":
            return error_reply(404, f"No such resource: /{'/'.join(seg)}")
        if seg[1:] == ["config"]:
            return self._config(method, query.get(api.WAREHOUSE))
        if seg[1] != self.prefix:
            return error_reply(
                404, f"No such resource: the path prefix is '{self.prefix}' (GET /v1/config)."
            )
        r = seg[2:]
        n = len(r)
        if r == ["databases"]:
            if method == "GET":
                return self._list_databases(query)
            if method == "POST":
                return self._create_database(_json(body))
        elif r == ["tables", "rename"] and method == "POST":
            return self._rename_table(_json(body))
        elif n >= 2 and r[0] == "databases":
            db = r[1]
            if n == 2:
                if method == "GET":
                    return self._get_database(db)
                if method == "DELETE":
                    return self._drop_database(db)
                if method == "POST":
                    return self._alter_database(db, _json(body))
            elif n == 3 and r[2] == "tables":
                if method == "GET":
                    return self._list_tables(db, query)
                if method == "POST":
                    return self._create_table(db, _json(body))
            elif n == 3 and r[2] == "table-details" and method == "GET":
                return self._list_table_details(db, query)
            elif n >= 4 and r[2] == "tables":
                table = r[3]
                if n == 4:
                    if method == "GET":
                        return Reply(200, self._table_response(db, table))
                    if method == "DELETE":
                        self.catalog.drop_table((db, _data_name(db, table)))
                        return Reply(200)
                    if method == "POST":
                        return self._alter_table(db, table, _json(body))
                elif n == 5 and r[4] == "commit" and method == "POST":
                    return self._commit(db, table, _json(body))
                elif n == 5 and r[4] == "snapshot" and method == "GET":
                    return self._latest_snapshot(db, table)
                elif n == 5 and r[4] == "partitions" and method == "GET":
                    return self._list_partitions(db, table, query)
        if any(s in _JAVA_ONLY for s in r) or (r and r[0] == "tables"):
            return error_reply(
                501, f"{method} /{'/'.join(seg)} is not served by paimon-pyspark's REST server."
            )
        return error_reply(404, f"No such resource: {method} /{'/'.join(seg)}")

    # --- config ----------------------------------------------------------------------------

    def _config(self, method: str, warehouse: str | None) -> Reply:
        if method != "GET":
            return error_reply(404, f"{method} /v1/config: only GET is served.")
        if warehouse and not self.serves(warehouse):
            # Java's test server answers the config of its own warehouse only: a client set up
            # for another warehouse must not write into this one
            return _refusal(
                error_reply(
                    404,
                    f"This server serves warehouse '{self.catalog.uri}', not "
                    f"'{unquote_plus(warehouse)}'.",
                )
            )
        defaults = {**self.client_options, api.PREFIX: self.prefix}
        return Reply(200, api.ConfigResponse(defaults, {}).to_json())

    def serves(self, warehouse: str) -> bool:
        """Whether a client's ``warehouse`` option names this server's warehouse: as given
        (Java's client and pypaimon encode it twice, so it arrives encoded once more), with or
        without its scheme, a trailing ``/`` or, on a local warehouse, ``file:``."""

        def norm(text: str) -> str:
            text = text.rstrip("/")
            if text.startswith("file:"):
                text = "/" + text[len("file:") :].lstrip("/")
            elif text.startswith("local://"):
                text = "/" + text[len("local://") :].lstrip("/")
            return text

        own = {
            norm(self.catalog.uri),
            norm(self.catalog.warehouse),
            norm(self.uri_of(self.catalog.warehouse)),
        }
        return bool({norm(warehouse), norm(unquote_plus(warehouse))} & own)

    # --- databases -------------------------------------------------------------------------

    def _list_databases(self, query: Mapping[str, str]) -> Reply:
        names = _filter(self.catalog.list_databases(), query.get(api.DATABASE_NAME_PATTERN))
        page, token = _page(names, query)
        return Reply(200, api.paged_json("databases", page, token))

    def _create_database(self, req: dict[str, Any]) -> Reply:
        request = _parse(api.CreateDatabaseRequest.from_json, req)
        self.catalog.create_database(request.name, properties=request.options)
        return Reply(200)

    def _get_database(self, db: str) -> Reply:
        location = self.uri_of(self.catalog.get_database(db)["location"])
        response = api.GetDatabaseResponse(
            str(uuid.uuid5(uuid.NAMESPACE_URL, location)),
            db,
            location,
            {},
            api.Audit(OWNER, 0, OWNER, 0, OWNER),
        )
        return Reply(200, response.to_json())

    def _drop_database(self, db: str) -> Reply:
        # Java's client checks emptiness itself (listing tables) before it asks, as Java's
        # server drops with cascade
        self.catalog.drop_database(db, cascade=True)
        return Reply(200)

    def _alter_database(self, db: str, req: dict[str, Any]) -> Reply:
        self.catalog.get_database(db)
        request = _parse(api.AlterDatabaseRequest.from_json, req)
        removals, updates = request.removals, request.updates
        # the filesystem catalog keeps no database options: report every key as missing
        return Reply(200, {"removed": [], "updated": [], "missing": removals + sorted(updates)})

    # --- tables ----------------------------------------------------------------------------

    def _list_tables(self, db: str, query: Mapping[str, str]) -> Reply:
        names = _filter(self.catalog.list_tables(db), query.get(api.TABLE_NAME_PATTERN))
        page, token = _page(names, query)
        return Reply(200, api.paged_json("tables", page, token))

    def _list_table_details(self, db: str, query: Mapping[str, str]) -> Reply:
        names = _filter(self.catalog.list_tables(db), query.get(api.TABLE_NAME_PATTERN))
        page, token = _page(names, query)
        details = []
        for name in page:
            try:
                details.append(self._table_response(db, name))
            except TableNotExistError:
                continue  # dropped while listing
        return Reply(200, api.paged_json("tableDetails", details, token))

    def _table_response(self, db: str, obj: str) -> dict[str, Any]:
        """GetTableResponse of ``obj`` (a table, or ``t$branch_b`` for a branch's schema)."""
        table = self.catalog.get_table((db, _data_name(db, obj)))
        schema = table.table_schema
        created = self._created_millis(table.path)
        response = api.GetTableResponse(
            self._table_uuid(table.path, created),
            db,
            obj,
            self.uri_of(table.path),
            False,
            schema.id,
            api.schema_from_json(
                {
                    "fields": [f.to_json() for f in schema.fields],
                    "partitionKeys": list(schema.partition_keys),
                    "primaryKeys": list(schema.primary_keys),
                    "options": {k: v for k, v in schema.options.items() if k != "path"},
                    "comment": schema.comment,
                }
            ),
            api.Audit(OWNER, created, OWNER, schema.time_millis, OWNER),
        )
        return response.to_json()

    def _created_millis(self, path: str) -> int:
        """When the table was created: its first schema's time."""
        manager = SchemaManager(self.catalog.file_io, path)
        ids = manager.list_ids()
        return manager.schema(ids[0]).time_millis if ids else 0

    def _table_uuid(self, path: str, created: int | None = None) -> str:
        """A table's id, stable across restarts and distinct for a table dropped and created
        again: its path and the creation time of its first schema. Java's client sends it back
        with each commit, and a commit naming another id is refused as Java's server does."""
        if created is None:
            created = self._created_millis(path)
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.uri_of(path)}#{created}"))

    def _create_table(self, db: str, req: dict[str, Any]) -> Reply:
        request = _parse(api.CreateTableRequest.from_json, req)
        if request.database != db:
            raise _BadRequest(
                f"createTable: the identifier's database '{request.database}' is not the "
                f"path's '{db}'."
            )
        if "path" in request.schema.options:
            raise Refused(
                f"Table '{db}.{request.name}': the 'path' option would put the table outside "
                "the warehouse's directories; this server serves managed tables only."
            )
        self.catalog.create_table((db, request.name), request.schema)
        return Reply(200)

    def _rename_table(self, req: dict[str, Any]) -> Reply:
        request = _parse(api.RenameTableRequest.from_json, req)
        self.catalog.rename_table(request.source, request.destination)
        return Reply(200)

    def _alter_table(self, db: str, obj: str, req: dict[str, Any]) -> Reply:
        changes = _parse(api.AlterTableRequest.from_json, req).changes
        for c in changes:
            if isinstance(c, SetOption) and c.key == "path":
                raise Refused(
                    f"Table '{db}.{obj}': the 'path' option cannot be set; it would move the "
                    "table outside the warehouse's directories."
                )
        self.catalog.alter_table((db, obj), changes)
        return Reply(200)

    # --- snapshots and commits -------------------------------------------------------------

    def _lock(self, key: str) -> threading.Lock:
        with self._locks_guard:
            lock = self._locks.get(key)
            if lock is None:
                lock = self._locks[key] = threading.Lock()
            return lock

    def _commit(self, db: str, obj: str, req: dict[str, Any]) -> Reply:
        """Java's CommitTableRequest: ``tableId``, ``snapshot``, ``statistics`` (accepted; the
        filesystem keeps its statistics in the manifests)."""
        table = self.catalog.get_table((db, _data_name(db, obj)))
        request = _parse(api.CommitTableRequest.from_json, req)
        table_id = request.table_id
        if table_id and table_id != self._table_uuid(table.path):
            raise TableNotExistError(
                f"{db}.{obj}", f"(its id is not '{table_id}': it was dropped and created again)"
            )
        snapshot = Snapshot.from_json(
            json.dumps(request.snapshot), f"of the commit to '{db}.{obj}'"
        )
        if snapshot.id <= 0:
            raise _BadRequest(f"Commit to '{db}.{obj}': snapshot id {snapshot.id} is not positive.")
        for what, name in (
            ("baseManifestList", snapshot.base_manifest_list),
            ("deltaManifestList", snapshot.delta_manifest_list),
            ("changelogManifestList", snapshot.changelog_manifest_list),
            ("indexManifest", snapshot.index_manifest),
        ):
            problem = None if name is None else name_problem(name)
            if problem is not None:
                raise Refused(
                    f"Commit to '{db}.{obj}': the snapshot's {what} {name!r} is {problem}; it "
                    "would name a file outside the table's manifest directory."
                )
        snapshots = table.store.snapshot_manager
        with self._lock(f"{table.path}\0{snapshots.snapshot_dir}"):
            success = not snapshots.snapshot_exists(snapshot.id) and snapshots.publish_file(
                snapshot
            )
            if success:
                snapshots.write_latest_hint(snapshot.id)
        if self.on_commit is not None:
            self.on_commit(
                f"commit {db}.{obj} snapshot {snapshot.id} ({snapshot.commit_kind}, user "
                f"{snapshot.commit_user}): {'published' if success else 'id taken'}"
            )
        return Reply(200, {"success": success})

    def _latest_snapshot(self, db: str, obj: str) -> Reply:
        table = self.catalog.get_table((db, _data_name(db, obj)))
        snapshot = table.store.snapshot_manager.latest()
        if snapshot is None:
            return error_reply(
                404, f"Table '{db}.{obj}' has no snapshot.", api.RESOURCE_TYPE_SNAPSHOT, db
            )
        # the totals Java's server keeps from the commits' statistics are not kept here (they
        # would be lost on a restart): the record count is the snapshot's, the rest 0
        body = api.table_snapshot_json(
            json.loads(snapshot.to_json()), snapshot.total_record_count or 0, 0, 0, 0
        )
        return Reply(200, body)

    def _list_partitions(self, db: str, obj: str, query: Mapping[str, str]) -> Reply:
        page = self.catalog.list_partitions_paged(
            (db, _data_name(db, obj)),
            _max_results(query),
            query.get(api.PAGE_TOKEN) or None,
            query.get(api.PARTITION_NAME_PATTERN) or None,
        )
        partitions = [
            api.partition_to_json(
                p.spec,
                p.record_count,
                p.file_size_in_bytes,
                p.file_count,
                p.last_file_creation_time,
                p.total_buckets,
                p.done,
            )
            for p in page.elements
        ]
        return Reply(200, api.paged_json("partitions", partitions, page.next_page_token))


class _BadRequest(PaimonError):
    """A body that is not the JSON the route takes (400)."""


def _refusal(reply: Reply) -> Reply:
    assert reply.body is not None
    reply.refused = str(reply.body["message"])
    return reply


def _data_name(db: str, obj: str) -> str:
    """``obj`` if it names a table or a table's branch; a system table (``t$files``) is read
    by the client from the files of its table, so asking for one here is an error."""
    _, _, _, system = parse_table_identifier((db, obj))
    if system is not None:
        raise IdentifierError(
            f"Table '{db}.{obj}' is a system table: load '{obj.split('$')[0]}' instead."
        )
    return obj


def _parse(parse: Callable[[dict[str, Any]], T], req: dict[str, Any]) -> T:
    """A request body as ``parse`` reads it; a missing or mistyped field is a 400."""
    try:
        return parse(req)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        what = f"missing field {e}" if isinstance(e, KeyError) else str(e)
        raise _BadRequest(f"The request body is not the route's JSON: {what}.") from e


def _json(body: bytes) -> dict[str, Any]:
    try:
        value = json.loads(body or b"{}")
    except ValueError as e:
        raise _BadRequest(f"The request body is not JSON: {e}") from e
    if not isinstance(value, dict):
        raise _BadRequest("The request body must be a JSON object.")
    return value


def _max_results(query: Mapping[str, str]) -> int | None:
    text = query.get(api.MAX_RESULTS)
    if not text:
        return None
    try:
        value = int(text)
    except ValueError as e:
        raise _BadRequest(f"Invalid input for queryParameter maxResults: {text}") from e
    if value <= 0:
        raise _BadRequest(f"Invalid input for queryParameter maxResults: {text}")
    return value


def _page(names: Sequence[str], query: Mapping[str, str]) -> tuple[list[str], str | None]:
    """One page of sorted ``names``: those after ``pageToken`` (the last name of the previous
    page, as Java's server pages), at most ``maxResults``; the token of the next page, or None."""
    ordered = sorted(names)
    token = query.get(api.PAGE_TOKEN) or None
    if token is not None:
        ordered = [n for n in ordered if n > token]
    limit = _max_results(query)
    if limit is None or len(ordered) <= limit:
        return ordered, None
    page = ordered[:limit]
    return page, page[-1]


def _filter(names: Sequence[str], pattern: str | None) -> list[str]:
    """Names matching Java's SQL-like pattern (``%`` any text, ``_`` one character, ``\\``
    escapes)."""
    if not pattern:
        return list(names)
    regex = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            regex.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        regex.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    compiled = re.compile("".join(regex), re.DOTALL)
    return [n for n in names if compiled.fullmatch(n)]
