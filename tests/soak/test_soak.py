"""A short soak run for issue 36 (``make soak`` runs the long ones, soak_run.py says how).

Three writers, a compactor and random SIGKILLs every 2 to 4 s for about 27 s, on local disk,
keeping as few as one snapshot for a second: every checkpoint a writer saw acknowledged must be
in the table once. The run must also have killed, compacted and expired, so it cannot pass by
doing nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from soak_run import run_soak


@pytest.mark.slow
def test_acknowledged_checkpoints_survive_kills_compaction_and_fast_expiry(
    tmp_path: Path,
) -> None:
    result = run_soak(
        str(tmp_path / "wh"),
        seconds=27,
        retain_min=1,
        seed=36,
        kill_every=(2.0, 4.0),
        state_dir=tmp_path / "state",
    )
    detail = "\n".join([result.summary(), *result.diagnoses])
    print(detail)  # pytest -s or -rP: what the run did
    assert result.read_error is None, detail
    assert result.lost == [], detail
    assert result.duplicated == [], detail
    assert result.unexpected == [], detail
    assert sum(result.kills.values()) >= 1, detail
    assert all(n > 0 for n in result.recorded.values()), detail
    assert result.compactions > 0, detail
    assert result.expired > 0, detail
