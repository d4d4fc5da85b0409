"""The HASH index files a dynamic-bucket write keeps up to date (HASH_DYNAMIC).

Mirrors org.apache.paimon.index.DynamicBucketIndexMaintainer: every (partition, bucket) the
write touches gets the bucket's previous key hashes plus the hashes of every record written
(deletes too), written as a new complete file when the set grew, shipped in the message's
``new_index_files``; the commit replaces the previous entry. The buckets themselves are chosen
by the table's router (bucket/routers.py), whose routed batches carry the key hashes.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from paimon_pyspark.bucket.dynamic import HashIndex
from paimon_pyspark.spec.manifest import IndexFileMeta
from paimon_pyspark.store.paths import PathFactory

I32 = npt.NDArray[np.int32]


class DynamicBucketIndexMaintainer:
    """Collects the key hashes written per bucket; ``index_files`` writes a bucket's new file."""

    def __init__(self, index: HashIndex, path_factory: PathFactory) -> None:
        self.index = index
        self.path_factory = path_factory
        self._written: dict[tuple[bytes, int], list[I32]] = {}

    def track(self, partition: bytes, bucket: int, hashes: I32) -> None:
        """Record the key hashes written to (partition, bucket)."""
        self._written.setdefault((partition, bucket), []).append(hashes)

    def index_files(self, partition: bytes, bucket: int) -> tuple[IndexFileMeta, ...]:
        """The bucket's new HASH index file, if its key set grew (Java's prepareCommit)."""
        written = self._written.pop((partition, bucket), None)
        if not written:
            return ()
        previous = self.index.entry(partition, bucket)
        handler = self.index.handler
        old = handler.read_hash(previous) if previous is not None else np.zeros(0, np.int32)
        old_set = sorted_unique(old)
        merged = sorted_unique(np.concatenate([old_set, *written]))
        if len(merged) == len(old_set) and previous is not None:
            return ()
        return (handler.write_hash(merged.astype(np.int32), self.path_factory),)


def sorted_unique(values: I32) -> I32:
    """``np.unique`` by one sort: numpy's hash-based unique is several times slower on the
    hundreds of thousands of key hashes a bucket holds."""
    out = np.sort(values)
    if len(out) < 2:
        return out
    keep = np.empty(len(out), bool)
    keep[0] = True
    np.not_equal(out[1:], out[:-1], out=keep[1:])
    return out[keep]
