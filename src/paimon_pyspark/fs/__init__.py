"""Filesystem access for tables: FileIO over pyarrow.fs."""

from paimon_pyspark.fs.file_io import FileIO

__all__ = ["FileIO"]
