"""The partial-update merge engine: newer non-null fields overwrite older ones.

Mirrors org.apache.paimon.mergetree.compact.PartialUpdateMergeFunction without sequence groups
(``fields.<f>.sequence-group`` is refused at table load). What Java does with the records of one
key, oldest first, and how it is computed here for all keys at once:

* +I/+U: every non-null field overwrites the row's field.
* -U/-D: an error, unless ``ignore-delete`` (skipped) or
  ``partial-update.remove-record-on-delete``: then a -D resets the row to the -D's own values
  (later additions still overwrite on top of them) and a -U is skipped.
* The first record of the key seeds the row with all its fields, even when it is a retraction
  (Java's ``initRow``).

So each field's value is the one of the last row, from the last reset (the last -D with
remove-record-on-delete, else the first record) on, that is the reset itself or an addition
with a non-null value. The result kind is -D if the last record was such a -D, or if no
addition was seen; else +I. Its sequence number is the last record's, or with ``ignore-delete``
the last addition's (0 if none, as Java leaves it).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import MergeError
from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.spec.key_value import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_BEFORE,
    VALUE_KIND,
)

_DELETE_ERROR = (
    "By default, the partial-update merge engine can not accept delete records; configure "
    "'ignore-delete' to ignore them, or 'partial-update.remove-record-on-delete' to remove the "
    "whole row when a -D record arrives."
)


def merge(
    view: SortedRecords,
    groups: Groups,
    kinds: np.ndarray,
    ignore_delete: bool,
    remove_record_on_delete: bool,
) -> pa.Table:
    """One row per key (Java's result record), sorted by key."""
    multi = groups.row_multi
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    add = ~retract
    if not ignore_delete and not remove_record_on_delete and (retract & multi).any():
        raise MergeError(_DELETE_ERROR)
    if remove_record_on_delete:
        last_reset = groups.last_where(kinds == DELETE)
        reset = np.where(last_reset >= 0, last_reset, groups.starts)
    else:
        reset = groups.starts
    row_reset = groups.broadcast(reset)
    arange = groups.arange
    in_segment = arange >= row_reset
    is_reset = arange == row_reset
    single = groups.single

    seq = view.sequence_numbers
    last_kind = kinds[groups.lasts]
    deleted = ~groups.any(add)
    if remove_record_on_delete:
        deleted |= last_kind == DELETE
    kind = np.where(single, last_kind, np.where(deleted, DELETE, INSERT)).astype(np.int8)
    if ignore_delete:
        last_add = groups.last_where(add)
        result_seq = np.where(last_add >= 0, seq[np.maximum(last_add, 0)], 0)
    else:
        result_seq = seq[groups.lasts]
    result_seq = np.where(single, seq[groups.starts], result_seq)

    columns: list[pa.ChunkedArray | pa.Array] = []
    for name in view.column_names:
        if name == SEQUENCE_NUMBER:
            columns.append(pa.array(result_seq, pa.int64()))
        elif name == VALUE_KIND:
            columns.append(pa.array(kind, pa.int8()))
        else:
            # The reset row is always a candidate, so pos >= reset >= 0.
            pos = groups.last_where(in_segment & ((add & view.valid(name)) | is_reset))
            columns.append(view.take_column(name, np.where(single, groups.starts, pos)))
    return pa.Table.from_arrays(columns, schema=view.schema)
