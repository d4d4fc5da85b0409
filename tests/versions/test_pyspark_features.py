"""``paimon_pyspark.spark`` checks the installed pyspark by feature, per door
(spark/compat.py): every Spark job runs on ``mapInArrow``, which every supported line has, and
``format("paimon")`` and Structured Streaming need the Data Source API that the check names.

On pyspark 3.5, which has no Data Source API, the doors that need it fail by name and the others
work: tests/spark/test_spark_without_datasource.py, run there by tests/versions/test_pyspark35.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

from paimon_pyspark.spark import compat

ROOT = Path(__file__).resolve().parents[2]
SPARK_PACKAGE = ROOT / "src" / "paimon_pyspark" / "spark"


def test_the_installed_pyspark_passes_and_the_check_names_what_the_source_imports() -> None:
    compat.check_pyspark()
    assert compat.has_datasource_api() and compat.missing_datasource_api() == []
    imported = set()
    for path in SPARK_PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "pyspark.sql.datasource":
                imported |= {alias.name for alias in node.names}
    checked = set(compat.NEEDED_DATASOURCE_API)
    assert checked <= imported, checked - imported
    assert {"DataSourceArrowWriter", "DataSourceStreamArrowWriter"} <= checked
