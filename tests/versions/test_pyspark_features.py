"""``paimon_pyspark.spark`` checks the installed pyspark by feature on import: every supported
line has the Data Source API it is made of, and an older pyspark fails by name with
UnsupportedPysparkError (an ImportError) instead of deep in an import.

The older pyspark is the real 3.5.9 of the bench's venv (.venv-spark35, make bench-java), with
our package and its other dependencies taken from the test venv; without that venv the case
skips.
"""

from __future__ import annotations

import ast
import os
import site
import subprocess
from pathlib import Path

import pytest

from paimon_pyspark.errors import UnsupportedPysparkError
from paimon_pyspark.spark import compat

ROOT = Path(__file__).resolve().parents[2]
SPARK_PACKAGE = ROOT / "src" / "paimon_pyspark" / "spark"
OLD = ROOT / ".venv-spark35" / "bin" / "python"


def test_the_installed_pyspark_passes_and_the_check_names_what_the_source_imports() -> None:
    compat.check_pyspark()
    imported = set()
    for path in SPARK_PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "pyspark.sql.datasource":
                imported |= {alias.name for alias in node.names}
    checked = set(compat.NEEDED_DATASOURCE_API)
    assert checked <= imported, checked - imported
    assert {"DataSourceArrowWriter", "DataSourceStreamArrowWriter"} <= checked


@pytest.mark.slow
def test_pyspark_3_5_fails_on_import_naming_the_version_and_what_is_missing() -> None:
    if not OLD.exists():
        pytest.skip(f"{OLD} is missing (make bench-java builds it)")
    ours = site.getsitepackages()[0]
    code = (
        "import sys; "
        f"sys.path[1:1] = [{str(ROOT / 'src')!r}]; sys.path.append({ours!r}); "
        "from paimon_pyspark.errors import UnsupportedPysparkError\n"
        "try:\n"
        "    import paimon_pyspark.spark\n"
        "except UnsupportedPysparkError as e:\n"
        "    print(isinstance(e, ImportError), e)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    done = subprocess.run(
        [str(OLD), "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (
        "True paimon_pyspark.spark needs pyspark >= 4.1.4 (pip install 'paimon-pyspark[spark]'): "
        "pyspark 3.5.9 has no DataSource, DataSourceArrowWriter, DataSourceStreamArrowWriter in "
        "pyspark.sql.datasource."
    )
    assert issubclass(UnsupportedPysparkError, ImportError)
