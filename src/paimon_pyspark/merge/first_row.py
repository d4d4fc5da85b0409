"""The first-row merge engine: the oldest record of a key wins.

Mirrors org.apache.paimon.mergetree.compact.FirstRowMergeFunction: a retraction among several
records of a key is an error unless ``ignore-delete`` is set, in which case it is skipped (and a
key whose records are all retractions yields nothing). A key with one record is passed through.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paimon_pyspark.errors import MergeError
from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.spec.key_value import DELETE, UPDATE_BEFORE


def merge(view: SortedRecords, groups: Groups, kinds: np.ndarray, ignore_delete: bool) -> pa.Table:
    """One row per key (Java's result record), sorted by key."""
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    merged_retract = retract & groups.row_multi
    if not ignore_delete:
        if merged_retract.any():
            raise MergeError(
                "The first-row merge engine can not accept DELETE/UPDATE_BEFORE records; "
                "set 'ignore-delete' = 'true' to ignore them."
            )
        return view.take(groups.starts)
    first = groups.first_where(~merged_retract)
    return view.take(first[first >= 0])
