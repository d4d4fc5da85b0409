"""The key-value layout of primary-key data files: system fields, their ids, row kinds.

Mirrors org.apache.paimon.KeyValue, org.apache.paimon.table.SpecialFields and
org.apache.paimon.types.RowKind. A primary-key data file holds, in this order: ``_KEY_<k>`` for
each trimmed primary-key field (its id shifted by ``KEY_FIELD_ID_START``; omitted in thin mode),
``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, then every table column with its own id.
"""

from __future__ import annotations

from collections.abc import Sequence

from paimon_pyspark.types.data_types import AtomicType, DataField

KEY_FIELD_PREFIX = "_KEY_"
KEY_FIELD_ID_START = 2147483647 // 2
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
SEQUENCE_NUMBER_ID = 2147483646
VALUE_KIND = "_VALUE_KIND"
VALUE_KIND_ID = 2147483645

# RowKind bytes, as stored in _VALUE_KIND.
INSERT = 0
UPDATE_BEFORE = 1
UPDATE_AFTER = 2
DELETE = 3
ROW_KIND_NAMES = {"+I": INSERT, "-U": UPDATE_BEFORE, "+U": UPDATE_AFTER, "-D": DELETE}
RETRACTS = (UPDATE_BEFORE, DELETE)


def key_field(f: DataField) -> DataField:
    return DataField(KEY_FIELD_ID_START + f.id, KEY_FIELD_PREFIX + f.name, f.type)


def kv_fields(
    fields: Sequence[DataField], trimmed_primary_keys: Sequence[str], thin: bool = False
) -> list[DataField]:
    """The physical fields of a primary-key data file for a table with ``fields``."""
    by_name = {f.name: f for f in fields}
    keys = [] if thin else [key_field(by_name[k]) for k in trimmed_primary_keys]
    system = [
        DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, AtomicType(name="BIGINT", nullable=False)),
        DataField(VALUE_KIND_ID, VALUE_KIND, AtomicType(name="TINYINT", nullable=False)),
    ]
    return [*keys, *system, *fields]
