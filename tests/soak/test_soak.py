"""The soak of issue 44 in make test: 3 minutes on local disk (``make soak`` runs 20 minutes on
local disk and 20 on S3 through the fault proxy; soak_run.py says what runs and what is checked).

Light on CPU, as it shares two cores with the rest of the suite: 20-row checkpoints with a
second between them, a Spark write about every 80 s (two in the run; its first one waits for the
JVM and Python workers), a kill of a stream writer or the compactor every 15 to 30 s, an orphan
pass every 50 s with a 90 s safety age (longer than the first Spark write on a loaded
machine). It must also have killed, compacted, expired,
cleaned orphans and streamed, so it cannot pass by doing nothing.
"""

from __future__ import annotations

import time

import pytest
from soak_run import SoakConfig, cutoff_ago, soak

from paimon_pyspark.maintenance.orphan_files import ONE_DAY_MS, default_older_than_ms


def test_orphan_cutoff_follows_the_injected_clock() -> None:
    """The soak's hook: remove_orphan_files' default cutoff is one day before store.clock's
    now, so a clock one day minus s ahead makes it s ago; without a clock, a day ago."""
    now = int(time.time() * 1000)
    assert abs(default_older_than_ms() - (now - ONE_DAY_MS)) < 60_000
    with cutoff_ago(30.0):
        assert abs(default_older_than_ms() - (now - 30_000)) < 60_000
    assert abs(default_older_than_ms() - (now - ONE_DAY_MS)) < 60_000


@pytest.mark.slow
@pytest.mark.own_job
def test_acknowledged_commits_survive_kills_compaction_expiry_and_orphan_cleaning() -> None:
    cfg = SoakConfig(
        seconds=180,
        seed=44,
        kill_every=(15.0, 30.0),
        rows=20,
        pk_rows=10,
        pause=1.0,
        compact_pause=2.0,
        spark_every=80.0,
        orphan_every=50.0,
        orphan_safety=90.0,
        kill_spark=False,  # a JVM restart costs CPU the suite has not got; make soak kills it
    )
    result = soak(cfg)
    detail = "\n".join([result.summary(), *result.diagnoses, f"state: {result.work_dir}"])
    print(detail)  # pytest -s or -rP: what the run did
    assert result.read_error is None, detail
    assert result.lost == [], detail
    assert result.duplicated == [], detail
    assert result.unexpected == [], detail
    assert result.pk_mismatch == [], detail
    assert result.missing_files == [], detail
    assert result.orphan_violations == [], detail
    assert result.stream_bad == [] and result.stream_missed == [], detail
    assert result.java.startswith("equal"), detail
    assert sum(result.kills.values()) >= 3, detail
    assert all(result.acked[w] > 0 for w in result.acked), detail
    assert result.compactions > 0 and result.expired > 0, detail
    assert result.orphan_passes >= 2 and result.stream_snapshots > 0, detail
