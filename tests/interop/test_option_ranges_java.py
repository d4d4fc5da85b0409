"""The option ranges of tests/unit/test_option_ranges.py against Java Paimon 1.4.2: every value
we accept at the edge, Java creates a table with and writes to; every value we refuse, Java
refuses too (at create, or when it writes, commits and reads), except the few that are ours
alone (JAVA_ACCEPTS, as options.check_ranges's docstring says) and the few Java parses only
where it uses them (JAVA_PARSES_WHEN_USED)."""

from __future__ import annotations

from pathlib import Path

import pytest
from java_oracle import JavaOracle
from tests.unit.test_option_ranges import IN_RANGE, OUT_OF_RANGE

pytestmark = [pytest.mark.java, pytest.mark.slow]

FIELDS = [("id", "BIGINT NOT NULL"), ("v", "STRING")]

JAVA_ACCEPTS = {
    # Java creates, writes and reads with these; we refuse them (check_ranges says why)
    ("target-file-size", "0 b"),
    ("manifest.target-file-size", "0 mb"),
    ("compaction.small-file-ratio", "nan"),  # not an option of Java 1.4.2
    ("compaction.small-file-ratio", "-1"),
    ("dynamic-bucket.target-row-num", "0"),
    ("dynamic-bucket.initial-buckets", "0"),
    ("dynamic-bucket.assigner-parallelism", "0"),
    ("write.parallelism", "0"),  # ours alone: Java has no such option
    ("write.parallelism", "two"),
    ("postpone.default-bucket-num", "0"),
    ("num-levels", "10001"),
    ("num-sorted-run.compaction-trigger", "10000"),  # 10,001 levels
}
JAVA_PARSES_WHEN_USED = {
    # not an int, but Java parses them only where it uses them (a commit that retries, an
    # append compaction, a cross-partition upsert), not in a plain create, write and read
    ("commit.max-retries", "2147483648"),
    ("compaction.min.file-num", "2147483648"),
    ("cross-partition-upsert.index-ttl", "99999999999999999999 s"),
}


def _java_creates_writes_and_reads(
    oracle: JavaOracle, warehouse: Path, key: str, value: str, pk: bool, read: bool = True
) -> bool:
    options = {key: value}
    if key == "bucket" and not pk:
        options["bucket-key"] = "id"
    try:
        oracle.create_table(
            warehouse, "db", "t", FIELDS, primary_keys=["id"] if pk else [], options=options
        )
        oracle.write_rows(warehouse, "db", "t", [[1, "a"], [2, "b"]])
        if read:
            oracle.read_table(warehouse, "db", "t")
    except Exception:
        return False
    return True


@pytest.mark.parametrize(("key", "value", "pk"), OUT_OF_RANGE)
def test_java_refuses_what_we_refuse(
    java_oracle: JavaOracle, tmp_path: Path, key: str, value: str, pk: bool
) -> None:
    accepted = _java_creates_writes_and_reads(java_oracle, tmp_path, key, value, pk)
    assert accepted == ((key, value) in JAVA_ACCEPTS | JAVA_PARSES_WHEN_USED)


@pytest.mark.parametrize(("key", "value"), IN_RANGE)
def test_java_accepts_the_edges_we_accept(
    java_oracle: JavaOracle, tmp_path: Path, key: str, value: str
) -> None:
    # time travel to a snapshot that does not exist fails in both: no read for that one
    read = key != "scan.snapshot-id"
    assert _java_creates_writes_and_reads(java_oracle, tmp_path, key, value, True, read)
