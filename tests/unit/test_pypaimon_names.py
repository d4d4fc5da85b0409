"""pypaimon's names over ours: its exception names (pypaimon.catalog.catalog_exception) over
our one hierarchy, and its ``CoreOptions.BUCKET.key()`` constants over our option parser.

A program written for pypaimon catches our catalog errors with its own ``except`` clauses, can
raise the names with pypaimon's constructor arguments, and spells option keys as it did.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pytest

import paimon_pyspark
from paimon_pyspark import ConfigOption, CoreOptions, FileSystemCatalog, Schema, errors, options
from paimon_pyspark.errors import (
    CatalogError,
    CatalogException,
    ColumnAlreadyExistException,
    ColumnNotExistException,
    DatabaseAlreadyExistException,
    DatabaseNotExistException,
    DefinitionNotExistException,
    InvalidArgumentError,
    PaimonError,
    SchemaChangeError,
    TableAlreadyExistException,
    TableNotExistException,
    TagAlreadyExistException,
    TagNotExistException,
    ViewNotExistException,
)

# pypaimon 1.4.2's catalog_exception module, plus pypaimon 2.x's additions (last line).
PYPAIMON_CATALOG_EXCEPTIONS = [
    "CatalogException",
    "DatabaseNotExistException",
    "DatabaseAlreadyExistException",
    "DatabaseNoPermissionException",
    "TableNotExistException",
    "TableAlreadyExistException",
    "TableNoPermissionException",
    "ViewNotExistException",
    "ViewAlreadyExistException",
    "FunctionNotExistException",
    "FunctionAlreadyExistException",
    "ColumnNotExistException",
    "ColumnAlreadyExistException",
    "DefinitionNotExistException",
    "DefinitionAlreadyExistException",
    "DialectNotExistException",
    "DialectAlreadyExistException",
    "BranchNotExistException",
    "BranchAlreadyExistException",
    "TagNotExistException",
    *["TagAlreadyExistException", "IllegalArgumentError", "IllegalStateError"],
]


@dataclass
class PypaimonIdentifier:
    """The shape of pypaimon's Identifier that its exceptions use."""

    database: str
    object: str

    def get_full_name(self) -> str:
        return f"{self.database}.{self.object}"


@pytest.mark.parametrize("name", PYPAIMON_CATALOG_EXCEPTIONS)
def test_every_pypaimon_catalog_exception_name_is_one_of_ours(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, PaimonError)
    if name != "IllegalArgumentError":  # ours is raised by every kind of call, not the catalog's
        assert issubclass(cls, CatalogException)


def test_names_we_raise_are_our_classes_not_copies() -> None:
    assert CatalogException is CatalogError
    assert TableNotExistException is errors.TableNotExistError
    assert TableAlreadyExistException is errors.TableAlreadyExistError
    assert DatabaseNotExistException is errors.DatabaseNotExistError
    assert DatabaseAlreadyExistException is errors.DatabaseAlreadyExistError
    assert errors.IllegalArgumentError is InvalidArgumentError


