"""The reader options every Spark read door takes (``format("paimon")``, ``spark.read``, the
SQL door), apart from the Data Source API, which pyspark 3.5 does not have."""

from __future__ import annotations

from paimon_pyspark.read import metadata_columns as meta

FILTER = "filter"
"""Reader option: a SQL boolean expression over the table's columns that the relation keeps."""
COLUMNS = "columns"
"""Reader option: the relation's columns, comma-separated, in this order."""
PARALLELISM = "parallelism"
"""Reader option: the cores a read spreads over (Spark's defaultParallelism, which
``paimon_pyspark.spark.read`` passes; a data source cannot ask Spark for it)."""
METADATA_COLUMNS = meta.OPTION
"""Reader option: the metadata columns (``__paimon_file_path``, ...) the relation adds."""
