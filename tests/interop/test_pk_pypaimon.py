"""pypaimon 2.1 reads the primary-key tables paimon_pyspark writes, with upserts and deletes.

pypaimon runs one process per call (seconds each), so the workload is written once per case and
read once: partitioned parquet with full files, unpartitioned orc, and thin parquet files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from java_oracle import sorted_rows
from pypaimon_oracle import PypaimonOracle
from test_pk_java import DB, SCHEMA, as_lists, create_ours, read_ours, workload, write

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]


@pytest.mark.parametrize(
    ("partitioned", "options"),
    [
        pytest.param(True, {"file.format": "parquet"}, id="partitioned-parquet"),
        pytest.param(False, {"file.format": "orc"}, id="unpartitioned-orc"),
        pytest.param(True, {"data-file.thin-mode": "true"}, id="partitioned-thin"),
    ],
)
def test_pypaimon_reads_our_upserts_and_deletes(
    pypaimon_oracle: PypaimonOracle, tmp_path: Path, partitioned: bool, options: dict[str, str]
) -> None:
    table = create_ours(tmp_path, partitioned, options)
    commits, model = workload(partitioned, seed=5)
    for rows in commits:
        write(table, rows)
    expected = as_lists(model.values())
    assert read_ours(table) == expected

    got = pypaimon_oracle.read(tmp_path, f"{DB}.t")
    assert got.column_names == SCHEMA.names
    assert sorted_rows(as_lists(got.to_pylist())) == expected
