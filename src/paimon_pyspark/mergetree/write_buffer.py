"""The write buffer of primary-key writers: one memory budget per write, spilling to local disk.

Mirrors org.apache.paimon.mergetree.SortBufferWriteBuffer over
org.apache.paimon.sort.BinaryExternalSortBuffer, and org.apache.paimon.memory.MemoryPoolFactory:

* ``WriteBufferPool`` is the ``write-buffer-size`` of one TableWrite, shared by all its
  key-value writers (Java's memory pool per write). When a buffer grows past it, the largest
  *other* buffer gives its memory back (Java preempts the largest other owner), or the growing
  one when it is the only one holding memory.
* A buffer gives memory back by spilling (``write-buffer-spillable``, Java's default true):
  its records, sorted as the merge orders them, go to a local temp file (Arrow IPC, compressed
  with ``spill-compression``), and the buffer starts over in memory. Without spilling, or once
  its spill files reach ``write-buffer-spill.max-disk-size``, the writer flushes the buffer as
  a level-0 sorted run instead (Java's flushMemory returning false).
* At a flush the spill files and the records in memory are merged as a stream of key slices
  (``sort_merge``) into one sorted run; once ``local-sort.max-num-file-handles`` spill files
  exist they are first merged into one (Java's BinaryExternalMerger), so a flush never opens
  more. Spill files live under the OS temp directory and are deleted at the flush, at abort,
  or when the buffer is garbage collected.

Memory is accounted in Arrow bytes of the buffered records, as before.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator, Sequence
from typing import Protocol

import pyarrow as pa

from paimon_pyspark.merge.merge_function import MergeSettings, sort_order, sort_records
from paimon_pyspark.mergetree.sort_merge import (
    MERGE_BATCH_ROWS,
    concat,
    merge_sorted_runs,
    slices_of,
)
from paimon_pyspark.mergetree.spill import SpillFile, SpillSettings, delete_all

ONE_MERGE_BYTES = 32 * 1024 * 1024
"""A buffer up to this many bytes that never spilled is merged at once at its flush."""


class SortBuffer:
    """The records of one writer: in memory, and sorted runs spilled to local disk.

    ``memory_bytes`` is what the records in memory take; ``sorted_slices`` hands all records
    out as key slices (unsorted within a slice, never splitting a key) for the merge.
    """

    def __init__(
        self,
        key_names: Sequence[str],
        merge_settings: MergeSettings,
        spill: SpillSettings,
        batch_rows: int = MERGE_BATCH_ROWS,
    ) -> None:
        self.key_names = list(key_names)
        self.merge_settings = merge_settings
        self.spill_settings = spill
        self.batch_rows = batch_rows
        self._rows: list[pa.Table] = []
        self.memory_bytes = 0
        self._spilled: list[SpillFile] = []
        self._finalizer = weakref.finalize(self, delete_all, self._spilled)

    @property
    def empty(self) -> bool:
        return not self._rows and not self._spilled

    @property
    def spill_files(self) -> list[str]:
        return [f.path for f in self._spilled]

    @property
    def disk_bytes(self) -> int:
        return sum(f.size for f in self._spilled)

    def put(self, rows: pa.Table) -> None:
        if rows.num_rows:
            self._rows.append(rows)
            self.memory_bytes += rows.nbytes

    def spill(self) -> bool:
        """Move the records in memory to a sorted spill file; False when the buffer may not
        spill (not spillable, or its spill files reached the disk budget)."""
        s = self.spill_settings
        if not s.spillable or self.disk_bytes >= s.max_disk_size:
            return False
        if not self._rows:
            return True
        self._spilled.append(SpillFile.write(self._sorted_memory(), s))
        self._rows, self.memory_bytes = [], 0
        if len(self._spilled) >= s.max_fan_in:
            merged = SpillFile.write(self._merged_spills(), s)
            delete_all(self._spilled)
            self._spilled.append(merged)
        return True

    def sorted_slices(self) -> Iterator[pa.Table]:
        """Every record, as key slices in key order (the records of a slice in no order).

        Records only in memory, up to ``ONE_MERGE_BYTES``, are one slice (one merge is the
        fastest); more are sorted once and handed out in slices, so the merge never holds a
        second copy of a big buffer."""
        if not self._spilled and self.memory_bytes <= ONE_MERGE_BYTES:
            if self._rows:
                yield self._memory()
            return
        runs: list[Iterator[pa.Table]] = [f.batches() for f in self._spilled]
        if self._rows:
            runs.append(self._sorted_memory())
        for pieces in merge_sorted_runs(runs, self.key_names):
            records = concat(pieces)
            if records is not None:
                yield records

    def clear(self) -> None:
        """Drop the records, in memory and on disk."""
        self._rows, self.memory_bytes = [], 0
        delete_all(self._spilled)

    def _memory(self) -> pa.Table:
        return pa.concat_tables(self._rows) if len(self._rows) > 1 else self._rows[0]

    def _sorted_memory(self) -> Iterator[pa.Table]:
        """The records in memory in merge order, in batches (taken batch by batch, so the
        sort needs an index, not a second copy of the buffer)."""
        memory = self._memory()
        order = sort_order(memory, self.key_names, self.merge_settings)
        for start in range(0, len(order), self.batch_rows):
            yield memory.take(pa.array(order[start : start + self.batch_rows]))

    def _merged_spills(self) -> Iterator[pa.Table]:
        runs = [f.batches() for f in self._spilled]
        for pieces in merge_sorted_runs(runs, self.key_names):
            records = concat(pieces)
            if records is not None:
                yield from slices_of(
                    sort_records(records, self.key_names, self.merge_settings), self.batch_rows
                )


class MemoryOwner(Protocol):
    """A writer whose buffer draws on a WriteBufferPool (Java's MemoryOwner)."""

    @property
    def memory_occupancy(self) -> int: ...

    def flush_memory(self) -> bool:
        """Give the buffer's memory back (spill, else flush); False if busy right now."""
        ...


class WriteBufferPool:
    """``write-buffer-size`` bytes shared by the buffers of one TableWrite (Java's
    MemoryPoolFactory over the write's memory pool).

    Owners report what they take (``reserve``) and give back (``release``). Writers run on a
    few threads; one that took the buffers past the budget makes the largest other owner give
    its memory back, else itself. An owner busy on another thread is passed over (it is giving
    memory back already, or is checked again at the next reservation).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._owners: list[MemoryOwner] = []
        self._used = 0
        self._lock = threading.Lock()
        self.preemptions = 0
        """How often an owner gave memory back for another (Java's bufferPreemptCount)."""

    @property
    def used(self) -> int:
        return self._used

    def register(self, owner: MemoryOwner) -> None:
        with self._lock:
            self._owners.append(owner)

    def unregister(self, owner: MemoryOwner) -> None:
        with self._lock:
            if owner in self._owners:
                self._owners.remove(owner)

    def release(self, nbytes: int) -> None:
        with self._lock:
            self._used -= nbytes

    def reserve(self, owner: MemoryOwner, nbytes: int) -> None:
        """``owner`` buffered ``nbytes`` more: give memory back until the budget holds."""
        with self._lock:
            self._used += nbytes
        tried: list[MemoryOwner] = []
        while self._used > self.size:
            with self._lock:
                others = [
                    o
                    for o in self._owners
                    if o is not owner and o not in tried and o.memory_occupancy > 0
                ]
            victim = max(others, key=lambda o: o.memory_occupancy, default=None)
            if victim is None:
                if owner in tried or owner.memory_occupancy == 0:
                    return
                victim = owner
            tried.append(victim)
            if victim.flush_memory() and victim is not owner:
                self.preemptions += 1
