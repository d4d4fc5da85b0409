"""The REST catalog client: Java's ``RESTCatalog``, against any server of Paimon's REST API.

``CatalogFactory.create({"metastore": "rest", "uri": "http://host:port", "warehouse": W,
"token.provider": "bear", "token": T})`` asks the server for its config (``GET /v1/config``:
the path ``prefix`` and options merged under and over the client's), then for everything but
the data: databases, tables, schemas (create and ALTER run on the server) and commits
(``POST .../commit``: the server publishes the snapshot, so two writers anywhere cannot both
take an id). Data files and manifests are written and read by the client, directly in the
table directory the server names (GetTableResponse ``path``), with the client's own FileIO
built from that URI and the merged options, as Java's ``fileIOFromOptions`` does.

Errors are Java's RESTCatalog mapping onto ours: a missing database or table raises
DatabaseNotExistError / TableNotExistError, an existing one the AlreadyExist errors, a refused
token NotAuthorizedError, a refused object ForbiddenError, each naming the request and the
server's message (never the token).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from paimon_pyspark.catalog.catalog import Catalog, check_schema_changes
from paimon_pyspark.catalog.identifiers import (
    check_database_name,
    parse_identifier,
    parse_system_identifier,
    parse_table_identifier,
)
from paimon_pyspark.catalog.partitions import (
    PagedList,
    Partition,
    list_partitions,
    page_partitions,
)
from paimon_pyspark.catalog.rest import api
from paimon_pyspark.catalog.rest.client import HttpClient
from paimon_pyspark.commit.truncate import partitions_filter
from paimon_pyspark.errors import (
    BranchAlreadyExistError,
    BranchNotExistError,
    CatalogConnectionError,
    CatalogError,
    ColumnAlreadyExistError,
    ColumnNotExistError,
    DatabaseAlreadyExistError,
    DatabaseNotExistError,
    IdentifierError,
    InvalidArgumentError,
    OptionError,
    PaimonError,
    RestCatalogError,
    TableAlreadyExistError,
    TableNotExistError,
    TagNotExistError,
    UnsupportedOperationError,
    UnsupportedOptionError,
    describe,
)
from paimon_pyspark.fs.file_io import FileIO
from paimon_pyspark.fs.options import SINGLE_WRITER
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.snapshot import Snapshot
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.file_store import BRANCH_OPTION
from paimon_pyspark.store.managers import SnapshotManager
from paimon_pyspark.store.schema_change import SchemaChange
from paimon_pyspark.store.snapshot_commit import SnapshotCommit
from paimon_pyspark.table.file_store_table import FileStoreTable
from paimon_pyspark.table.system_tables import SystemTable, load_system_table
from paimon_pyspark.types.arrow import highest_field_id

Handler = Callable[[BaseException], "BaseException | None"]
"""What replaces an error of one HTTP status (None: the call returns None)."""

TABLE_DEFAULT_PREFIX = "table-default."
"""Catalog options ``table-default.k = v`` become table option ``k`` at CREATE TABLE unless
the schema sets it (Java's CatalogUtils.tableDefaultOptions, applied by RESTCatalog)."""


class RestCatalog(Catalog):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.options = {str(k): str(v) for k, v in options.items() if v is not None}
        self.options["metastore"] = "rest"
        uri = self.options.get(api.URI, "")
        provider = self.options.get(api.TOKEN_PROVIDER, "").strip()
        if not provider:
            raise OptionError(
                f"REST catalog '{uri}': option '{api.TOKEN_PROVIDER}' is not set (Java's "
                "RESTCatalog requires it; 'bear' sends option 'token' as a bearer token)."
            )
        if provider.lower() != "bear":
            raise UnsupportedOptionError(
                f"REST catalog '{uri}': option '{api.TOKEN_PROVIDER}' = '{provider}' is not "
                "supported; paimon_pyspark has 'bear' (Java's 'dlf' signs requests for Alibaba "
                "Cloud DLF and is not implemented)."
            )
        token = self.options.get(api.TOKEN, "")
        headers = _headers(self.options)
        headers[api.AUTHORIZATION_HEADER] = api.BEARER_PREFIX + token
        self.client = HttpClient(uri, headers)
        warehouse = self.options.get(api.WAREHOUSE, "")
        query = {api.WAREHOUSE: api.encode_string(warehouse)} if warehouse.strip() else {}
        config = api.ConfigResponse.from_json(
            self.client.request("GET", api.ResourcePaths.config(), query) or {}
        )
        self.config_options = config.merge(self.options)
        """The client's options under the server's overrides and over its defaults: what the
        tables' FileIO and defaults are built from (Java's ``RESTCatalog.options()``)."""
        self.client.headers.update(_headers(self.config_options))
        self.client.headers[api.AUTHORIZATION_HEADER] = api.BEARER_PREFIX + token
        self.paths = api.ResourcePaths(self.config_options.get(api.PREFIX))
        self.uri = self.config_options.get(api.WAREHOUSE, warehouse)
        """The warehouse option after the merge with the server's config (Java's
        ``options().get("warehouse")``): the client's, unless the server overrides it."""
        self.warehouse = self.uri
        self._server_warehouse = config.overrides.get(api.WAREHOUSE) or config.defaults.get(
            api.WAREHOUSE
        )
        self._file_io: FileIO | None = None

    @property
    def file_io(self) -> FileIO:
        """The warehouse's store, only when the server's config names the warehouse (in its
        defaults or overrides) as a path or URI: the client cannot know where a warehouse it
        only names lies. Tables need none of it: each opens its own FileIO at the path the
        server gives (:meth:`get_table`)."""
        if self._file_io is None:
            where = self._server_warehouse
            if not where or ("/" not in where and ":" not in where):
                raise UnsupportedOperationError(
                    f"REST catalog {self.client.uri}: the server's config does not say where "
                    f"warehouse '{self.uri}' is; open a table (get_table) to reach its files."
                )
            self._file_io, _ = FileIO.for_uri(where, self._fs_options({}))
        return self._file_io

    @file_io.setter
    def file_io(self, value: FileIO) -> None:
        self._file_io = value

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RestCatalog:
        return self

    def __repr__(self) -> str:
        return f"RestCatalog({self.client.uri}, warehouse={self.uri!r})"

    # --- helpers -----------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        body: Any = None,
        query: Mapping[str, str] | None = None,
        on: Mapping[int, Handler] | None = None,
    ) -> Any:
        """One request; an error whose HTTP ``status`` is in ``on`` is replaced by what its
        handler returns (None: swallowed, the call returns None; the error itself: raised
        as it is), as RESTCatalog catches per call."""
        payload = body.to_json() if hasattr(body, "to_json") else body
        try:
            return self.client.request(method, path, query, payload)
        except PaimonError as e:
            handler = (on or {}).get(getattr(e, "status", 0) or 0)
            if handler is None:
                raise
            replaced = handler(e)
            if replaced is None:
                return None
            if replaced is e:
                raise
            raise replaced from e

    def _paged(self, path: str, key: str, query: Mapping[str, str] | None = None) -> list[Any]:
        """Every page of a listing (RESTApi.listDataFromPageApi): follow ``nextPageToken``
        until it is null or a page is empty."""
        out: list[Any] = []
        params = dict(query or {})
        while True:
            page = self.client.request("GET", path, params) or {}
            items = page.get(key) or []
            out.extend(items)
            token = page.get("nextPageToken")
            if not token or not items:
                return out
            params[api.PAGE_TOKEN] = str(token)

    def _fs_options(self, table_options: Mapping[str, str]) -> dict[str, str]:
        """A table's FileIO options: the merged catalog options, the table's, and
        ``fs.single-writer = true``: the server publishes every snapshot, so the client never
        needs the store's create-if-absent (a plain mount or HDFS is safe)."""
        return {**self.config_options, **table_options, SINGLE_WRITER: "true"}

    # --- databases ---------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return [str(d) for d in self._paged(self.paths.databases(), "databases")]

    def create_database(
        self, name: str, ignore_if_exists: bool = False, properties: Mapping[str, str] | None = None
    ) -> None:
        check_database_name(name)
        request = api.CreateDatabaseRequest(
            name, {str(k): str(v) for k, v in (properties or {}).items()}
        )

        def exists(e: BaseException) -> BaseException | None:
            return None if ignore_if_exists else DatabaseAlreadyExistError(name)

        self._call(
            "POST",
            self.paths.databases(),
            request,
            on={409: exists},
        )

    def get_database(self, name: str) -> dict[str, Any]:
        """``name``, ``location`` (the server's URI of its directory) and ``options``."""
        check_database_name(name)
        raw = self._call("GET", self.paths.database(name), on={404: _not_found_db(name)})
        response = api.GetDatabaseResponse.from_json(raw or {"name": name})
        return {"name": name, "location": response.location, "options": response.options}

    def drop_database(
        self, name: str, ignore_if_not_exists: bool = False, cascade: bool = False
    ) -> None:
        check_database_name(name)
        try:
            if not cascade and self.list_tables(name):
                raise CatalogError(f"Database '{name}' is not empty; drop it with cascade=True.")
            self._call("DELETE", self.paths.database(name), on={404: _not_found_db(name)})
        except DatabaseNotExistError:
            if not ignore_if_not_exists:
                raise

    # --- tables ------------------------------------------------------------------------------

    def list_tables(self, database_name: str) -> list[str]:
        check_database_name(database_name)
        try:
            return [str(t) for t in self._paged(self.paths.tables(database_name), "tables")]
        except CatalogError as e:
            if getattr(e, "status", None) == 404:
                raise DatabaseNotExistError(database_name) from e
            raise

    def table_path(self, identifier: str | tuple[str, str]) -> str:
        """The table's directory as the server names it (a URI: ``file:/...``,
        ``s3://...``)."""
        db, name = parse_identifier(identifier)
        return self._get_table_response(db, name, None).path

    def _get_table_response(self, db: str, name: str, branch: str | None) -> api.GetTableResponse:
        full = f"{db}.{api.object_name(name, branch)}"
        raw = self._call(
            "GET",
            self.paths.table(db, api.object_name(name, branch)),
            on={404: _not_found_table(full, branch)},
        )
        return api.GetTableResponse.from_json(raw)

    def create_table(
        self, identifier: str | tuple[str, str], schema: Schema, ignore_if_exists: bool = False
    ) -> None:
        """Validated here as CREATE TABLE checks it (the same typed errors as the filesystem
        catalog), then created by the server: ``POST .../tables`` with Java's Schema JSON,
        ``table-default.*`` catalog options filled in as Java's client does."""
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"
        if not isinstance(schema, Schema):
            raise InvalidArgumentError(
                f"create_table('{full}'): schema must be a paimon_pyspark Schema (see "
                f"Schema.from_pyarrow_schema), got {describe(schema)}."
            )
        if "path" in schema.options:
            raise CatalogError(f"Table '{full}': the 'path' option cannot be set by the user.")
        options = dict(schema.options)
        for key, value in self.config_options.items():
            if key.startswith(TABLE_DEFAULT_PREFIX):
                options.setdefault(key[len(TABLE_DEFAULT_PREFIX) :], value)
        to_send = Schema(
            fields=list(schema.fields),
            partition_keys=list(schema.partition_keys),
            primary_keys=list(schema.primary_keys),
            options=options,
            comment=schema.comment,
        )
        to_send.to_table_schema(0, 0, full)  # Java's checks, before the server's

        def exists(e: BaseException) -> BaseException | None:
            return None if ignore_if_exists else TableAlreadyExistError(full)

        def missing(e: BaseException) -> BaseException | None:
            return DatabaseNotExistError(db) if getattr(e, "status", None) == 404 else e

        self._call(
            "POST",
            self.paths.tables(db),
            api.CreateTableRequest(db, name, to_send),
            on={409: exists, 404: missing},
        )

    def get_table(self, identifier: str | tuple[str, str]) -> FileStoreTable:
        """The table at the path the server names, its commits made by the server
        (:class:`RestSnapshotCommit`); ``'db.t$branch_b'`` is branch ``b`` (the server's
        schema of the branch), ``'db.t$snapshots'`` a system table, as the filesystem
        catalog has them."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is not None:
            return cast(FileStoreTable, self.get_system_table(identifier))
        response = self._get_table_response(db, name, branch)
        full = f"{db}.{name}"
        fields = tuple(response.schema.fields)
        schema = TableSchema(
            id=response.schema_id,
            fields=fields,
            highest_field_id=highest_field_id(fields),
            partition_keys=tuple(response.schema.partition_keys),
            primary_keys=tuple(response.schema.primary_keys),
            options=dict(response.schema.options),
            comment=response.schema.comment,
        )
        file_io, path = FileIO.for_uri(response.path, self._fs_options(schema.options))
        commit = RestSnapshotCommit(self, db, name, response.id)
        if branch is None or branch.lower() == "main":
            return FileStoreTable(file_io, path, full, schema, None, commit)
        return FileStoreTable(
            file_io, path, f"{full}$branch_{branch}", schema, {BRANCH_OPTION: branch}, commit
        )

    def get_system_table(self, identifier: str | tuple[str, str]) -> SystemTable:
        db, name, branch, system = parse_table_identifier(identifier)
        if system is None:
            raise IdentifierError(
                f"Table '{db}.{name}' is not a system table name; a system table is "
                f"'{db}.{name}$<system table>', e.g. '{db}.{name}$snapshots'."
            )
        data = f"{db}.{name}" + (f"$branch_{branch}" if branch is not None else "")
        return load_system_table(self.get_table(data).store, system)

    def load_snapshot(self, identifier: str | tuple[str, str]) -> Snapshot | None:
        """The table's latest snapshot as the server has it (``GET .../snapshot``, Java's
        ``Catalog.loadSnapshot``); None when it has none."""
        db, name, branch, _ = parse_table_identifier(identifier)
        full = f"{db}.{api.object_name(name, branch)}"

        def missing(e: BaseException) -> BaseException | None:
            if getattr(e, "status", None) != 404:
                return e
            return (
                None
                if _resource_type(e) == api.RESOURCE_TYPE_SNAPSHOT
                else (TableNotExistError(full))
            )

        raw = self._call(
            "GET",
            self.paths.table_snapshot(db, api.object_name(name, branch)),
            on={404: missing},
        )
        if not raw:
            return None
        inner = raw.get("snapshot") or {}
        if "snapshot" in inner and isinstance(inner["snapshot"], dict):
            inner = inner["snapshot"]
        return Snapshot.from_json(json.dumps(inner), f"of table '{full}' from the server")

    def alter_table(
        self,
        identifier: str | tuple[str, str],
        changes: Sequence[SchemaChange],
        ignore_if_not_exists: bool = False,
    ) -> None:
        """``POST .../tables/<t>`` with the changes as Java's SchemaChange JSON; the server
        applies them (Java's rules) as one new schema. ``'db.t$branch_b'`` alters branch
        ``b``. A missing column raises ColumnNotExistError, an existing one
        ColumnAlreadyExistError, a change the server refuses InvalidArgumentError."""
        db, name, branch, system = parse_table_identifier(identifier)
        if system is not None:
            raise IdentifierError(
                f"Cannot 'alterTable' for system table '{db}.{name}${system}', please use data "
                "table."
            )
        full = f"{db}.{api.object_name(name, branch)}"
        check_schema_changes(full, changes)

        def missing(e: BaseException) -> BaseException | None:
            if getattr(e, "status", None) != 404:
                return e
            kind, resource = _resource_type(e), _resource_name(e)
            if kind == api.RESOURCE_TYPE_COLUMN:
                return ColumnNotExistError(resource, full)
            if kind == api.RESOURCE_TYPE_BRANCH and branch is not None:
                return BranchNotExistError(branch, f"{db}.{name}")
            return None if ignore_if_not_exists else TableNotExistError(full)

        def exists(e: BaseException) -> BaseException | None:
            if getattr(e, "status", None) != 409:
                return e
            return ColumnAlreadyExistError(_resource_name(e), full)

        self._call(
            "POST",
            self.paths.table(db, api.object_name(name, branch)),
            api.AlterTableRequest(list(changes)),
            on={409: exists, 404: missing},
        )

    def rename_table(
        self,
        source_identifier: str | tuple[str, str],
        target_identifier: str | tuple[str, str],
        ignore_if_not_exists: bool = False,
    ) -> None:
        for ident in (source_identifier, target_identifier):
            db, name, system = parse_system_identifier(ident)
            if system is not None:
                raise IdentifierError(
                    f"Cannot 'renameTable' for system table '{db}.{name}${system}', please use "
                    "data table."
                )
        source = parse_identifier(source_identifier)
        target = parse_identifier(target_identifier)

        def missing(e: BaseException) -> BaseException | None:
            if getattr(e, "status", None) != 404:
                return e
            if _resource_type(e) == api.RESOURCE_TYPE_DATABASE:
                return DatabaseNotExistError(_resource_name(e))
            return None if ignore_if_not_exists else TableNotExistError(".".join(source))

        self._call(
            "POST",
            self.paths.rename_table(),
            api.RenameTableRequest(source, target),
            on={409: lambda e: TableAlreadyExistError(".".join(target)), 404: missing},
        )

    def drop_table(
        self, identifier: str | tuple[str, str], ignore_if_not_exists: bool = False
    ) -> None:
        """``DELETE .../tables/<t>``: the server drops the table and its files."""
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"

        def missing(e: BaseException) -> BaseException | None:
            if getattr(e, "status", None) != 404:
                return e
            return None if ignore_if_not_exists else TableNotExistError(full)

        self._call("DELETE", self.paths.table(db, name), on={404: missing})

    # --- partitions --------------------------------------------------------------------------

    def list_partitions_paged(
        self,
        identifier: str | tuple[str, str],
        max_results: int | None = None,
        page_token: str | None = None,
        partition_name_pattern: str | None = None,
    ) -> PagedList[Partition]:
        """``GET .../partitions`` (one page); when the server does not serve it (501), the
        partitions of the table's files, as Java's RESTCatalog falls back."""
        db, name, branch, _ = parse_table_identifier(identifier)
        full = f"{db}.{api.object_name(name, branch)}"
        query: dict[str, str] = {}
        if max_results is not None and not isinstance(max_results, bool) and max_results > 0:
            query[api.MAX_RESULTS] = str(max_results)
        if page_token is not None:
            query[api.PAGE_TOKEN] = str(page_token)
        if partition_name_pattern:
            query[api.PARTITION_NAME_PATTERN] = partition_name_pattern
        try:
            raw = self._call(
                "GET",
                self.paths.partitions(db, api.object_name(name, branch)),
                query=query,
                on={404: _not_found_table(full, branch)},
            )
        except UnsupportedOperationError:
            table = self.get_table(identifier)
            return page_partitions(
                list_partitions(table.store),
                max_results,
                page_token,
                partition_name_pattern,
                table.name,
            )
        raw = raw or {}
        partitions = [
            Partition(
                spec={str(k): str(v) for k, v in (p.get("spec") or {}).items()},
                record_count=int(p.get("recordCount") or 0),
                file_size_in_bytes=int(p.get("fileSizeInBytes") or 0),
                file_count=int(p.get("fileCount") or 0),
                last_file_creation_time=int(p.get("lastFileCreationTime") or 0),
                total_buckets=int(p.get("totalBuckets") or 0),
                done=bool(p.get("done")),
            )
            for p in raw.get("partitions") or []
        ]
        return PagedList(partitions, raw.get("nextPageToken"))

    def create_partitions(
        self,
        identifier: str | tuple[str, str],
        partitions: list[dict[str, Any]],
        ignore_if_exists: bool = True,
    ) -> None:
        """Checks the table and the specs, and does nothing else: Java's RESTCatalog has no
        partition metadata to create (``supportsPartitionModification`` false)."""
        table = self.get_table(identifier)
        partitions_filter(table.store, partitions, "create_partitions(identifier, partitions)")

    def drop_partitions(
        self, identifier: str | tuple[str, str], partitions: list[dict[str, Any]]
    ) -> None:
        """Delete every row of the matching partitions in one OVERWRITE snapshot, committed
        through the server."""
        table = self.get_table(identifier)
        commit = table.new_batch_write_builder().new_commit()
        try:
            commit.truncate_partitions(partitions)
        finally:
            commit.close()

    # --- branches (Java's RESTApi calls; a server without them answers 501) ------------------

    def _branch_call(
        self,
        call: str,
        identifier: str | tuple[str, str],
        method: str,
        path: Callable[[str, str], str],
        body: Any = None,
        branch: str | None = None,
        target: str | None = None,
        tag: str | None = None,
    ) -> Any:
        db, name = parse_identifier(identifier)
        full = f"{db}.{name}"

        def missing(e: BaseException) -> BaseException | None:
            status = getattr(e, "status", None)
            if isinstance(e, UnsupportedOperationError):
                return UnsupportedOperationError(
                    f"{call}('{full}'): the REST server {self.client.uri} does not serve "
                    f"branches ({e})."
                )
            if status == 404:
                kind = _resource_type(e)
                if kind == api.RESOURCE_TYPE_TAG and tag is not None:
                    return TagNotExistError(tag, full)
                if branch is not None:  # drop, rename, forward: as Java, whatever is missing
                    return BranchNotExistError(branch, full)
                return TableNotExistError(full)
            if status == 409:
                return BranchAlreadyExistError(target or branch or _resource_name(e), full)
            return e

        return self._call(
            method,
            path(db, name),
            body,
            on={404: missing, 409: missing, 501: missing},
        )

    def create_branch(
        self, identifier: str | tuple[str, str], branch_name: str, tag_name: str | None = None
    ) -> None:
        self._branch_call(
            "create_branch",
            identifier,
            "POST",
            self.paths.branches,
            api.CreateBranchRequest(branch_name, tag_name),
            target=branch_name,
            tag=tag_name,
        )

    def drop_branch(self, identifier: str | tuple[str, str], branch_name: str) -> None:
        self._branch_call(
            "drop_branch",
            identifier,
            "DELETE",
            lambda db, t: self.paths.branch(db, t, branch_name),
            branch=branch_name,
        )

    def rename_branch(
        self, identifier: str | tuple[str, str], from_branch: str, to_branch: str
    ) -> None:
        self._branch_call(
            "rename_branch",
            identifier,
            "POST",
            lambda db, t: self.paths.rename_branch(db, t, from_branch),
            api.RenameBranchRequest(to_branch),
            branch=from_branch,
            target=to_branch,
        )

    def fast_forward(self, identifier: str | tuple[str, str], branch_name: str) -> None:
        self._branch_call(
            "fast_forward",
            identifier,
            "POST",
            lambda db, t: self.paths.forward_branch(db, t, branch_name),
            {},
            branch=branch_name,
        )

    def list_branches(self, identifier: str | tuple[str, str]) -> list[str]:
        raw = self._branch_call("list_branches", identifier, "GET", self.paths.branches)
        return sorted(str(b) for b in (raw or {}).get("branches") or [])


class RestSnapshotCommit(SnapshotCommit):
    """Commits through the server: Java's CatalogSnapshotCommit calling RESTCatalog's
    ``commitSnapshot``. ``POST .../tables/<t>[$branch_b]/commit`` with the table's id and
    the snapshot's JSON; the answer's ``success`` is the publish result (False: another
    writer took the id, and the commit tries again on the new latest snapshot). A lost
    connection or a 5xx answer raises CatalogConnectionError, an OSError: the outcome is
    unknown, and the commit looks for its snapshot before it tries again.
    ``statistics`` is sent empty, as Java sends it for a compaction: the partitions' totals
    are in the manifests the server can read."""

    def __init__(self, catalog: RestCatalog, database: str, table: str, table_id: str | None):
        self.catalog = catalog
        self.database = database
        self.table = table
        self.table_id = table_id

    def commit(self, snapshots: SnapshotManager, snapshot: Snapshot, branch: str) -> bool:
        name = api.object_name(self.table, branch)
        full = f"{self.database}.{name}"
        request = api.CommitTableRequest(self.table_id, json.loads(snapshot.to_json()), [])

        def missing(e: BaseException) -> BaseException | None:
            status = getattr(e, "status", None) or 0
            if status == 404:
                return TableNotExistError(full, f"(commit of snapshot {snapshot.id}: {e})")
            if status >= 500 and status != 501:
                # the server (or a gateway) failed mid-request: it may have published
                return CatalogConnectionError(
                    f"Table '{full}': the commit of snapshot {snapshot.id} got {e}; the "
                    "outcome is unknown."
                )
            return e

        raw = self.catalog._call(
            "POST",
            self.catalog.paths.commit_table(self.database, name),
            request,
            on={status: missing for status in (404, 500, 502, 503, 504)},
        )
        if not isinstance(raw, dict) or "success" not in raw:
            raise RestCatalogError(
                f"REST catalog {self.catalog.client.uri}: the commit of snapshot {snapshot.id} "
                f"to '{full}' was answered without 'success': {raw!r}"
            )
        return bool(raw["success"])


def _headers(options: Mapping[str, str]) -> dict[str, str]:
    """``header.X = v`` options as headers (Java's RESTApi.HEADER_PREFIX)."""
    return {
        k[len(api.HEADER_PREFIX) :]: v
        for k, v in options.items()
        if k.startswith(api.HEADER_PREFIX) and len(k) > len(api.HEADER_PREFIX)
    }


def _resource_type(e: BaseException) -> str | None:
    return cast(str | None, getattr(e, "resource_type", None))


def _resource_name(e: BaseException) -> str:
    return str(getattr(e, "resource_name", None) or "")


def _not_found_db(name: str) -> Callable[[BaseException], BaseException | None]:
    def handle(e: BaseException) -> BaseException | None:
        return DatabaseNotExistError(name) if getattr(e, "status", None) == 404 else e

    return handle


def _not_found_table(
    full: str, branch: str | None
) -> Callable[[BaseException], BaseException | None]:
    def handle(e: BaseException) -> BaseException | None:
        if getattr(e, "status", None) != 404:
            return e
        if branch is not None and _resource_type(e) == api.RESOURCE_TYPE_BRANCH:
            return BranchNotExistError(branch, full.split("$", 1)[0])
        if _resource_type(e) == api.RESOURCE_TYPE_DATABASE:
            return DatabaseNotExistError(_resource_name(e) or full.split(".", 1)[0])
        return TableNotExistError(full)

    return handle
