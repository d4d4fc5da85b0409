"""Fixtures of the Spark tests' own: the session's standalone cluster (standalone.py), which
test_standalone_cluster.py and test_executor_loss.py share."""

from tests.spark.standalone import standalone  # noqa: F401
