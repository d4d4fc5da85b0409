"""The deduplicate merge engine: the newest record of a key wins.

Mirrors org.apache.paimon.mergetree.compact.DeduplicateMergeFunction. With ``ignore-delete``
retractions are skipped inside the merge (the newest addition wins; a key whose records are all
retractions yields nothing), as Java does for files written before 0.8 that still hold them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from paimon_pyspark.merge.groups import Groups, SortedRecords
from paimon_pyspark.spec.key_value import DELETE, UPDATE_BEFORE


def merge(view: SortedRecords, groups: Groups, kinds: np.ndarray, ignore_delete: bool) -> pa.Table:
    """One row per key (Java's result record), sorted by key."""
    if not ignore_delete:
        return view.take(groups.lasts)
    retract = (kinds == UPDATE_BEFORE) | (kinds == DELETE)
    # A lone record passes through even when it is a retraction (ReducerMergeFunctionWrapper).
    last = groups.last_where(~retract | ~groups.row_multi)
    return view.take(last[last >= 0])
