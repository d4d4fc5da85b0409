"""Our REST catalog server over plain HTTP: who is refused, and what a refusal leaves in the log.

The server runs as a real process (tests/catalogs/rest_server.py); requests are http.client's,
in Java 1.4.2's wire format (paimon-api org.apache.paimon.rest).
"""

from __future__ import annotations

import json
import sys
import urllib.parse
from pathlib import Path

import pytest
from tests.catalogs.rest_server import RestServer, running_rest_server
from tests.s3_server import S3Server

from paimon_pyspark.cli import main

P = "/v1/paimon"


def _schema(options: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "fields": [
            {"id": 0, "name": "id", "type": "BIGINT NOT NULL"},
            {"id": 1, "name": "name", "type": "STRING"},
        ],
        "partitionKeys": [],
        "primaryKeys": ["id"],
        "options": {"bucket": "1", **(options or {})},
        "comment": None,
    }


def _snapshot(snapshot_id: int, user: str) -> dict[str, object]:
    """A snapshot's JSON as clients post it (its manifest lists need not exist to publish)."""
    return {
        "version": 3,
        "id": snapshot_id,
        "schemaId": 0,
        "baseManifestList": "manifest-list-a-0",
        "deltaManifestList": "manifest-list-a-1",
        "commitUser": user,
        "commitIdentifier": 7,
        "commitKind": "APPEND",
        "timeMillis": 1,
        "totalRecordCount": 0,
        "deltaRecordCount": 0,
    }


def _json(raw: bytes) -> dict[str, object]:
    value = json.loads(raw)
    assert isinstance(value, dict)
    return value


def _refused_in_log(server: RestServer, method: str, path: str, status: int) -> str:
    lines = [
        line
        for line in server.log().splitlines()
        if f"refused {method} {path} from 127.0.0.1:" in line and f": {status} " in line
    ]
    assert lines, f"no refusal of {method} {path} in the log:\n{server.log()}"
    assert server.token not in server.log()
    return lines[-1]


def test_config_answers_its_own_warehouse_only(rest_server: RestServer) -> None:
    # Java's client and pypaimon encode the warehouse twice
    own = urllib.parse.quote(urllib.parse.quote(rest_server.warehouse, safe=""), safe="")
    for query in (
        "",
        "?warehouse=" + own,
        "?warehouse=" + urllib.parse.quote("file:" + rest_server.warehouse),
    ):
        status, body = rest_server.request("GET", "/v1/config" + query)
        assert status == 200, query
        config = _json(body)
        assert config["defaults"] == {"prefix": "paimon"}
        assert config["overrides"] == {}
    status, body = rest_server.request("GET", "/v1/config?warehouse=%252Fother")
    message = str(_json(body)["message"])
    assert status == 404 and rest_server.warehouse in message and "'/other'" in message
    assert "serves warehouse" in _refused_in_log(
        rest_server, "GET", "/v1/config?warehouse=%252Fother", 404
    )


def test_no_token_and_a_wrong_token_are_refused_and_logged(rest_server: RestServer) -> None:
    for token, reason in ((None, "no Authorization header"), ("guess", "unknown bearer token")):
        for method, path in (("GET", "/v1/config"), ("GET", f"{P}/databases")):
            status, body = rest_server.request(method, path, token=token)
            assert status == 401
            error = _json(body)
            assert error["code"] == 401 and reason.lower() in str(error["message"]).lower()
            assert reason in _refused_in_log(rest_server, method, path, 401)
    # an unknown endpoint is no way around the check
    status, _ = rest_server.request("GET", "/v2/anything", token="guess")
    assert status == 401
    _refused_in_log(rest_server, "GET", "/v2/anything", 401)
    # nothing was created by the refused requests
    status, body = rest_server.request("GET", f"{P}/databases")
    assert status == 200 and _json(body)["databases"] == []


def test_tokens_are_read_again_when_the_file_changes(rest_server: RestServer) -> None:
    token_file = Path(rest_server.log_path).parent / "tokens"
    original = token_file.read_text(encoding="utf-8")
    try:
        token_file.write_text(original + "# added\nsecond-token\n", encoding="utf-8")
        assert rest_server.request("GET", "/v1/config", token="second-token")[0] == 200
        assert rest_server.request("GET", "/v1/config")[0] == 200
    finally:
        token_file.write_text(original, encoding="utf-8")  # another size: seen as changed
    assert rest_server.request("GET", "/v1/config", token="second-token")[0] == 401
    assert rest_server.request("GET", "/v1/config")[0] == 200


