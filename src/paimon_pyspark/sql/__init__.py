"""SQL statements for Paimon tables: the dialect, statement parsing, and the catalog side of
running them; the Spark door (``paimon_pyspark.spark.sql``) runs them on a SparkSession."""

from paimon_pyspark.sql.dialect import parse_one, split_statements
from paimon_pyspark.sql.statements import Statement, parse_statement

__all__ = ["Statement", "parse_one", "parse_statement", "split_statements"]
