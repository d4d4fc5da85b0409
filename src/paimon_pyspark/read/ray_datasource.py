"""A Ray Data datasource over a table's splits: ``TableRead.to_ray``.

Mirrors pypaimon's ``read.datasource.ray_datasource.RayDatasource``. The splits are dealt to at
most ``parallelism`` read tasks, largest first onto the task with the fewest bytes so far; an
append table's splits are cut into single files first (nothing to merge), so a read of a few
large buckets still uses every worker, while a primary-key split stays whole (its files merge).

Ray pickles each read task to a worker. A task holds the TableRead, which pickles as plain
values and reloads the table there (``TableRead.__reduce__``, read/store_ref.py), and its splits
as versioned bytes (read/split_codec.py); nothing read from the warehouse goes as a pickle.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from functools import partial

import pyarrow as pa
from ray.data.block import BlockMetadata
from ray.data.context import DataContext
from ray.data.datasource import Datasource, ReadTask

from paimon_pyspark.read.scan import DataSplit
from paimon_pyspark.read.split_codec import decode_splits, encode_splits
from paimon_pyspark.read.table_read import TableRead
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.store.external_paths import planned_file_path


class RayDatasource(Datasource):
    def __init__(self, table_read: TableRead, splits: Sequence[DataSplit]) -> None:
        self.table_read = table_read
        if table_read.table.primary_keys:
            self.splits = list(splits)
        else:
            self.splits = [_one_file(s, f) for s in splits for f in s.files]

    def __getstate__(self) -> tuple[TableRead, bytes]:
        """The read and its splits as versioned bytes (Ray may ship the datasource itself)."""
        return self.table_read, encode_splits(self.splits)

    def __setstate__(self, state: tuple[TableRead, bytes]) -> None:
        self.table_read, data = state
        self.splits = decode_splits(data, self.table_read.table.partition_types)

    def get_name(self) -> str:
        return f"PaimonTable({self.table_read.table.name})"

    def estimate_inmemory_data_size(self) -> int | None:
        return sum(_size(s) for s in self.splits) or None

    def get_read_tasks(
        self,
        parallelism: int,
        per_task_row_limit: int | None = None,
        data_context: DataContext | None = None,
    ) -> list[ReadTask]:
        read = self.table_read
        schema = read.output_schema
        # an append read without filter or limit reads every row its files hold but those
        # their deletion vectors mark
        exact = read.predicate is None and read.limit is None and not read.table.primary_keys
        tasks = []
        for chunk in deal_splits(self.splits, parallelism):
            rows = _live_rows(chunk) if exact else None
            metadata = BlockMetadata(
                num_rows=rows,
                size_bytes=sum(_size(s) for s in chunk) or None,
                input_files=tuple(
                    planned_file_path(s.bucket_path, f) for s in chunk for f in s.files
                ),
                exec_stats=None,
            )
            read_fn = partial(read_splits, read, encode_splits(chunk))
            tasks.append(ReadTask(read_fn, metadata, schema, per_task_row_limit))
        return tasks


def read_splits(read: TableRead, splits: bytes) -> Iterable[pa.Table]:
    """One read task, in a Ray worker: decode its splits and stream their rows."""
    decoded = decode_splits(splits, read.table.partition_types)
    empty = True
    for batch in read.to_arrow_batch_reader(decoded):
        if batch.num_rows:
            empty = False
            yield pa.Table.from_batches([batch], read.output_schema)
    if empty:
        yield read.output_schema.empty_table()


def deal_splits(splits: Sequence[DataSplit], parallelism: int) -> list[list[DataSplit]]:
    """``splits`` in at most ``parallelism`` non-empty groups of about equal bytes (greedy:
    largest first, each onto the lightest group)."""
    count = max(1, min(parallelism, len(splits)))
    groups: list[list[DataSplit]] = [[] for _ in range(count)]
    heap = [(0, i) for i in range(count)]
    for split in sorted(splits, key=_size, reverse=True):
        size, i = heapq.heappop(heap)
        groups[i].append(split)
        heapq.heappush(heap, (size + _size(split), i))
    return [g for g in groups if g]


def _one_file(split: DataSplit, f: DataFileMeta) -> DataSplit:
    """The part of an append split that reads file ``f`` (with its row range, if sliced)."""
    return split.with_files((f,))


def _live_rows(splits: Sequence[DataSplit]) -> int | None:
    counts = [s.live_row_count for s in splits]
    return None if any(n is None for n in counts) else sum(n or 0 for n in counts)


def _size(split: DataSplit) -> int:
    return sum(f.file_size for f in split.files)
