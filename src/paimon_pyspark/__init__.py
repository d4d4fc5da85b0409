"""paimon_pyspark: Apache Paimon tables from Python, with the distributed pipeline on PySpark."""

from paimon_pyspark.catalog import CatalogFactory, FileSystemCatalog
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.commit_message_serde import CommitMessageSerializer
from paimon_pyspark.table.core_options import ConfigOption, CoreOptions
from paimon_pyspark.table.file_store_table import FileStoreTable

__all__ = [
    "CatalogFactory",
    "CommitMessage",
    "CommitMessageSerializer",
    "ConfigOption",
    "CoreOptions",
    "FileStoreTable",
    "FileSystemCatalog",
    "Predicate",
    "PredicateBuilder",
    "Schema",
]
