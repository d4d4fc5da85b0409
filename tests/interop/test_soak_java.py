"""Issue 36 against Java Paimon 1.4.2: the append table after a short soak (stream writers, a
compactor, SIGKILLs every 2-4 s, snapshots expiring within a second; no Spark writer) reads the
same in Java as here, and Java's own expiry on it afterwards deletes nothing that the retained
snapshot or our record of committed identifiers needs: both sides still read the same rows, and
the append writer's replay of its last checkpoint is still skipped.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from java_oracle import JavaOracle, canonical_rows, sorted_rows
from tests.integration.table_helpers import read_all
from tests.soak.soak_run import APPEND, TABLE, SoakConfig, checkpoint_rows, run_soak

from paimon_pyspark import CatalogFactory
from paimon_pyspark.spec.snapshot import recorded_identifiers

pytestmark = [pytest.mark.java, pytest.mark.slow]


def test_java_reads_a_soaked_table_and_its_expiry_keeps_what_we_need(
    java_oracle: JavaOracle, tmp_path: Path
) -> None:
    warehouse = tmp_path / "wh"
    cfg = SoakConfig(
        seconds=20,
        seed=3601,
        kill_every=(2.0, 4.0),
        orphan_every=3600.0,
        spark=False,
        java=False,  # the checks below read it with Java
    )
    result = run_soak(str(warehouse), cfg, state_dir=tmp_path)
    assert result.ok, result.summary()
    assert sum(result.kills.values()) >= 2 and result.expired > 0, result.summary()
    table = CatalogFactory.create({"warehouse": str(warehouse)}).get_table(TABLE)
    db, name = TABLE.split(".")
    ours = sorted_rows(canonical_rows(read_all(table)))
    assert sorted_rows(java_oracle.read_table(warehouse, db, name).rows) == ours
    latest = table.snapshot_manager.latest()
    assert latest is not None
    assert java_oracle.latest_snapshot_id(warehouse, db, name) == latest.id

    # the append writer's last commit is in the record (killed after its commit and before its
    # own record of it, the record is one ahead)
    record = recorded_identifiers(latest)
    assert record is not None
    last = record[APPEND]
    assert last in (result.acked[APPEND], result.acked[APPEND] + 1), (last, result.acked)

    # Java's expiry, as far as it goes: only the latest snapshot stays
    java_oracle.expire_snapshots(
        warehouse, db, name, retain_max=1, retain_min=1, time_retained_ms=0
    )
    assert table.snapshot_manager.list_ids() == [latest.id]
    assert sorted_rows(canonical_rows(read_all(table))) == ours
    assert sorted_rows(java_oracle.read_table(warehouse, db, name).rows) == ours

    # the record still answers: the writer's replay is skipped, its next checkpoint commits
    builder = table.new_stream_write_builder(APPEND)
    with builder.new_write() as write, builder.new_commit() as commit:
        assert commit.filter_committed([last, last + 1]) == [last + 1]
        write.write_arrow(checkpoint_rows(APPEND, last, cfg.rows))
        assert commit.commit(write.prepare_commit(last), last) == []
        write.write_arrow(checkpoint_rows(APPEND, last + 1, cfg.rows))
        assert commit.commit(write.prepare_commit(last + 1), last + 1) != []
    after = read_all(table)
    assert len(after) == len(ours) + cfg.rows
    assert sorted_rows(java_oracle.read_table(warehouse, db, name).rows) == sorted_rows(
        canonical_rows(after)
    )
