"""An uncertain publish that expires while another engine commits (issue 44).

pypaimon 2.1 (its own venv, the session's fork server) commits snapshots that carry no commit
ledger, as Java's do. While our snapshot is still there when we commit on top, the ledger walks
through the foreign snapshot and the retry finds ours; when only the foreign snapshot is left,
nothing can tell, and the commit must say so rather than commit again or claim nothing was in.
"""

from __future__ import annotations

import pytest
from pypaimon_oracle import PypaimonOracle
from tests.integration.table_helpers import write_commit
from tests.integration.test_uncertain_publish_expiry import _commit, _ids, _rows, _setup

from paimon_pyspark import CatalogFactory
from paimon_pyspark.catalog.catalog import Catalog
from paimon_pyspark.errors import CommitOutcomeUnknownError
from paimon_pyspark.maintenance.expire import ExpireConfig, ExpireSnapshots


@pytest.fixture
def warehouse(tmp_path: object) -> str:
    return f"{tmp_path}/wh"


@pytest.fixture
def catalog(warehouse: str) -> Catalog:
    catalog = CatalogFactory.create({"warehouse": warehouse})
    catalog.create_database("db")
    return catalog


def _foreign_commit(pypaimon: PypaimonOracle, warehouse: str, first: int) -> None:
    assert len(pypaimon.write(warehouse, "db.t", _rows(first, 3))) == 1


def test_a_foreign_snapshot_in_between_keeps_the_ledger(
    catalog: Catalog, warehouse: str, pypaimon_oracle: PypaimonOracle
) -> None:
    """pypaimon commits on our uncertain snapshot (no ledger of its own); we commit on top while
    ours is still there, so the ledger walks through pypaimon's snapshot and keeps ours."""
    table, clone, faulty = _setup(catalog, 10)
    faulty.plan = [True]

    def meddle() -> None:
        _foreign_commit(pypaimon_oracle, warehouse, 300)
        write_commit(table, _rows(200, 3))  # expires every older snapshot

    faulty.meddle = meddle
    assert _commit(clone.new_batch_write_builder(), _rows(100, 5), None) == [2]
    assert table.snapshot_manager.latest_id() == 4
    assert _ids(table) == sorted([*range(5), *range(100, 105), 300, 301, 302, 200, 201, 202])


@pytest.mark.parametrize("retries", [10, 0], ids=["retried", "settled"])
def test_an_uncertain_publish_undecidable_after_a_foreign_snapshot_is_reported(
    catalog: Catalog, warehouse: str, pypaimon_oracle: PypaimonOracle, retries: int
) -> None:
    """Only pypaimon's snapshot (no ledger) is left after ours expired: nothing tells whether
    ours was in, so the commit says it cannot tell, and commits nothing a second time."""
    table, clone, faulty = _setup(catalog, retries)
    faulty.plan = [True]

    def meddle() -> None:
        _foreign_commit(pypaimon_oracle, warehouse, 300)
        assert ExpireSnapshots(table.store).config(ExpireConfig(retain_max=1)).expire() == 2

    faulty.meddle = meddle
    with pytest.raises(CommitOutcomeUnknownError, match="complete only from snapshot 3"):
        _commit(clone.new_batch_write_builder(), _rows(100, 5), None)
    sm = table.snapshot_manager
    assert sm.latest_id() == 3
    assert not sm.snapshot_exists(2), "never published again at an expired id"
    assert _ids(table) == sorted([*range(5), *range(100, 105), 300, 301, 302])
