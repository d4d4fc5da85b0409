"""paimon_pyspark: Apache Paimon tables from Python, with the distributed pipeline on PySpark."""

from importlib.metadata import version as _installed_version

from paimon_pyspark.catalog import Catalog, CatalogFactory, FileSystemCatalog
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.schema import Schema
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.spec.commit_message_serde import CommitMessageSerializer
from paimon_pyspark.table.core_options import ConfigOption, CoreOptions
from paimon_pyspark.table.file_store_table import FileStoreTable

__version__ = _installed_version("paimon-pyspark")
"""The one version is pyproject.toml's ``[project] version``, read from the installed metadata."""

__all__ = [
    "Catalog",
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
