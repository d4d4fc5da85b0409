"""Merging sorted runs as a stream: key slices of all runs at a time, in key order.

Mirrors what org.apache.paimon.mergetree.compact.SortMergeReader does for compaction and for a
spilled write buffer (BinaryExternalSortBuffer's merge of its sorted spill files), but in Arrow
batches instead of one record at a time. Each run is read batch by batch; every round takes,
from all runs, the rows whose key is below the *cut*, the smallest last key of the current
batch among the runs that still have data. No run can hold a smaller key later, so every key
of the slice has all its records in it, and the merge function (``merge/merge_function.py``,
which reduces each key's records on its own) gives on a slice what it would give on all records.

Keys compare as Java orders a bucket (``spec/float_keys.py``): FLOAT/DOUBLE through their
normalized key, everything else as Arrow orders it (strings and binaries by unsigned bytes,
decimals and timestamps by value). Java's comparator also joins distinct float keys (-0.0 with
+0.0, a NaN with the key before it); a cut that would part such a group is moved back to the
group's first key, so slices never split what one merge would join.

Memory is one batch per run plus the rows a run holds below the cut, whatever the run sizes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark.merge.merge_function import group_starts
from paimon_pyspark.spec import float_keys

MERGE_BATCH_ROWS = 65_536
"""Rows read at a time from each sorted run."""


class _Run:
    """One sorted run read batch by batch: the rows read and not yet taken."""

    def __init__(self, batches: Iterable[pa.Table]) -> None:
        self._batches = iter(batches)
        self._rows: pa.Table | None = None
        self.done = False

    @property
    def rows(self) -> pa.Table:
        assert self._rows is not None
        return self._rows

    @property
    def empty(self) -> bool:
        return self._rows is None or self._rows.num_rows == 0

    def fill(self) -> None:
        """Make the rows held non-empty unless the run is over."""
        while not self.done and self.empty:
            self.extend()

    def extend(self) -> None:
        """Read the next batch behind the rows held."""
        nxt = next(self._batches, None)
        if nxt is None:
            self.done = True
        elif self.empty:
            self._rows = nxt
        elif nxt.num_rows:
            self._rows = pa.concat_tables([self.rows, nxt])

    def take(self, n: int) -> pa.Table | None:
        """The first ``n`` rows held (None when the run never had rows)."""
        if self._rows is None:
            return None
        taken, self._rows = self._rows.slice(0, n), self._rows.slice(n)
        return taken


def _sortable(table: pa.Table, key_names: Sequence[str]) -> list[pa.Array]:
    """The key columns as Arrow compares them in Java's order (floats normalized)."""
    out = []
    for k in key_names:
        col = table.column(k).combine_chunks()
        out.append(float_keys.sortable(col) if float_keys.is_float(col.type) else col)
    return out


def _sort_keys(keys: pa.Table, key_names: Sequence[str]) -> pa.Array:
    """Indices ordering the rows of ``keys`` by key, as :func:`_sortable` compares them."""
    cols = _sortable(keys, key_names)
    table = pa.table({f"_{i}": c for i, c in enumerate(cols)})
    return pc.sort_indices(table, sort_keys=[(n, "ascending") for n in table.column_names])


def _count_below(columns: Sequence[pa.Array], bound: Sequence[pa.Scalar]) -> int:
    """Rows of a sorted run whose key is below ``bound``: they are a prefix, so a count."""
    below: pa.Array | None = None
    for col, value in zip(reversed(columns), reversed(bound), strict=True):
        less = pc.fill_null(pc.less(col, value), False)
        if below is None:
            below = less
        else:
            same = pc.fill_null(pc.equal(col, value), False)
            below = pc.or_(less, pc.and_(same, below))
    assert below is not None
    return int(pc.sum(below).as_py() or 0)


def merge_sorted_runs(
    runs: Sequence[Iterable[pa.Table]], key_names: Sequence[str]
) -> Iterator[list[pa.Table | None]]:
    """Slices of ``runs`` (each an iterable of tables sorted by ``key_names``: one sorted run)
    in ascending key order. A slice holds one table per run (None for a run that never had
    rows), and no key, nor a group of float keys Java's comparator joins, is in two slices."""
    cursors = [_Run(r) for r in runs]
    names = list(key_names)
    floats: bool | None = None
    while True:
        for c in cursors:
            c.fill()
        live = [c for c in cursors if not c.empty]
        if not live:
            return
        if floats is None:
            floats = any(float_keys.is_float(live[0].rows.schema.field(k).type) for k in names)
        open_runs = [c for c in live if not c.done]
        if not open_runs:
            yield [c.take(0 if c.empty else c.rows.num_rows) for c in cursors]
            continue
        lasts = pa.concat_tables(
            [c.rows.select(names).slice(c.rows.num_rows - 1) for c in open_runs]
        )
        lowest = int(_sort_keys(lasts, names)[0].as_py())
        cut = lasts.slice(lowest, 1)
        counts = _counts(cursors, names, cut)
        if floats and any(counts):
            counts = _keep_joined_groups(cursors, names, cut, counts)
        if not any(counts):
            open_runs[lowest].extend()  # every row it holds is at the cut: read on
            continue
        yield [c.take(n) for c, n in zip(cursors, counts, strict=True)]


def _counts(cursors: Sequence[_Run], names: list[str], cut: pa.Table) -> list[int]:
    bound = [col[0] for col in _sortable(cut, names)]
    return [0 if c.empty else _count_below(_sortable(c.rows, names), bound) for c in cursors]


def _keep_joined_groups(
    cursors: Sequence[_Run], names: list[str], cut: pa.Table, counts: list[int]
) -> list[int]:
    """``counts`` moved back so that the slice does not end inside a group of keys that Java's
    comparator joins with the key at the cut (the first key left after the slice)."""
    taken = [c.rows.slice(0, n).select(names) for c, n in zip(cursors, counts, strict=True) if n]
    keys = pa.concat_tables(taken)
    ordered = keys.take(_sort_keys(keys, names))
    last = ordered.slice(ordered.num_rows - 1, 1)
    if len(group_starts(pa.concat_tables([last, cut]), names)) == 2:
        return counts
    starts = group_starts(ordered, names)
    return _counts(cursors, names, ordered.slice(int(starts[-1]), 1))


def slices_of(table: pa.Table, batch_rows: int) -> Iterator[pa.Table]:
    """``table`` in zero-copy slices of at most ``batch_rows`` rows (a sorted run in memory)."""
    for start in range(0, table.num_rows, batch_rows):
        yield table.slice(start, batch_rows)


def concat(pieces: Sequence[pa.Table | None]) -> pa.Table | None:
    """The rows of some pieces of a slice as one table (unsorted), None if there are none."""
    kept = [p for p in pieces if p is not None and p.num_rows]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else pa.concat_tables(kept)
