"""Every supported pyspark line: a query after a filtered query on the same DataFrame or view
returns every row of a ``paimon`` table, and whether that pyspark reuses a reader that
``pushFilters`` configured is pinned as found (REUSES_PUSHED_READER). In the matrix venvs, where
tests/spark does not run inside ``make test``, the other doors work too: ``spark.write``
upserts and deletes, ``spark.read`` with time travel, ``procedures.compact``, a script through
``sql``, and a stream from our source to our sink. A line without the Python Data Source (3.5,
NO_DATA_SOURCE) has no ``paimon`` source, no ``pushFilters`` and no stream: the probe answers
"unsupported" for those there, and the other doors must work.

The lines are the venvs of mk/pyspark_matrix.mk (one per tests/versions/pyspark*-requirements.txt),
each running tests/versions/pyspark_probe.py as a subprocess with its own SparkSession, and the
test's own pyspark, whose ``spark`` session runs the same ``results``. A failure shows the
results of every line as one table. A matrix venv that is missing skips its line, except under
CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.sql import SparkSession
from tests.venvs import missing
from tests.versions.pyspark_probe import (
    DAYS,
    PROBE_ROWS,
    ROWS,
    SMALL_IDS,
    UNSUPPORTED,
    results,
)

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PROBE = HERE / "pyspark_probe.py"

REUSES_PUSHED_READER = {"4.1": True, "4.2": True, "4.3": True}
"""Per line, as found: does a later unfiltered query get the reader a filtered query's
``pushFilters`` configured? While True, spark/datasource.py must not push filters there. No
entry for a NO_DATA_SOURCE line: it has no ``pushFilters`` to reuse."""
NO_DATA_SOURCE = {"3.5"}
"""Lines whose pyspark lacks the Python Data Source API (as found, by spark/compat.py's feature
check): ``format("paimon")``, Structured Streaming and the reuse probe do not apply there."""


@dataclass(frozen=True)
class Line:
    name: str
    python: Path
    pin: str | None
    """The exact pyspark version its requirements file pins; None for the test's own venv."""


def _lines() -> list[Line]:
    lines = []
    for req in sorted(HERE.glob("pyspark*-requirements.txt")):
        digits = req.name.removeprefix("pyspark").removesuffix("-requirements.txt")
        pin = re.search(r"^pyspark==(\S+)$", req.read_text(), re.MULTILINE)
        assert pin is not None, f"{req} must pin pyspark==<version>"
        lines.append(
            Line(f"{digits[0]}.{digits[1:]}", ROOT / f".venv-pyspark{digits}/bin/python", pin[1])
        )
    own = ".".join(pyspark.__version__.split(".")[:2])
    assert own not in {line.name for line in lines}, f"pyspark {own} is both venv and matrix"
    return [*lines, Line(own, Path(sys.executable), None)]


LINES = _lines()


def _start(line: Line, workdir: Path) -> subprocess.Popen[bytes]:
    """The probe in ``line``'s venv, its output in ``workdir`` (a pipe left unread while the
    test's own line runs could fill and stall it)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_HOME", "PYTHONPATH")}
    env["PYSPARK_PYTHON"] = env["PYSPARK_DRIVER_PYTHON"] = str(line.python)
    with open(workdir / "stdout", "w") as out, open(workdir / "stderr", "w") as err:
        return subprocess.Popen(
            [str(line.python), str(PROBE), str(workdir)], cwd=ROOT, env=env, stdout=out, stderr=err
        )


def _finish(name: str, proc: subprocess.Popen[bytes], workdir: Path) -> dict[str, Any]:
    try:
        proc.wait(timeout=900)
    finally:
        proc.kill()
    out = (workdir / "stdout").read_text().strip().splitlines()
    assert proc.returncode == 0 and out, (
        f"pyspark {name} probe failed ({proc.returncode}): "
        f"{(workdir / 'stderr').read_text()[-3000:]}"
    )
    result: dict[str, Any] = json.loads(out[-1])
    return result


@pytest.fixture(scope="module")
def matrix(
    spark: SparkSession, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, Any] | None]:
    """Line -> the probe's results, or None where its venv is missing. The matrix venvs run
    at once, each in its own process and SparkSession; the test's own line uses ``spark``."""
    workdirs = {
        line.name: tmp_path_factory.mktemp(f"pyspark{line.name}")
        for line in LINES
        if line.pin is not None and line.python.exists()
    }
    running = {
        line.name: _start(line, workdirs[line.name]) for line in LINES if line.name in workdirs
    }
    try:
        own = results(spark, str(tmp_path_factory.mktemp("pyspark-own")), with_doors=False)
    except BaseException:
        for proc in running.values():
            proc.kill()
        raise
    done = {name: _finish(name, proc, workdirs[name]) for name, proc in running.items()}
    return {line.name: own if line.pin is None else done.get(line.name) for line in LINES}


def _table(matrix: dict[str, dict[str, Any] | None]) -> str:
    rows = [f"{name}: {json.dumps(r, separators=(',', ':'))}" for name, r in matrix.items()]
    return "\n".join(["results per pyspark line:", *rows])


