"""docs/procedures.md against the code: Java 1.4.2's 37 Spark procedures and 17 Flink-only ones
are each listed once; every one marked here is registered for ``CALL`` (spark/sql.py), has its
CLI command (cli/procedures.py), its Python function and the Spark job twin the page names;
every registered procedure and command is on the page; the totals it states are its rows'."""

from __future__ import annotations

import re
from pathlib import Path

import paimon_pyspark.procedures as procedures
import paimon_pyspark.spark.procedures as spark_procedures
from paimon_pyspark.cli.procedures import COMMANDS
from paimon_pyspark.spark.sql import _PROCEDURES

DOC = Path(__file__).resolve().parents[2] / "docs" / "procedures.md"

# SparkProcedures.java of Java Paimon 1.4.2
JAVA_SPARK = {
    "alter_function", "alter_view_dialect", "clear_consumers", "compact", "compact_database",
    "compact_manifest", "copy", "create_branch", "create_function", "create_global_index",
    "create_tag", "create_tag_from_timestamp", "delete_branch", "delete_tag", "drop_function",
    "drop_global_index", "expire_partitions", "expire_snapshots", "expire_tags", "fast_forward",
    "mark_partition_done", "migrate_database", "migrate_table", "purge_files",
    "remove_orphan_files", "remove_unexisting_files", "rename_branch", "rename_tag", "repair",
    "replace_tag", "rescale", "reset_consumer", "rewrite_file_index", "rollback",
    "rollback_to_timestamp", "rollback_to_watermark", "trigger_tag_automatic_creation",
}  # fmt: skip
# the identifiers of paimon-flink-common's procedures that Spark's list lacks
JAVA_FLINK_ONLY = {
    "alter_column_default_value", "clone", "copy_files", "create_privileged_user",
    "create_tag_from_watermark", "data_evolution_merge_into", "drop_partition",
    "drop_privileged_user", "expire_changelogs", "grant_privilege_to_user",
    "init_file_based_privilege", "merge_into", "query_service", "remove_unexisting_manifests",
    "revoke_privilege_from_user", "rollback_to", "vector_search",
}  # fmt: skip

_ROW = re.compile(r"^\| `(\w+)` \| (yes|no) \| ([^|]*) \| ([^|]*) \| ([^|]*) \| ([^|]*) \|$")


def _sections() -> dict[str, list[tuple[str, ...]]]:
    out: dict[str, list[tuple[str, ...]]] = {}
    section = ""
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            section = line[3:]
        m = _ROW.match(line)
        if m:
            out.setdefault(section, []).append(tuple(g.strip() for g in m.groups()))
    return out


def _code(cell: str) -> str | None:
    return None if cell == "—" else cell.strip("`")


def test_java_lists_each_once() -> None:
    assert len(JAVA_SPARK) == 37 and len(JAVA_FLINK_ONLY) == 17
    sections = _sections()
    spark = [r[0] for r in sections["Java's 37 Spark procedures"]]
    flink = [r[0] for r in sections["Flink's 17 procedures that Spark lacks"]]
    assert sorted(spark) == sorted(JAVA_SPARK) and len(spark) == 37
    assert sorted(flink) == sorted(JAVA_FLINK_ONLY) and len(flink) == 17


def test_the_page_is_the_registry() -> None:
    rows = [r for rows in _sections().values() for r in rows]
    here = {r[0]: r for r in rows if r[1] == "yes"}
    assert set(here) == set(_PROCEDURES)
    commands = {c.sql_name: c for c in COMMANDS}
    assert set(commands) == set(_PROCEDURES)
    for name, _, python, twin, cli, _notes in here.values():
        assert _code(python) == f"procedures.{name}", name
        assert callable(getattr(procedures, name)), name
        assert _code(cli) == commands[name].name, name
        assert name in procedures.__all__, name
        twin_name = _code(twin)
        if twin_name is None:
            assert not commands[name].on_spark, f"{name}: its CLI runs a Spark twin the page lacks"
        else:
            assert twin_name == f"spark.procedures.{name}", name
            assert callable(getattr(spark_procedures, name)), name
    for name, status, python, twin, cli, notes in rows:
        if status == "no":
            assert (python, twin, cli) == ("—", "—", "—"), name
            assert ":" in notes, f"{name}: the reason it is not here"


def test_the_totals_are_the_rows() -> None:
    sections = _sections()
    spark_here = sum(r[1] == "yes" for r in sections["Java's 37 Spark procedures"])
    flink_here = [r[0] for r in sections["Flink's 17 procedures that Spark lacks"] if r[1] == "yes"]
    text = DOC.read_text(encoding="utf-8")
    m = re.search(r"of Java's 37 Spark procedures, \*\*(\d+)\*\* are here; of the 17 Flink-only "
                  r"ones, \*\*(\d+)\*\*", text)  # fmt: skip
    assert m is not None
    assert (int(m.group(1)), int(m.group(2))) == (spark_here, len(flink_here))