def test_paths_outside_the_warehouse_are_refused_and_logged(rest_server: RestServer) -> None:
    status, _ = rest_server.request("POST", f"{P}/databases", json.dumps({"name": "inside"}))
    assert status == 200
    create_outside = [
        ("POST", f"{P}/databases", {"name": ".."}),
        ("POST", f"{P}/databases", {"name": "../escape"}),
        ("POST", f"{P}/databases", {"name": "/tmp/abs"}),
        (
            "POST",
            f"{P}/databases/inside/tables",
            {"identifier": {"database": "inside", "object": "../../t"}, "schema": _schema()},
        ),
        (
            "POST",
            f"{P}/databases/inside/tables",
            {
                "identifier": {"database": "inside", "object": "ext"},
                "schema": _schema({"path": "/tmp/elsewhere"}),
            },
        ),
        (
            "POST",
            f"{P}/databases/inside/tables/t",
            {"changes": [{"action": "setOption", "key": "path", "value": "/tmp/elsewhere"}]},
        ),
        (
            "POST",
            f"{P}/tables/rename",
            {
                "source": {"database": "inside", "object": "t"},
                "destination": {"database": "..", "object": "t"},
            },
        ),
    ]
    for method, path, body in create_outside:
        status, raw = rest_server.request(method, path, json.dumps(body))
        assert status == 403, (path, body, raw)
        assert _json(raw)["code"] == 403
        _refused_in_log(rest_server, method, path, 403)
    for path in (
        f"{P}/databases/..",
        f"{P}/databases/..%2F..%2Fetc",
        f"{P}/databases/inside/tables/..%2F..%2Fx",
        f"{P}/databases/inside/tables/..%2Fx/snapshot",
        f"{P}/databases/..%2Fx/tables/t/commit",
    ):
        method = "POST" if path.endswith("/commit") else "GET"
        status, raw = rest_server.request(method, path, "{}" if method == "POST" else None)
        assert status == 403, (path, raw)
        _refused_in_log(rest_server, method, path, 403)
    status, raw = rest_server.request("GET", f"{P}/databases")
    assert _json(raw)["databases"] == ["inside"]


def test_a_commit_of_a_taken_id_answers_false(rest_server: RestServer) -> None:
    assert rest_server.request("POST", f"{P}/databases", json.dumps({"name": "c"}))[0] == 200
    create = {"identifier": {"database": "c", "object": "t"}, "schema": _schema()}
    assert rest_server.request("POST", f"{P}/databases/c/tables", json.dumps(create))[0] == 200
    status, raw = rest_server.request("GET", f"{P}/databases/c/tables/t")
    assert status == 200
    table = _json(raw)
    assert table["schemaId"] == 0 and table["isExternal"] is False
    assert str(table["path"]).endswith("/c.db/t")
    status, raw = rest_server.request("GET", f"{P}/databases/c/tables/t/snapshot")
    assert status == 404 and _json(raw)["resourceType"] == "SNAPSHOT"
    snapshot = _snapshot(1, "user-a")
    commit = {"tableId": table["id"], "snapshot": snapshot, "statistics": []}
    path = f"{P}/databases/c/tables/t/commit"
    status, raw = rest_server.request("POST", path, json.dumps(commit))
    assert (status, _json(raw)) == (200, {"success": True})
    other = {**commit, "snapshot": {**snapshot, "commitUser": "user-b"}}
    status, raw = rest_server.request("POST", path, json.dumps(other))
    assert (status, _json(raw)) == (200, {"success": False})
    status, raw = rest_server.request("GET", f"{P}/databases/c/tables/t/snapshot")
    assert status == 200
    # GetTableSnapshotResponse wraps Java's TableSnapshot: the snapshot and its totals
    latest = _json(raw)["snapshot"]
    assert isinstance(latest, dict) and set(latest) >= {"snapshot", "recordCount", "fileCount"}
    assert latest["snapshot"]["commitUser"] == "user-a"
    assert "commit c.t snapshot 1 (APPEND, user user-b): id taken" in rest_server.log()
    # a snapshot naming a manifest list outside the table's manifest directory
    escape = {**commit, "snapshot": {**snapshot, "id": 2, "baseManifestList": "../../../x"}}
    status, raw = rest_server.request("POST", path, json.dumps(escape))
    assert status == 403, raw
    assert "baseManifestList '../../../x'" in _refused_in_log(rest_server, "POST", path, 403)
    # a commit naming another table id (dropped and created again) is refused as Java's server
    status, raw = rest_server.request("POST", path, json.dumps({**commit, "tableId": "x"}))
    assert status == 404 and _json(raw)["resourceType"] == "TABLE"


def test_an_s3_warehouse(
    s3_server: S3Server, s3_bucket: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """On S3 the server hands out ``s3://`` paths and the store's options, and commits with the
    store's conditional create."""
    args: list[str] = []
    for key, value in s3_server.options().items():
        args += ["--catalog-option", f"{key}={value}", "--client-option", f"{key}={value}"]
    base = tmp_path_factory.mktemp("rest-s3")
    with running_rest_server(base, f"s3://{s3_bucket}/wh", args) as server:
        status, raw = server.request("GET", "/v1/config")
        defaults = _json(raw)["defaults"]
        assert status == 200
        assert isinstance(defaults, dict) and defaults["s3.endpoint"] == s3_server.endpoint
        assert server.request("POST", f"{P}/databases", json.dumps({"name": "d"}))[0] == 200
        create = {"identifier": {"database": "d", "object": "t"}, "schema": _schema()}
        assert server.request("POST", f"{P}/databases/d/tables", json.dumps(create))[0] == 200
        table = _json(server.request("GET", f"{P}/databases/d/tables/t")[1])
        assert table["path"] == f"s3://{s3_bucket}/wh/d.db/t"
        commit = {"tableId": table["id"], "snapshot": _snapshot(1, "u"), "statistics": []}
        path = f"{P}/databases/d/tables/t/commit"
        answers = [_json(server.request("POST", path, json.dumps(commit))[1]) for _ in range(2)]
        assert answers == [{"success": True}, {"success": False}]
        assert "wh/d.db/t/snapshot/snapshot-1" in s3_server.list_keys(s3_bucket)


def test_without_the_rest_extra_the_command_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "starlette", None)  # as if the extra were not installed
    argv = ["rest-server", "--warehouse", "w", "--port", "0", "--token-file", "t"]
    assert main(argv) == 2
    assert "pip install 'paimon-pyspark[rest]'" in capsys.readouterr().err
