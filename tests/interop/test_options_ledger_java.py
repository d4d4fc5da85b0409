"""The options ledger against Java Paimon 1.4.2 itself: every key of Java's CoreOptions (read by
reflection) has a status, with Java's type, default and fallback keys; and no key the ledger
calls *no effect by design* changes what Java writes or reads on the tables we share.

For each no-effect key, Java creates a primary-key table (2 buckets) and an append table with the
key set to a value other than its default (from its Java type, or a sample below), writes the
same three batches, and its output is compared with the same tables without the key: the rows
Java reads, the latest snapshot's data files (level, name prefix and extension, rows, extra
files) and every snapshot's kind, record counts and index or changelog manifest. All cases run
in one Java call per shape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from java_oracle import JavaOracle
from options_ledger_oracle import JavaKey, fingerprints, java_keys

from paimon_pyspark import options_ledger as ledger
from paimon_pyspark.options import parse_duration_ms, parse_memory_size

KIND = {
    "Boolean": "bool",
    "Integer": "int",
    "Long": "long",
    "Double": "double",
    "Float": "double",
    "MemorySize": "memory",
    "Duration": "duration",
    "String": "string",
    "Map": "map",
}

SAMPLES = {
    "changelog-file.prefix": "cl-",
    "changelog-file.format": "orc",
    "changelog-file.compression": "lz4",
    "changelog-file.stats-mode": "none",
    "changelog-producer.row-deduplicate-ignore-fields": "v",
    "spill-compression": "lz4",
    "lookup.cache-spill-compression": "lz4",
    "partition.expiration-strategy": "update-time",
    "partition.timestamp-formatter": "yyyyMMdd",
    "partition.timestamp-pattern": "$dt",
    "partition.mark-done-action": "done-partition",
    "partition.mark-done-action.custom.class": "org.example.Done",
    "partition.mark-done-action.http.url": "http://127.0.0.1:9/done",
    "partition.mark-done-action.http.params": "a=b",
    "metastore.tag-to-partition": "tag",
    "tag.batch.customized-name": "batch-tag",
    "sink.watermark-time-zone": "Asia/Shanghai",
    "sink.process-time-zone": "Asia/Shanghai",
    "clustering.strategy": "zorder",
    "format-table.file.compression": "gzip",
    "format-table.commit-hive-sync-url": "thrift://127.0.0.1:9",
    "materialized-table.definition-query": "SELECT 1",
    "materialized-table.interval-freshness": "1",
    "materialized-table.refresh-handler-description": "handler",
    "materialized-table.refresh-handler-bytes": "aGFuZGxlcg==",
    "lookup-compact.max-interval": "3",
    "write-buffer-spill.max-disk-size": "1 gb",
    "lookup.cache-max-disk-size": "1 gb",
}
"""Values for no-effect keys whose Java type gives no obvious other value (strings), or whose
doubled default would not fit."""


def sample(key: JavaKey) -> str:
    """A value of ``key``'s Java type other than its default."""
    if key["key"] in SAMPLES:
        return SAMPLES[key["key"]]
    kind, default = KIND.get(key["type"], "enum"), key["default"]
    if kind == "enum":
        return next(v for v in key["enumValues"] if default is None or v.lower() != default.lower())
    if kind == "bool":
        return "false" if default == "true" else "true"
    if kind in ("int", "long"):
        return "3" if default is None else str(max(int(default) * 2, int(default) + 1))
    if kind == "double":
        return "0.5" if default is None else str(float(default) / 2)
    if kind == "memory":
        return "1 mb" if default is None else f"{parse_memory_size(default, 'k') * 2} b"
    if kind == "duration":
        return "7 min" if default is None else f"{parse_duration_ms(default) * 2 + 1000} ms"
    return "x"


@pytest.fixture(scope="module")
def keys(java_oracle: JavaOracle) -> list[JavaKey]:
    return java_keys(java_oracle)


