"""Every door through a real Spark Connect server (issue 42, item 1): a client process connected
with ``SparkSession.builder.remote`` runs tests/doors_script.py (both write doors, every read
path, a MERGE/INSERT/CALL script through ``sql``, a streaming write and read, procedures as
Spark jobs) without starting a JVM of its own; its rows must be the ones computed in
doors_expected.py, and Java Paimon 1.4.2 must read the tables it left with the same rows."""

from __future__ import annotations

import pytest
from tests.connect.connect_server import DoorsRun
from tests.connect.doors_expected import EXPECTED, JAVA_TABLES, diff
from tests.interop.java_oracle import JavaOracle, sorted_rows

pytestmark = pytest.mark.slow


def test_every_door_through_spark_connect(doors_on_connect: DoorsRun) -> None:
    found = doors_on_connect.results
    assert found["connect"] is True, "the script's session is not a Spark Connect session"
    assert found["datasource_api"] is True
    assert found["jvm_in_process"] is False, "the Connect client started a JVM of its own"
    errors = {name: step["error"] for name, step in found["steps"].items() if "error" in step}
    assert not errors, "\n".join(
        f"{name}: {kind}: {text[:600]}" for name, (kind, text) in errors.items()
    )
    assert diff(found["steps"], EXPECTED) == {}


def test_java_reads_what_the_connect_client_wrote(
    doors_on_connect: DoorsRun, java_oracle: JavaOracle
) -> None:
    read = {
        name: sorted_rows(java_oracle.read_table(doors_on_connect.warehouse, "db", name).rows)
        for name in JAVA_TABLES
    }
    assert read == {name: sorted_rows(rows) for name, rows in JAVA_TABLES.items()}
