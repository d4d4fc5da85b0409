"""The user-facing table Schema, and the validation Java applies when a table is created.

Mirrors org.apache.paimon.schema.Schema and SchemaValidation (the parts that concern the table
kinds paimon_pyspark writes). Named as pypaimon names it, so its users can switch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from paimon_pyspark import options as opts
from paimon_pyspark.errors import InvalidArgumentError, OptionError, SchemaError, describe
from paimon_pyspark.format.files import check_format_types
from paimon_pyspark.merge.merge_function import check_merge_options
from paimon_pyspark.spec import file_index
from paimon_pyspark.spec.table_schema import TableSchema
from paimon_pyspark.store.bucket_mode import DYNAMIC_BUCKET, POSTPONE_BUCKET
from paimon_pyspark.types.arrow import highest_field_id
from paimon_pyspark.types.data_types import (
    ArrayType,
    DataField,
    DataType,
    MapType,
    MultisetType,
    RowType,
)
from paimon_pyspark.types.pypaimon_types import PyarrowFieldParser

BUCKET_KEY_WITH_UNAWARE = (
    "Cannot define 'bucket-key' with bucket = -1, please remove the 'bucket-key' setting "
    "or specify a bucket number."
)


@dataclass
class Schema:
    """Columns, keys and options of a table to create.

    ``fields`` takes our DataFields or pypaimon's spellings (types/pypaimon_types.py), which
    build the same ones; a pyarrow field's ``description`` metadata becomes the column comment,
    as in pypaimon.
    """

    fields: list[DataField] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None

    @staticmethod
    def from_pyarrow_schema(
        pa_schema: pa.Schema,
        partition_keys: list[str] | None = None,
        primary_keys: list[str] | None = None,
        options: dict[str, Any] | None = None,
        comment: str | None = None,
    ) -> Schema:
        if not isinstance(pa_schema, pa.Schema):
            raise InvalidArgumentError(
                f"Schema.from_pyarrow_schema: pa_schema must be a pyarrow.Schema (a table's "
                f"is table.schema), got {describe(pa_schema)}."
            )
        for arg, keys in (("partition_keys", partition_keys), ("primary_keys", primary_keys)):
            if keys is not None and (
                isinstance(keys, str) or not all(isinstance(k, str) for k in keys)
            ):
                raise InvalidArgumentError(
                    f"Schema.from_pyarrow_schema: {arg} must be a list of column names, got "
                    f"{describe(keys)}."
                )
        if options is not None and not isinstance(options, Mapping):
            raise InvalidArgumentError(
                f"Schema.from_pyarrow_schema: options must be a dict, got {describe(options)}."
            )
        return Schema(
            fields=PyarrowFieldParser.to_paimon_schema(pa_schema),
            partition_keys=list(partition_keys or []),
            primary_keys=list(primary_keys or []),
            options={str(k): str(v) for k, v in (options or {}).items()},
            comment=comment,
        )

    def to_table_schema(self, schema_id: int, time_millis: int, table: str) -> TableSchema:
        """Validate as Java does at CREATE TABLE, and build schema file ``schema_id``."""
        options = dict(self.options)
        partition_keys = list(self.partition_keys)
        primary_keys = list(self.primary_keys)
        # Java moves DDL-time 'partition' / 'primary-key' options into the key lists.
        if "partition" in options:
            if partition_keys:
                raise SchemaError(f"Table '{table}': partition keys given twice.")
            partition_keys = _split(options.pop("partition"))
        if "primary-key" in options:
            if primary_keys:
                raise SchemaError(f"Table '{table}': primary keys given twice.")
            primary_keys = _split(options.pop("primary-key"))
        names = [f.name for f in self.fields]
        _check_unique(names, table)
        for key_kind, keys in (("partition key", partition_keys), ("primary key", primary_keys)):
            _check_unique(keys, table, key_kind)
            for k in keys:
                if k not in names:
                    raise SchemaError(
                        f"Table '{table}': {key_kind} '{k}' is not a column (columns: {names})."
                    )
        fields = [
            DataField(f.id, f.name, f.type.copy(nullable=False), f.description, f.default_value)
            if f.name in primary_keys
            else f
            for f in self.fields
        ]
        types = {f.name: f.type for f in self.fields}
        _check_key_and_system_fields(names, types, partition_keys, primary_keys, options, table)
        opts.check_supported(options, table)
        opts.check_ranges(options, table, bool(primary_keys))
        file_index.check_columns(file_index.parse_options(options, table), fields, table)
        opts.CoreOptions(options, table).check_time_travel()
        check_merge_options(options, fields, primary_keys, table)
        check_format_types(fields, opts.CoreOptions(options).file_format, table)
        _validate_buckets(opts.CoreOptions(options), names, partition_keys, primary_keys, table)
        return TableSchema(
            id=schema_id,
            fields=tuple(fields),
            highest_field_id=highest_field_id(fields),
            partition_keys=tuple(partition_keys),
            primary_keys=tuple(primary_keys),
            options=options,
            comment=self.comment,
            time_millis=time_millis,
        )


def _split(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def _check_unique(names: list[str], table: str, what: str = "column") -> None:
    seen: set[str] = set()
    for n in names:
        if n in seen:
            raise SchemaError(f"Table '{table}': {what} '{n}' is given more than once.")
        seen.add(n)


def _validate_buckets(
    o: opts.CoreOptions,
    names: list[str],
    partition_keys: list[str],
    primary_keys: list[str],
    table: str,
) -> None:
    bucket = o.bucket  # in range: opts.check_ranges ran first
    bucket_key = o.bucket_key
    if bucket == DYNAMIC_BUCKET and bucket_key:
        raise OptionError(BUCKET_KEY_WITH_UNAWARE)
    if bucket == POSTPONE_BUCKET and not primary_keys:
        raise OptionError(f"Table '{table}': bucket = -2 (postpone) needs a primary key.")
    for k in bucket_key:
        if k not in names:
            raise OptionError(f"Table '{table}': bucket-key field '{k}' is not a column.")
        if k in partition_keys:
            raise OptionError(
                f"Table '{table}': bucket-key field '{k}' must not be a partition key."
            )
        if primary_keys and k not in primary_keys:
            raise OptionError(
                f"Table '{table}': bucket-key field '{k}' must be part of the primary key."
            )
    if bucket > 0 and not primary_keys and not bucket_key:
        raise OptionError(
            f"Table '{table}': you should define a 'bucket-key' for bucketed append mode."
        )


# Java's SpecialFields.SYSTEM_FIELD_NAMES and KEY_FIELD_PREFIX: key-value files hold these.
_SYSTEM_FIELD_NAMES = ("_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind", "_ROW_ID")
_KEY_FIELD_PREFIX = "_KEY_"


def _check_upsert_key(
    names: list[str],
    types: Mapping[str, DataType],
    primary_keys: list[str],
    options: Mapping[str, str],
    table: str,
) -> None:
    """Java's SchemaValidation of ``upsert-key``: its fields exist and are primitive, and a
    table has an upsert key or a primary key, not both."""
    upsert = opts.CoreOptions(dict(options), table).upsert_key
    for name in upsert:
        if name not in names:
            raise OptionError(f"Table '{table}': cannot find field '{name}' of 'upsert-key'.")
        if isinstance(types[name], ArrayType | MapType | MultisetType | RowType):
            raise OptionError(
                f"Table '{table}': the type {types[name]} in upsert key field '{name}' is "
                "unsupported."
            )
    if upsert and primary_keys:
        raise OptionError(
            f"Table '{table}': cannot define 'upsert-key' {upsert} with 'primary-key' "
            f"{primary_keys}."
        )


def _check_key_and_system_fields(
    names: list[str],
    types: Mapping[str, DataType],
    partition_keys: list[str],
    primary_keys: list[str],
    options: dict[str, str],
    table: str,
) -> None:
    """Java's SchemaValidation and TableSchema checks that need no option parsing, at create:
    a table that passed them could otherwise be created and then never read or written."""
    for name in names:
        if name in _SYSTEM_FIELD_NAMES:
            raise SchemaError(
                f"Table '{table}': field name '{name}' is a system field name "
                f"{list(_SYSTEM_FIELD_NAMES)}; rename the column."
            )
        if name.startswith(_KEY_FIELD_PREFIX):
            raise SchemaError(
                f"Table '{table}': field name '{name}' cannot start with '{_KEY_FIELD_PREFIX}'."
            )
    if primary_keys and not [k for k in primary_keys if k not in partition_keys]:
        raise SchemaError(
            f"Table '{table}': primary key {primary_keys} should not be the same as the "
            f"partition fields {partition_keys}: a partition would hold one record only."
        )
    _check_upsert_key(names, types, primary_keys, options, table)
    for key in ("sequence.field", "rowkind.field"):
        for field_name in _split(options.get(key, "")):
            if field_name not in names:
                raise OptionError(
                    f"Table '{table}': option '{key}' names '{field_name}', which is not a "
                    f"column (columns: {names})."
                )