def test_every_java_key_has_a_status_with_javas_type_and_default(keys: list[JavaKey]) -> None:
    java = {k["key"]: k for k in keys}
    assert len(java) == len(keys) > 250
    without = sorted(set(java) - set(ledger.JAVA_KEYS))
    assert not without, f"Java keys without a status in options_ledger.py: {without}"
    stale = sorted(set(ledger.JAVA_KEYS) - set(java))
    assert not stale, f"ledger keys Java 1.4.2 does not have: {stale}"
    assert not set(ledger.PYPAIMON_KEYS) & set(java), "a pypaimon-only key is Java's"
    wrong = {}
    for name, k in java.items():
        entry = ledger.JAVA_KEYS[name]
        kind = KIND.get(k["type"], "enum")
        default = k["default"]
        if default is not None and kind == "enum":
            default = default.lower()
        if kind == "map" and default == "{}":
            default = ""
        if (entry.kind, entry.default) != (kind, default):
            wrong[name] = ((entry.kind, entry.default), (kind, default))
    assert not wrong, f"ledger (kind, default) vs Java's: {wrong}"
    fallbacks = {f: k["key"] for k in keys for f in k["fallbackKeys"] if f not in java}
    assert fallbacks == ledger.FALLBACK_KEYS
    counts = ledger.counts()
    print(f"ledger: {len(java)} Java keys, {len(ledger.PYPAIMON_KEYS)} pypaimon-only; {counts}")


@pytest.mark.parametrize("shape", ["pk", "append"])
def test_no_effect_keys_do_not_change_javas_output(
    java_oracle: JavaOracle, keys: list[JavaKey], tmp_path: Path, shape: str
) -> None:
    # controls: keys that do change Java's output, so the comparison can see a change
    cases: dict[str, dict[str, str]] = {
        "base": {},
        "base-again": {},
        "control-prefix": {"data-file.prefix": "part-"},
        "control-levels": {"num-sorted-run.compaction-trigger": "1"}
        if shape == "pk"
        else {"bucket": "2", "bucket-key": "id"},
    }
    for k in keys:
        if ledger.JAVA_KEYS[k["key"]].status == ledger.NO_EFFECT:
            cases[f"k{len(cases)}"] = {k["key"]: sample(k)}
    assert len(cases) > 60  # about 70 no-effect keys (issue 41 implemented some), and the controls
    out = fingerprints(java_oracle, tmp_path, shape, cases)
    base = out["base"]
    assert base["error"] is None, base["error"]
    assert base["rows"] and base["files"] and base["snapshots"]

    def seen(result: dict[str, Any]) -> dict[str, Any]:
        return {k: result[k] for k in ("rows", "files", "snapshots", "error") if k in result}

    assert seen(out["base-again"]) == seen(base)  # the fingerprint itself is deterministic
    for control in ("control-prefix", "control-levels"):
        assert out[control]["error"] is None and seen(out[control]) != seen(base), control
    changed = {
        next(iter(opts.items())): seen(out[name])
        for name, opts in cases.items()
        if not name.startswith("control") and opts and seen(out[name]) != seen(base)
    }
    assert not changed, f"'no effect' keys that change Java's output ({shape}): {changed}"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("tag.create-success-file", "true"),
        ("commit.user-prefix", "etl"),
        ("commit.force-create-snapshot", "true"),
    ],
)
def test_a_table_java_writes_with_a_refused_key_is_refused_at_load(
    java_oracle: JavaOracle, tmp_path: Path, key: str, value: str
) -> None:
    """Java honours these keys; we refuse the table it wrote, naming the key and the value, and
    accept it again once the key holds Java's default."""
    from paimon_pyspark import CatalogFactory
    from paimon_pyspark.errors import UnsupportedOptionError

    fields = [("id", "INT NOT NULL"), ("v", "STRING")]
    java_oracle.create_table(
        tmp_path, "db", "t", fields, partition_keys=["v"], options={key: value}
    )
    java_oracle.write_rows(tmp_path, "db", "t", [[1, "a"]])
    catalog = CatalogFactory.create({"warehouse": str(tmp_path)})
    with pytest.raises(UnsupportedOptionError) as info:
        catalog.get_table("db.t")
    assert f"'{key}' = '{value}'" in str(info.value) and "db.t" in str(info.value)
    default = ledger.LEDGER[key].default
    options = {} if default is None else {key: default}
    java_oracle.create_table(tmp_path, "db", "u", fields, partition_keys=["v"], options=options)
    java_oracle.write_rows(tmp_path, "db", "u", [[1, "a"]])
    rb = catalog.get_table("db.u").new_read_builder()
    assert rb.new_read().to_arrow(rb.new_scan().plan().splits()).to_pylist() == [
        {"id": 1, "v": "a"}
    ]