def _result(matrix: dict[str, dict[str, Any] | None], line: Line) -> dict[str, Any]:
    result = matrix[line.name]
    if result is None:
        missing(f"pyspark {line.name}: {line.python} is missing (make pyspark-matrix builds it)")
    if line.pin is not None:
        assert result["pyspark"] == line.pin, _table(matrix)
    else:
        assert result["pyspark"] == pyspark.__version__, _table(matrix)
    without = line.name in NO_DATA_SOURCE
    assert bool(result["missing_datasource_api"]) == without, (
        f"pyspark {line.name} {'has' if without else 'lacks'} the Data Source API: update "
        f"NO_DATA_SOURCE and README's Supported versions.\n{_table(matrix)}"
    )
    return result


@pytest.mark.parametrize("line", LINES, ids=[line.name for line in LINES])
def test_unfiltered_query_after_a_filtered_one_returns_every_row(
    matrix: dict[str, dict[str, Any] | None], line: Line
) -> None:
    counts = _result(matrix, line)["paimon"]
    if line.name in NO_DATA_SOURCE:
        assert counts == UNSUPPORTED, _table(matrix)
        return
    one_day = ROWS // DAYS
    assert counts == {
        "filtered": one_day,
        "later_df": ROWS,
        "filtered_view": one_day,
        "later_view": ROWS,
        "option_filtered": SMALL_IDS // DAYS,
        "option_later": one_day,
        "option_columns": 1,
    }, _table(matrix)


@pytest.mark.parametrize("line", LINES, ids=[line.name for line in LINES])
def test_push_filters_reader_reuse_is_as_found(
    matrix: dict[str, dict[str, Any] | None], line: Line
) -> None:
    counts = _result(matrix, line)["probe"]
    if line.name in NO_DATA_SOURCE:
        assert counts == UNSUPPORTED and line.name not in REUSES_PUSHED_READER, _table(matrix)
        return
    assert (counts["fresh"], counts["filtered"], counts["filtered_view"]) == (PROBE_ROWS, 1, 1), (
        _table(matrix)
    )
    # explained_later: planning alone (no job) hands the relation its pushed read;
    # unpushed_filtered: so does a later query whose filter the Python side is not given
    reused = {
        counts["later_df"] < PROBE_ROWS,
        counts["later_view"] < PROBE_ROWS,
        counts["explained_later"] < PROBE_ROWS,
        counts["unpushed_filtered"] < 2,
    }
    assert line.name in REUSES_PUSHED_READER, f"pin pyspark {line.name} in REUSES_PUSHED_READER"
    assert reused == {REUSES_PUSHED_READER[line.name]}, (
        f"pyspark {line.name} changed whether it reuses a pushed reader (DataFrame, view, "
        f"after explain: {counts['later_df']}, {counts['later_view']}, "
        f"{counts['explained_later']} of {PROBE_ROWS} rows; an OR filter: "
        f"{counts['unpushed_filtered']} of 2); update REUSES_PUSHED_READER and "
        f"spark/datasource.py's pushdown.\n{_table(matrix)}"
    )


@pytest.mark.parametrize("line", LINES, ids=[line.name for line in LINES])
def test_where_after_load_prunes_exactly_where_pushing_is_safe(
    matrix: dict[str, dict[str, Any] | None], line: Line
) -> None:
    """The other partitions' files are damaged: a read that opens one counts -1. A filter bound
    with ``option("filter")`` prunes on every line; ``load().where()`` only on a line that does
    not reuse a pushed reader."""
    found = _result(matrix, line)["pruning"]
    if line.name in NO_DATA_SOURCE:
        assert found == UNSUPPORTED, _table(matrix)
        return
    one_day = ROWS // DAYS
    where = -1 if REUSES_PUSHED_READER[line.name] else one_day
    assert found == {"where": where, "filter_option": one_day}, _table(matrix)


MATRIX = [line for line in LINES if line.pin is not None]


@pytest.mark.parametrize("line", MATRIX, ids=[line.name for line in MATRIX])
def test_every_door_works_in_the_matrix_venvs(
    matrix: dict[str, dict[str, Any] | None], line: Line
) -> None:
    doors = _result(matrix, line)["doors"]
    latest = {i: ("a" if i < 50 else "b") + f"-{i}" for i in range(10, 150)}
    assert {int(k): v for k, v in doors["pk_latest"].items()} == latest, _table(matrix)
    assert doors["pk_first_snapshot"] == 100, _table(matrix)
    assert doors["compact_kind"] == "COMPACT" and doors["pk_after_compact_same"], _table(matrix)
    sql_rows = [[1, "one"], [2, "TWO"], [3, "three"], [4, "four"]]
    assert doors["sql_rows"] == sql_rows, _table(matrix)
    stream = doors["stream"]
    if line.name in NO_DATA_SOURCE:
        assert stream == UNSUPPORTED, _table(matrix)
        return
    assert stream["ids"] == list(range(100)) and stream["values_ok"], _table(matrix)
    assert stream["commits"] == [["APPEND", 0], ["APPEND", 1]], _table(matrix)