def test_pypaimon_except_clauses_catch_the_catalogs_errors(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(pa.schema([("id", pa.int64())]))
    catalog.create_table("db.t", schema)
    caught: list[str] = []
    try:
        catalog.get_table("db.missing")
    except TableNotExistException as e:
        caught.append(str(e))
    try:
        catalog.create_table("db.t", schema)
    except TableAlreadyExistException as e:
        caught.append(str(e))
    try:
        catalog.get_database("nope")
    except DatabaseNotExistException as e:
        caught.append(str(e))
    try:
        catalog.create_database("db")
    except DatabaseAlreadyExistException as e:
        caught.append(str(e))
    assert caught == [
        "Table 'db.missing' does not exist.",
        "Table 'db.t' already exists.",
        "Database 'nope' does not exist.",
        "Database 'db' already exists.",
    ]
    with pytest.raises(CatalogException):
        catalog.drop_table("db.missing")


def test_pypaimon_constructor_arguments_are_accepted() -> None:
    ident = PypaimonIdentifier("db", "orders")
    e = TableNotExistException(ident)
    assert str(e) == "Table 'db.orders' does not exist." and e.identifier is ident
    assert str(TableAlreadyExistException(("db", "orders"))) == "Table 'db.orders' already exists."
    assert str(ViewNotExistException(ident)) == "View 'db.orders' does not exist."
    d = DefinitionNotExistException(ident, "spark")
    assert str(d) == "Definition 'spark' does not exist in 'db.orders'." and d.name == "spark"
    c = ColumnNotExistException("price")
    assert c.column == "price" and str(c) == "Column 'price' does not exist."
    assert str(ColumnAlreadyExistException("id", "db.t")) == (
        "Table 'db.t': column 'id' already exists."
    )
    assert str(TagNotExistException("t1")) == "Tag 't1' does not exist."
    assert TagAlreadyExistException("t1").tag == "t1"


def test_column_and_tag_errors_keep_the_kinds_they_were_raised_as() -> None:
    """A raise site that moves to the pypaimon name still satisfies its old ``except``."""
    assert issubclass(ColumnNotExistException, SchemaChangeError)
    assert issubclass(ColumnAlreadyExistException, SchemaChangeError)
    assert issubclass(TagNotExistException, InvalidArgumentError)
    assert issubclass(TagAlreadyExistException, InvalidArgumentError)


# --- CoreOptions constants -------------------------------------------------------------------

# constant -> the options.CoreOptions property that parses it: the constant's default must be
# what the property returns for a table that does not set the option.
PARSED_BY = {
    "BUCKET": "bucket",
    "FILE_FORMAT": "file_format",
    "FILE_COMPRESSION": "file_compression",
    "FILE_COMPRESSION_ZSTD_LEVEL": "zstd_level",
    "MANIFEST_COMPRESSION": "manifest_compression",
    "MANIFEST_TARGET_FILE_SIZE": "manifest_target_file_size",
    "PARTITION_DEFAULT_NAME": "partition_default_name",
    "PARTITION_GENERATE_LEGACY_NAME": "partition_legacy_name",
    "METADATA_STATS_MODE": "stats_mode",
    "DATA_FILE_PREFIX": "data_file_prefix",
    "MERGE_ENGINE": "merge_engine",
    "DYNAMIC_PARTITION_OVERWRITE": "dynamic_partition_overwrite",
    "POSTPONE_BATCH_WRITE_FIXED_BUCKET": "postpone_batch_write_fixed_bucket",
    "POSTPONE_DEFAULT_BUCKET_NUM": "postpone_default_bucket_num",
    "COMMIT_MAX_RETRIES": "commit_max_retries",
    "SOURCE_SPLIT_TARGET_SIZE": "source_split_target_size",
    "SOURCE_SPLIT_OPEN_FILE_COST": "source_split_open_file_cost",
    "DYNAMIC_BUCKET_TARGET_ROW_NUM": "dynamic_bucket_target_row_num",
    "DYNAMIC_BUCKET_MAX_BUCKETS": "dynamic_bucket_max_buckets",
    "IGNORE_DELETE": "ignore_delete",
}


def _constants() -> dict[str, ConfigOption[Any]]:
    return {n: v for n, v in vars(CoreOptions).items() if isinstance(v, ConfigOption)}


def test_core_options_constants_spell_keys_as_pypaimon() -> None:
    assert CoreOptions.BUCKET.key() == "bucket"
    assert CoreOptions.BUCKET.default_value() == -1 and CoreOptions.BUCKET.has_default_value()
    assert CoreOptions.BUCKET_KEY.key() == "bucket-key"
    assert not CoreOptions.BUCKET_KEY.has_default_value()
    assert CoreOptions.SOURCE_SPLIT_TARGET_SIZE.default_value() == 128 * 1024 * 1024
    assert CoreOptions.COMMIT_MIN_RETRY_WAIT.default_value() == dt.timedelta(milliseconds=10)
    keys = [c.key() for c in _constants().values()]
    assert len(keys) == len(set(keys)) > 50


@pytest.mark.parametrize("name", sorted(PARSED_BY))
def test_core_options_defaults_are_what_our_parser_uses(name: str) -> None:
    option = getattr(CoreOptions, name)
    assert getattr(options.CoreOptions({}), PARSED_BY[name]) == option.default_value()


def test_core_options_is_still_our_parser() -> None:
    parsed = CoreOptions({CoreOptions.BUCKET.key(): "4", CoreOptions.FILE_FORMAT.key(): "ORC"})
    assert isinstance(parsed, options.CoreOptions)
    assert (parsed.bucket, parsed.file_format) == (4, "orc")
    assert paimon_pyspark.CoreOptions is CoreOptions


def test_core_options_keys_create_a_table(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db", ignore_if_exists=True)
    schema = Schema.from_pyarrow_schema(
        pa.schema([("id", pa.int64()), ("v", pa.string())]),
        options={CoreOptions.BUCKET.key(): "3", CoreOptions.BUCKET_KEY.key(): "id"},
    )
    catalog.create_table("db.opts", schema)
    table = catalog.get_table("db.opts")
    assert (table.options.bucket, table.options.bucket_key) == (3, ["id"])


def test_pypaimons_exception_module_path_has_every_name() -> None:
    """``from pypaimon.catalog.catalog_exception import X`` becomes ours by the package name."""
    from paimon_pyspark import errors
    from paimon_pyspark.catalog import catalog_exception

    exported = set(catalog_exception.__all__)
    wanted = {n for n in vars(errors) if n.endswith("Exception")}
    assert wanted <= exported
    for name in exported:
        assert getattr(catalog_exception, name) is getattr(errors, name)
