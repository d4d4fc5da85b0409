"""The options ledger (src/paimon_pyspark/options_ledger.py, docs/options.md) gives every key one
status, and the code keeps it: a refused key with a value other than Java's default raises at
create and at load, Java's default (in any spelling Java parses the same) passes.

The key list itself comes from Java in tests/interop/test_options_ledger_java.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_pyspark import CatalogFactory, FileStoreTable, Schema
from paimon_pyspark import options_ledger as ledger
from paimon_pyspark.errors import UnsupportedOptionError
from paimon_pyspark.options import check_supported, is_java_default

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "options.md"
SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), ("v", pa.string())])
REFUSED = sorted(
    e.key
    for e in ledger.LEDGER.values()
    if e.status == ledger.REFUSED and e.key not in ledger.REFUSED_ONLY_BY
)


def non_default(entry: ledger.Entry) -> str:
    """A value of ``entry``'s Java type that is not Java's default."""
    d = entry.default
    if entry.kind == "bool":
        return "false" if d == "true" else "true"
    if entry.kind in ("int", "long"):
        return "7" if d is None else str(int(d) - 1 if int(d) > 0 else int(d) + 1)
    if entry.kind == "double":
        return "0.5" if d is None else str(float(d) + 0.5)
    if entry.kind == "memory":
        return "3 mb"
    if entry.kind == "duration":
        return "7 min"
    if entry.kind == "map":
        return "0:lz4"
    return "other"


def create(warehouse: Path, options: dict[str, str], name: str = "t") -> FileStoreTable:
    catalog = CatalogFactory.create({"warehouse": str(warehouse)})
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(SCHEMA, primary_keys=["id"], options=options)
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def write(table: FileStoreTable, ids: list[int]) -> list[object]:
    builder = table.new_batch_write_builder()
    with builder.new_write() as w:
        w.write_arrow(pa.table({"id": ids, "v": [f"v{i}" for i in ids]}, SCHEMA))
        messages = w.prepare_commit()
    builder.new_commit().commit(messages)
    return list(messages)


# --- the ledger is complete and agrees with docs/options.md -------------------------------------


def test_every_key_has_one_status_a_kind_and_a_note() -> None:
    assert len(ledger.JAVA_KEYS) > 250  # Java 1.4.2 has 283; the Java test checks the exact list
    for e in ledger.LEDGER.values():
        assert e.status in ledger.STATUSES, e
        assert e.kind in ledger.KINDS, e
        assert e.note, e
    assert not set(ledger.JAVA_KEYS) & set(ledger.PYPAIMON_KEYS)
    for rule in ledger.PREFIX_RULES:
        assert rule.status in ledger.STATUSES and rule.note, rule
    assert sum(ledger.counts().values()) == len(ledger.LEDGER)


def test_the_issue_keys_have_the_status_the_issue_gives_them() -> None:
    for key in ("scan.fallback-branch", "scan.primary-branch"):
        assert ledger.LEDGER[key].status == ledger.IMPLEMENTED, key
    assert ledger.LEDGER["partition.expiration-time"].status == ledger.IMPLEMENTED
    assert ledger.LEDGER["tag.automatic-creation"].status == ledger.IMPLEMENTED
    assert ledger.LEDGER["consumer.expiration-time"].status == ledger.IMPLEMENTED
    for key in (
        "postpone.target-row-num-per-bucket",
        "postpone.target-size-per-bucket",
        "postpone.batch-write-fixed-bucket.max-parallelism",
    ):
        assert ledger.LEDGER[key].status != ledger.REFUSED, key


def _doc_rows() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    text = DOC.read_text()
    keys = text.split("## Keys", 1)[1].split("\n## ", 1)[0]
    prefixes = text.split("## Prefixes", 1)[1].split("\n## ", 1)[0]

    def rows(section: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for line in section.splitlines():
            m = re.match(r"^\| `([^`]+)` \|(.*)\|\s*$", line)
            if m:
                assert m.group(1) not in out, f"{m.group(1)} is listed twice in {DOC}"
                out[m.group(1)] = [c.strip() for c in m.group(2).split(" | ")]
        return out

    return rows(keys), rows(prefixes)


def test_docs_options_md_is_the_ledger() -> None:
    """Each row of docs/options.md says what the code's ledger says; when this fails, edit
    both (``options_ledger.markdown()`` prints the code's table)."""
    keys, prefixes = _doc_rows()
    expected: dict[str, list[str]] = {}
    expected_prefixes: dict[str, list[str]] = {}
    for line in ledger.markdown().splitlines():
        m = re.match(r"^\| `([^`]+)` \|(.*)\|\s*$", line)
        if m:
            cells = [c.strip() for c in m.group(2).split(" | ")]
            (expected if len(cells) == 4 else expected_prefixes)[m.group(1)] = cells
    differ = {k: (keys.get(k), v) for k, v in expected.items() if keys.get(k) != v}
    assert not differ, "edit src/paimon_pyspark/options_ledger.py's row too; (doc, code):\n" + (
        "\n".join(f"{k}: {d}" for k, d in differ.items())
    )
    extra = sorted(set(keys) - set(expected))
    assert not extra, f"docs/options.md rows options_ledger.py does not have (add them): {extra}"
    missing = sorted(set(expected) - set(keys))
    assert not missing, f"options_ledger.py keys docs/options.md does not list: {missing}"
    assert prefixes == expected_prefixes, "the prefix table differs from PREFIX_RULES"


def test_implemented_keys_name_tests_that_exist() -> None:
    missing = {}
    for e in ledger.LEDGER.values():
        if e.status != ledger.IMPLEMENTED:
            continue
        tests = e.tests()
        assert tests, f"implemented key {e.key} names no test"
        gone = [t for t in tests if not (ROOT / t).exists() and t not in ledger.PENDING_TESTS]
        if gone:
            missing[e.key] = gone
    for rule in ledger.PREFIX_RULES:
        if rule.status == ledger.IMPLEMENTED:
            assert all(
                (ROOT / t).exists() or t in ledger.PENDING_TESTS
                for t in rule.note.split()
                if t.startswith("tests/")
            )
    assert not missing, missing


# --- refused keys: a non-default value raises, Java's default passes ---------------------------


@pytest.mark.parametrize("key", REFUSED)
def test_a_refused_key_raises_unless_it_holds_javas_default(key: str) -> None:
    entry = ledger.LEDGER[key]
    value = non_default(entry)
    with pytest.raises(UnsupportedOptionError) as info:
        check_supported({key: value}, "db.t")
    assert f"'{key}'" in str(info.value) and "db.t" in str(info.value)
    assert f"'{value}'" in str(info.value)
    if entry.default is not None:
        check_supported({key: entry.default}, "db.t")


def test_defaults_compare_as_java_parses_them() -> None:
    cases = {
        "partition.expiration-check-interval": ("60 min", "3600 s", "2 h"),
        "manifest.full-compaction-threshold-size": ("16384 kb", "16 mb", "17 mb"),
        "bucket-append-ordered": ("TRUE", "true", "false"),
        "compaction.file-num-limit": ("100000", "100000", "99"),
        "lookup-compact": ("RADICAL", "radical", "gentle"),
        "file.compression.per.level": ("", " ", "0:lz4"),
        "tag.creation-delay": ("0 s", "0 ms", "1 ms"),
    }
    for key, (same, also_same, other) in cases.items():
        entry = ledger.LEDGER[key]
        assert is_java_default(entry, same) and is_java_default(entry, also_same), key
        assert not is_java_default(entry, other), key
    assert not is_java_default(ledger.LEDGER["commit.timeout"], "1 min")  # no default
    assert not is_java_default(ledger.LEDGER["compaction.file-num-limit"], "x")  # unparsable


def test_fallback_keys_and_prefixes_have_their_keys_status() -> None:
    assert ledger.status_of("sink.clustering.by-columns") is ledger.LEDGER["clustering.columns"]
    with pytest.raises(UnsupportedOptionError, match="sink.clustering.by-columns"):
        check_supported({"sink.clustering.by-columns": "v"}, "db.t")
    with pytest.raises(UnsupportedOptionError, match="commit.callback.a.b.C.param"):
        check_supported({"commit.callback.a.b.C.param": "x"}, "db.t")
    # Flink's lookup-join settings are no effect; remote lookup files are refused
    check_supported({"lookup.cache": "full", "lookup.cache-max-memory-size": "1 gb"}, "db.t")
    with pytest.raises(UnsupportedOptionError, match="remote lookup files"):
        check_supported({"lookup.remote-file.enabled": "true"}, "db.t")
    assert ledger.status_of("not-a-paimon-key") is None
    check_supported({"not-a-paimon-key": "1"}, "db.t")  # unknown keys: accepted, as in Java


def test_refused_at_create_and_at_load_javas_default_accepted(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOptionError) as info:
        create(tmp_path, {"tag.create-success-file": "true"})
    assert "tag.create-success-file" in str(info.value) and "'true'" in str(info.value)
    assert "unset it" in str(info.value)  # what to do instead
    defaults = {
        "tag.automatic-creation": "none",
        "partition.expiration-check-interval": "60 min",
        "scan.ignore-corrupt-files": "FALSE",
    }
    table = create(tmp_path, defaults)
    write(table, [1, 2])
    # a writer that honours it (Java) set it later: the load refuses it
    schema_file = Path(table.path.removeprefix("file:")) / "schema" / "schema-0"
    schema = json.loads(schema_file.read_text())
    schema["options"]["partition.timestamp-format.strict"] = "true"
    schema_file.write_text(json.dumps(schema))
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    with pytest.raises(UnsupportedOptionError, match="partition.timestamp-format.strict"):
        catalog.get_table("db.t")
    with pytest.raises(UnsupportedOptionError, match="scan.fallback-snapshot-branch"):
        create(tmp_path, {"bucket": "1"}, "u").copy({"scan.fallback-snapshot-branch": "b"})


# --- implemented and pypaimon-only keys shown here ---------------------------------------------


def test_data_file_prefix_names_the_data_files(tmp_path: Path) -> None:
    table = create(tmp_path, {"bucket": "1", "data-file.prefix": "part-"})
    messages = write(table, [1, 2, 3])
    names = [f.file_name for m in messages for f in m.new_files]  # type: ignore[attr-defined]
    assert names and all(n.startswith("part-") for n in names), names


def test_pypaimon_postpone_bucket_targets_are_accepted_and_one_bucket_is_planned(
    tmp_path: Path,
) -> None:
    """pypaimon 2.1 would size a new partition's buckets by these; Java 1.4.2 plans
    ``postpone.default-bucket-num`` (1) buckets in a fixed-bucket batch write, and so do we."""
    options = {
        "bucket": "-2",
        "postpone.target-row-num-per-bucket": "1",
        "postpone.target-size-per-bucket": "1 b",
        "postpone.batch-write-fixed-bucket.max-parallelism": "8",
    }
    table = create(tmp_path, options)
    messages = write(table, list(range(20)))
    assert {m.bucket for m in messages} == {0}  # type: ignore[attr-defined]
    assert {m.total_buckets for m in messages} == {1}  # type: ignore[attr-defined]
    rb = table.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 20


def test_batch_reads_refuse_the_startup_modes_they_would_not_honour(tmp_path: Path) -> None:
    """Java's compacted-full batch read returns the latest COMPACT snapshot; reading the latest
    one instead would be silently different, so the scan refuses (stream reads refuse it too)."""
    table = create(tmp_path, {"bucket": "1"})
    write(table, [1])
    for mode in ("compacted-full", "from-creation-timestamp", "FROM-FILE-CREATION-TIME"):
        copied = table.copy({"scan.mode": mode}, time_travel=False)
        with pytest.raises(UnsupportedOptionError, match=f"'scan.mode' = '{mode}'"):
            copied.new_read_builder().new_scan()
    for mode in ("latest", "latest-full", "full", "default"):
        rb = table.copy({"scan.mode": mode}, time_travel=False).new_read_builder()
        assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 1


def test_option_wiring_the_ledger_relies_on(tmp_path: Path) -> None:
    """Options whose effect other tests show through a parameter: the table's value reaches it."""
    from paimon_pyspark.compact.sort import var_length_contribution

    table = create(tmp_path, {"bucket": "1"})
    assert var_length_contribution(table.store) == 8
    assert var_length_contribution(table.copy({"zorder.var-length-contribution": "3"}).store) == 3
    assert table.store.options.compaction_delete_ratio_threshold == 0.2
    ratio = table.copy({"compaction.delete-ratio-threshold": "0.5"}).store.options
    assert ratio.compaction_delete_ratio_threshold == 0.5


def test_a_key_refused_by_writes_only_lets_reads_go_on(tmp_path: Path) -> None:
    """``file.block-size`` moves where Java rolls a data file: a table Java wrote with it is
    read here, but a write or a compaction, which would roll elsewhere, is refused."""
    from paimon_pyspark.procedures import compact

    assert ledger.REFUSED_ONLY_BY["file.block-size"] == ledger.WRITES
    check_supported({"file.block-size": "8 kb"}, "db.t")  # the table opens
    table = create(tmp_path, {"bucket": "1"})
    write(table, [1, 2])
    write(table, [3])
    blocked = table.copy({"file.block-size": "8 kb"})
    rb = blocked.new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 3
    with pytest.raises(UnsupportedOptionError, match=r"'file.block-size' = '8 kb'.*writing"):
        write(blocked, [4])
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    with pytest.raises(UnsupportedOptionError, match=r"'file.block-size'.*compaction"):
        compact(catalog, "db.t", options={"file.block-size": "8 kb"})
    assert compact(catalog, "db.t") is not None  # without it, compaction goes on


def test_orc_batch_keys_are_refused_by_orc_writes_only(tmp_path: Path) -> None:
    """Java's ORC writer rolls its files where its batches land; Parquet files do not depend
    on them, so only a write of ORC files is refused (the fallback key too)."""
    parquet = create(tmp_path, {"bucket": "1", "write.batch-size": "7"}, "p")
    write(parquet, [1])
    orc = create(tmp_path, {"bucket": "1", "file.format": "orc"}, "o")
    write(orc, [1])
    for key, value in (("write.batch-size", "7"), ("orc.write.batch-size", "7")):
        with pytest.raises(UnsupportedOptionError, match=rf"'{key}' = '{value}'.*ORC"):
            write(orc.copy({key: value}), [2])
    write(orc.copy({"write.batch-size": "1024", "write.batch-memory": "128 mb"}), [2])
    rb = orc.copy({"write.batch-memory": "1 kb"}).new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).num_rows == 2
