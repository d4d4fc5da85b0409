"""The procedure commands take their procedure's own arguments (procedures/calls.py)."""

from __future__ import annotations

import inspect

import pytest
from tests.cli.helpers import orders_table, read_ids, run_error, run_json

from paimon_pyspark import FileSystemCatalog
from paimon_pyspark.cli import _parser
from paimon_pyspark.cli.procedures import COMMANDS, arguments, call_arguments
from paimon_pyspark.procedures import calls


def test_every_command_has_exactly_its_procedures_arguments() -> None:
    for command in COMMANDS:
        params = [
            p
            for p in inspect.signature(command.procedure).parameters
            if p not in ("runner", "catalog", "progress")
        ]
        assert [a.name for a in arguments(command.procedure)] == params, command.name
    # every registered procedure has a command: tests/integration/test_procedures_doc.py
    assert {c.procedure for c in COMMANDS} >= {
        calls.compact,
        calls.rescale,
        calls.expire_snapshots,
        calls.expire_changelogs,
        calls.remove_orphan_files,
        calls.rewrite_file_index,
        calls.create_tag,
        calls.delete_tag,
        calls.rollback,
        calls.reset_consumer,
        calls.clear_consumers,
    }


def test_argument_types_follow_the_procedures_annotations() -> None:
    kinds = {a.name: (a.kind, a.required) for a in arguments(calls.remove_orphan_files)}
    assert kinds == {
        "table": (str, True),
        "older_than": (str, False),
        "dry_run": (bool, False),
        "parallelism": (int, False),
        "mode": (str, False),
    }
    rescale = {a.name: a.kind for a in arguments(calls.rescale)}
    assert rescale["bucket_num"] is int
    # int | str: the procedure parses digits itself, as it does SQL text
    assert {a.name: a.kind for a in arguments(calls.create_tag)}["snapshot_id"] is str


def test_flags_parse_into_call_arguments_in_both_spellings() -> None:
    args = _parser().parse_args(
        [
            "remove-orphan-files",
            "--warehouse",
            "/w",
            "--table",
            "db.*",
            "--dry_run",
            "true",
            "--older-than",
            "2024-01-01 00:00:00",
            "--parallelism",
            "3",
        ]
    )
    command = next(c for c in COMMANDS if c.name == "remove-orphan-files")
    assert call_arguments(args, command) == {
        "table": "db.*",
        "dry_run": True,
        "older_than": "2024-01-01 00:00:00",
        "parallelism": 3,
    }


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["compact", "--warehouse", "/w"], "the following arguments are required: --table"),
        (
            ["remove-orphan-files", "--warehouse", "/w", "--table", "db.t", "--dry_run", "yes"],
            "expected true or false, got 'yes'",
        ),
        (
            ["rescale", "--warehouse", "/w", "--table", "db.t", "--bucket_num", "two"],
            "invalid int value: 'two'",
        ),
        (["create-tag", "--warehouse", "/w", "--table", "db.t"], "required: --tag"),
    ],
)
def test_bad_flags_are_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        _parser().parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


# --- the metadata procedures run in this process -------------------------------------------


def test_expire_snapshots_json_and_its_error(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=4)
    base = ["expire-snapshots", "--warehouse", warehouse, "--table", "db.orders"]
    code, doc, _ = run_json([*base, "--retain_max", "2", "--retain-min", "1"], capsys)
    assert code == 0
    assert doc == {
        "procedure": "expire_snapshots",
        "table": "db.orders",
        "arguments": {"table": "db.orders", "retain_max": 2, "retain_min": 1},
        "result": {"deleted_snapshots_count": 2},
    }
    assert catalog.get_table("db.orders").snapshot_manager.earliest_id() == 3
    assert read_ids(catalog, "db.orders") == list(range(12))

    code, out, line = run_error([*base, "--retain_max", "1", "--retain_min", "2"], capsys)
    assert (code, out) == (2, "")
    assert line == "error: db.orders: retainMax (1) must not be less than retainMin (2)."


def test_tag_commands_json_and_their_errors(
    catalog: FileSystemCatalog, warehouse: str, capsys: pytest.CaptureFixture[str]
) -> None:
    orders_table(catalog, "db.orders", commits=2)
    common = ["--warehouse", warehouse, "--table", "db.orders"]
    code, doc, _ = run_json(["create-tag", *common, "--tag", "v1", "--snapshot_id", "1"], capsys)
    assert (code, doc["result"]) == (0, {"result": True})
    assert catalog.get_table("db.orders").tag_manager().tag_exists("v1")

    code, _, line = run_error(["create-tag", *common, "--tag", "v1"], capsys)
    assert code == 2
    assert line == "error: Table 'db.orders': Tag 'v1' already exists."

    code, doc, _ = run_json(["rollback", *common, "--version", "v1"], capsys)
    assert code == 0
    assert doc["result"] == {"previous_snapshot_id": 2, "current_snapshot_id": 1}
    assert read_ids(catalog, "db.orders") == [0, 1, 2]

    code, _, line = run_error(["rollback", *common, "--version", "v9"], capsys)
    assert code == 2
    assert line == "error: Table 'db.orders': Tag 'v9' doesn't exist."

    code, doc, _ = run_json(["delete-tag", *common, "--tag", "v1"], capsys)
    assert (code, doc["result"]) == (0, {"result": True})
    assert not catalog.get_table("db.orders").tag_manager().tag_exists("v1")

    code, _, line = run_error(
        ["delete-tag", "--warehouse", warehouse, "--table", "db.x", "--tag", "v1"], capsys
    )
    assert code == 2
    assert line == "error: Table 'db.x' does not exist."
