"""How a table's rows are spread over buckets, decided once per table from its schema and options.

Mirrors org.apache.paimon.table.BucketMode (Java's names) and the bucket constants of
org.apache.paimon.table.BucketMode / BucketFunction: ``bucket = N > 0`` hashes the bucket key
(HASH_FIXED); ``bucket = -1`` is BUCKET_UNAWARE for append tables, HASH_DYNAMIC for primary-key
tables whose key holds every partition key, KEY_DYNAMIC (cross-partition upsert) otherwise;
``bucket = -2`` is POSTPONE_MODE.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

DYNAMIC_BUCKET = -1
"""The ``bucket`` option of dynamic-bucket and bucket-unaware tables."""

POSTPONE_BUCKET = -2
"""Java's BucketMode.POSTPONE_BUCKET: the ``bucket`` option, bucket id and total buckets of
postpone files."""


class BucketMode(Enum):
    HASH_FIXED = "HASH_FIXED"
    HASH_DYNAMIC = "HASH_DYNAMIC"
    KEY_DYNAMIC = "KEY_DYNAMIC"
    BUCKET_UNAWARE = "BUCKET_UNAWARE"
    POSTPONE_MODE = "POSTPONE_MODE"

    def __str__(self) -> str:
        return self.value

    @staticmethod
    def of(bucket: int, primary_keys: Sequence[str], partition_keys: Sequence[str]) -> BucketMode:
        if not primary_keys:
            return BucketMode.BUCKET_UNAWARE if bucket == DYNAMIC_BUCKET else BucketMode.HASH_FIXED
        if bucket == POSTPONE_BUCKET:
            return BucketMode.POSTPONE_MODE
        if bucket == DYNAMIC_BUCKET:
            if set(primary_keys) >= set(partition_keys):
                return BucketMode.HASH_DYNAMIC
            return BucketMode.KEY_DYNAMIC
        return BucketMode.HASH_FIXED

    @property
    def is_dynamic(self) -> bool:
        """Buckets chosen by an assigner that remembers keys (``bucket = -1`` with a key)."""
        return self in (BucketMode.HASH_DYNAMIC, BucketMode.KEY_DYNAMIC)
