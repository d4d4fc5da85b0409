"""A failure as one line: the typed cause, found inside Spark's wrappers too."""

from __future__ import annotations

import pytest
from pyspark.sql import SparkSession

from paimon_pyspark.cli.failures import failure
from paimon_pyspark.errors import CommitConflictError, NullViolationError, TableNotExistError


def test_a_typed_error_is_its_own_message_and_names_the_table_once() -> None:
    f = failure(TableNotExistError("db.t"), "db.t")
    assert (f.type, f.message) == ("TableNotExistError", "Table 'db.t' does not exist.")
    assert f.line() == "error: Table 'db.t' does not exist."
    g = failure(CommitConflictError("two writers\ncommitted at once"), "db.t")
    assert g.line() == "error: db.t: two writers committed at once"
    assert g.to_json() == {
        "error": {
            "type": "CommitConflictError",
            "message": "two writers committed at once",
            "table": "db.t",
        }
    }


def test_the_typed_cause_of_a_chain_wins() -> None:
    try:
        try:
            raise NullViolationError("Table 'db.t': column 'id' is NOT NULL, got a null")
        except NullViolationError as e:
            raise RuntimeError("the job failed") from e
    except RuntimeError as outer:
        f = failure(outer, "db.t")
    assert f.type == "NullViolationError"
    assert f.line() == "error: Table 'db.t': column 'id' is NOT NULL, got a null"


def test_an_untyped_error_keeps_its_type_name() -> None:
    f = failure(FileNotFoundError(2, "No such file", "/x.csv"), "db.t")
    assert f.type == "FileNotFoundError"
    assert f.line() == "error: db.t: [Errno 2] No such file: '/x.csv'"


@pytest.mark.slow
def test_a_typed_error_raised_in_a_spark_worker_is_unwrapped(spark: SparkSession) -> None:
    def fail(_: int) -> int:
        from paimon_pyspark.errors import NullViolationError

        raise NullViolationError("Table 'db.t': column 'id' is NOT NULL,\nbut row 3 has a null.")

    with pytest.raises(Exception) as info:
        spark.sparkContext.parallelize([1], 1).map(fail).collect()
    assert "Traceback" in str(info.value)  # Spark's wrapper, with the worker's traceback
    f = failure(info.value, "db.t")
    assert f.type == "NullViolationError"
    assert f.line() == "error: Table 'db.t': column 'id' is NOT NULL, but row 3 has a null."
