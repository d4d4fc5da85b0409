"""The pyspark 3.5 line inside ``make test``: a fast part of the package's Spark tests runs in
.venv-pyspark35, where pyspark 3.5.9 came first and the package's wheel with the ``spark``
extra was installed after it, as on a cluster (mk/pyspark_matrix.mk; that the install kept
pyspark is tests/versions/test_lowest_versions.py's check). The part covers ``write`` (a
bucket shuffle, a missing table), ``read`` (with a merge, partition pruning, time travel and an
incremental read), ``sql`` (struct queries, ``UPDATE``), procedures as Spark jobs (``compact``,
``rescale``), and the refusals of the Data Source doors by name
(tests/spark/test_spark_without_datasource.py). The tests marked ``datasource`` are left out;
``make test-matrix`` runs the whole Spark suite there, where they skip.

It leaves out what another run in the same venv already checks: tests/connect's doors script
(test_doors_everywhere.py) writes a partitioned append table with ``write`` in two commits and
runs a ``MERGE INTO`` with every clause kind on a primary-key table; and
tests/versions/test_pyspark_versions.py runs every door once there besides.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.venvs import missing
from tests.versions.test_lowest_versions import pytest_in_venv

pytestmark = [pytest.mark.slow, pytest.mark.uses_spark]

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv-pyspark35" / "bin" / "python"
SUBSET = [
    "tests/spark/test_spark_without_datasource.py",
    "tests/spark/test_spark_write_read.py",
    "tests/spark/test_spark_sql_queries.py::test_struct_subfields_resolve_and_keep_their_column",
    "tests/spark/test_spark_rescale.py::test_spark_rescale_of_a_postpone_partition_equals_in_"
    "process_rescale",
    "tests/spark/test_spark_native_read.py::test_a_filter_the_partitions_decide_is_not_tested_"
    "again_row_by_row",
]
COVERED_ELSEWHERE = [
    "tests/spark/test_spark_write_read.py::test_spark_write_shuffles_by_bucket_and_commits_once"
    "[partitioned]"
]
"""The doors script's ``write_append`` step there: the same layout, two commits, every row."""


def test_a_fast_part_of_the_spark_tests_passes_on_pyspark_3_5() -> None:
    if not (PYTHON.parents[1] / ".wheel").exists():
        missing(f"{PYTHON.parents[1]} has no installed wheel (make pyspark-matrix builds it)")
    summary = pytest_in_venv(PYTHON, SUBSET, COVERED_ELSEWHERE, "not datasource", timeout=900)
    passed = re.search(r"(\d+) passed", summary)
    assert passed is not None and int(passed.group(1)) >= 8, summary
    assert "skipped" not in summary and "deselected" in summary, summary
