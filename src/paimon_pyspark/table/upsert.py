"""``upsert-key`` on an append table: an insert replaces the rows holding the same key.

Java 1.4.2 does this in its Spark connector only: RewriteUpsertTable turns INSERT INTO (never
INSERT OVERWRITE) of a table without primary key but with ``upsert-key`` into a MERGE INTO
(MergeIntoPaimonTable) on the key, compared null-safely (``<=>``):

- with ``sequence.field`` the incoming rows are first reduced to one per key, the one with the
  highest sequence values (``row_number()`` over the key ordered by them descending, nulls
  last), and a matched table row is replaced only when its sequence values are ``<=`` the new
  row's (a NULL comparison keeps the old row);
- without it, every matched table row is replaced; a table row matched by two incoming rows
  fails the statement (checkMatchRationality), while incoming rows whose key the table lacks
  are all inserted, duplicates included;
- each replaced table row gives one copy of the new row (a key the table holds twice is held
  twice again); incoming rows matching nothing are inserted.

Here one implementation serves every door (``new_batch_write_builder().new_write()``,
``paimon_pyspark.spark.write`` in append mode, the SQL door's INSERT INTO): the incoming rows
are gathered in memory, the table's files that their keys may hit (min/max pruning) are read
(key and sequence columns only, with each row's position) and joined with them, and the old
rows are removed as the table's DELETE removes rows (table/append_delete.py, spark/dml.py):
deletion vectors when ``deletion-vectors.enabled``, else the files holding a replaced row are
rewritten without it. The new files, the rewritten ones and the index files go in ONE commit:
an OVERWRITE snapshot whose conflict check fails if another writer removed a rewritten file or
replaced an index file meanwhile. Writers that cannot see all incoming rows at once (Ray tasks,
streaming writes, ``df.write.format("paimon")``) are refused with UnsupportedOptionError.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from paimon_pyspark import options as opts
from paimon_pyspark.errors import (
    CommitOutcomeUnknownError,
    InvalidArgumentError,
    PaimonError,
    UnsupportedOptionError,
)
from paimon_pyspark.read.predicate import Predicate, PredicateBuilder
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.spec.commit_message import CommitMessage, DataIncrement
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.store.deletion_vectors import (
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.write.append_dv import (
    delete_written_index_files,
    live_positions,
    persist_deletion_vectors,
)
from paimon_pyspark.write.table_write import TableWrite

if TYPE_CHECKING:
    from paimon_pyspark.table.file_store_table import FileStoreTable

_POS = "_paimon_upsert_pos"
_FILE = "_paimon_upsert_file"
_SRC = "_paimon_upsert_src"
_NULL = "_paimon_upsert_null_"
_OLD = "_paimon_upsert_old_"


def is_upsert_table(store: FileStore) -> bool:
    """An append table with ``upsert-key``: its inserts are upserts (RewriteUpsertTable)."""
    return not store.primary_keys and bool(store.options.upsert_key)


def refuse_upsert(store: FileStore, door: str) -> None:
    """Raise UnsupportedOptionError for a door that would only append to an upsert table."""
    if is_upsert_table(store):
        raise UnsupportedOptionError(
            f"Table '{store.name}': option '{opts.UPSERT_KEY}' = "
            f"'{store.options.get(opts.UPSERT_KEY)}' makes an insert replace the rows with the "
            f"same key, which {door} cannot do (its writers never see all incoming rows at "
            "once, so it would append duplicates). Use table.new_batch_write_builder()"
            ".new_write(), paimon_pyspark.spark.write(df, ..., mode='append') or the SQL "
            "door's INSERT INTO, or an overwrite."
        )


APPENDING = {opts.UPSERT_KEY: "", "write-only": "true"}
"""Dynamic options under which an upsert table's writers plain-append without compacting."""


def appending_store(store: FileStore) -> FileStore:
    """``store`` whose writers append (no upsert) and do not compact: the writer under an
    upsert, a rewrite or an overwrite."""
    return store.copy(APPENDING)


class UpsertTableWrite(TableWrite):
    """The batch TableWrite of an upsert table: ``write_arrow`` gathers the rows (aligned to
    the table), ``prepare_commit`` upserts them against the latest snapshot and returns the
    messages of one commit (new files, rewritten files deleted, deletion-vector index files)."""

    def __init__(self, table: FileStoreTable, commit_user: str) -> None:
        table.options.check_row_tracking_rewrite(
            f"an upsert ('{opts.UPSERT_KEY}')",
            "upsert with Java Paimon (its MERGE INTO keeps the rewritten rows' _ROW_ID), or "
            f"unset '{opts.UPSERT_KEY}' to append.",
        )
        super().__init__(appending_store(table.store), commit_user)
        self.upsert_store = table.store
        self._incoming: list[pa.Table] = []

    def write_arrow(
        self,
        table: pa.Table,
        buckets: npt.ArrayLike | None = None,
        row_kinds: npt.ArrayLike | None = None,
    ) -> None:
        if buckets is not None or row_kinds is not None:
            raise InvalidArgumentError(
                f"Table '{self.upsert_store.name}': an upsert-key table takes rows only "
                "(no buckets, no row kinds)."
            )
        data = self._align(self._arrow("write_arrow", table))
        if data.num_rows:
            self._incoming.append(data)

    def prepare_commit(self) -> list[CommitMessage]:
        if not self._incoming:
            return super().prepare_commit()
        incoming = pa.concat_tables(self._incoming)
        self._incoming = []
        deletions = _Deletions.find(self.upsert_store, incoming)
        for rows in deletions.kept_rows():
            super().write_arrow(rows)
        if deletions.inserted.num_rows:
            super().write_arrow(deletions.inserted)
        index_messages = deletions.persist()
        try:
            written = super().prepare_commit()
        except BaseException:
            delete_written_index_files(self.upsert_store, index_messages)
            raise
        return [*written, *deletions.file_messages(), *index_messages]


def upsert_arrow(
    table: FileStoreTable, data: pa.Table, commit_user: str | None = None
) -> list[int]:
    """Upsert ``data`` into ``table`` in one commit; the ids of the snapshots made. Nothing it
    wrote stays if it fails before the commit's outcome is known."""
    builder = table.new_batch_write_builder(commit_user)
    with builder.new_write() as write:
        write.write_arrow(data)
        messages = write.prepare_commit()
        commit = builder.new_commit()
        try:
            return commit.commit(messages)
        except CommitOutcomeUnknownError:
            raise
        except BaseException:
            commit.abort(messages)
            delete_written_index_files(table.store, messages)
            raise


class _Deletions:
    """What an upsert changes in the latest snapshot: the table rows it replaces (per file)
    and the incoming rows it writes."""

    def __init__(self, store: FileStore) -> None:
        self.store = store
        self.snapshot = store.snapshot_manager.latest()
        self.files: list[tuple[bytes, int, str, DataFileMeta, DeletionVector | None]] = []
        self.deleted: dict[int, npt.NDArray[np.int64]] = {}
        self.inserted: pa.Table = pa.table({})

    @staticmethod
    def find(store: FileStore, incoming: pa.Table) -> _Deletions:
        o = store.options
        keys = o.upsert_key
        sequence = list(o.sequence_fields)
        out = _Deletions(store)
        if sequence:
            incoming = _highest_per_key(incoming, keys, sequence)
        incoming = incoming.append_column(_SRC, pa.array(np.arange(incoming.num_rows)))
        pairs = out._matches(incoming, keys, sequence)
        if pairs is None or pairs.num_rows == 0:
            out.inserted = incoming.drop_columns([_SRC])
            return out
        ident = pc.add(
            pc.multiply(pairs.column(_FILE).cast(pa.int64()), pa.scalar(1 << 40, pa.int64())),
            pairs.column(_POS),
        )
        if pc.count_distinct(ident).as_py() != pairs.num_rows:
            # MergeIntoPaimonTable.checkMatchRationality
            raise PaimonError(
                f"Table '{store.name}': can't upsert when some rows of the table each match "
                f"more than one incoming row on 'upsert-key' {keys}; set 'sequence.field' to "
                "keep the newest, or remove the duplicates."
            )
        replace = pa.array(np.ones(pairs.num_rows, bool))
        for s in sequence:
            le = pc.less_equal(pairs.column(_OLD + s), pairs.column(s))
            replace = pc.and_(replace, pc.fill_null(le, False))
        replaced = pairs.filter(replace)
        files = replaced.column(_FILE).to_numpy()
        positions = replaced.column(_POS).to_numpy()
        order = np.argsort(files, kind="stable")
        files, positions = files[order], positions[order]
        bounds = np.flatnonzero(np.diff(files)) + 1
        for part_files, part_pos in zip(
            np.split(files, bounds), np.split(positions, bounds), strict=True
        ):
            if len(part_files):
                out.deleted[int(part_files[0])] = np.sort(part_pos)
        matched = pc.is_in(incoming.column(_SRC), value_set=pairs.column(_SRC).combine_chunks())
        new_rows = incoming.take(replaced.column(_SRC))
        fresh = incoming.filter(pc.invert(matched))
        out.inserted = pa.concat_tables([new_rows, fresh]).drop_columns([_SRC])
        return out

    def _matches(self, incoming: pa.Table, keys: list[str], sequence: list[str]) -> pa.Table | None:
        """Every (table row, incoming row) pair whose keys are equal null-safely: the file
        number, the row's position and sequence values, and the incoming row's number."""
        if self.snapshot is None:
            return None
        store = self.store
        pinned = store.copy({"scan.snapshot-id": str(self.snapshot.id)})
        predicate = _key_range(store, incoming, keys)
        splits = ReadBuilder(pinned).with_filter(predicate).new_scan().plan().splits()
        dv_index = dv_index_of(store)
        where = deletion_files(dv_index, dv_index_entries(index_handler_of(store), self.snapshot))
        for s in splits:
            for f in s.files:
                found = where.get((bytes(s.partition), s.bucket), {}).get(f.file_name)
                old = dv_index.read(found) if found is not None else None
                self.files.append((bytes(s.partition), s.bucket, s.bucket_path, f, old))
        if not self.files:
            return None
        wanted = set(keys) | set(sequence)
        fields = [f for f in store.fields if f.name in wanted]
        probe = _joinable(incoming.select([*keys, *sequence, _SRC]), keys)

        def one(i: int) -> pa.Table | None:
            _, _, bucket_path, f, old = self.files[i]
            parts = []
            for rows, pos in live_positions(store, bucket_path, f, fields, old):
                if rows.num_rows == 0:
                    continue
                rows = rows.rename_columns(
                    [n if n in keys else _OLD + n for n in rows.column_names]
                )
                rows = rows.append_column(_POS, pa.array(pos))
                rows = rows.append_column(_FILE, pa.array(np.full(len(pos), i, np.int32)))
                joined = _joinable(rows, keys).join(probe, _join_keys(keys), join_type="inner")
                if joined.num_rows:
                    parts.append(joined)
            return pa.concat_tables(parts) if parts else None

        threads = max(1, min(len(self.files), os.cpu_count() or 1))
        with ThreadPoolExecutor(threads, thread_name_prefix="paimon-upsert") as pool:
            found_parts = [p for p in pool.map(one, range(len(self.files))) if p is not None]
        return pa.concat_tables(found_parts) if found_parts else None

    def kept_rows(self) -> list[pa.Table]:
        """Without deletion vectors: the live rows of every file holding a replaced row, less
        those rows (the files are rewritten copy-on-write)."""
        if self.store.options.deletion_vectors_enabled or not self.deleted:
            return []
        out = []
        fields = list(self.store.fields)
        for i, gone in sorted(self.deleted.items()):
            _, _, bucket_path, f, old = self.files[i]
            for rows, pos in live_positions(self.store, bucket_path, f, fields, old):
                keep = ~np.isin(pos, gone, assume_unique=True)
                if keep.any():
                    out.append(rows.filter(pa.array(keep)))
        return out

    def file_messages(self) -> list[CommitMessage]:
        """Without deletion vectors: the rewritten files, deleted by the upsert's commit."""
        if self.store.options.deletion_vectors_enabled or not self.deleted:
            return []
        assert self.snapshot is not None
        totals = {
            (e.partition, e.bucket, e.file.file_name): e.total_buckets
            for e in self.store.manifest_io.live_entries(self.snapshot)
        }
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for i in sorted(self.deleted):
            partition, bucket, _, f, _ = self.files[i]
            groups.setdefault((partition, bucket), []).append(f)
        return [
            CommitMessage(
                partition,
                bucket,
                totals.get((partition, bucket, group[0].file_name)),
                DataIncrement(deleted_files=tuple(group)),
            )
            for (partition, bucket), group in sorted(groups.items())
        ]

    def persist(self) -> list[CommitMessage]:
        """With deletion vectors: the replaced rows marked in their files' vectors, written as
        index files (PaimonSparkWriter.persistDeletionVectors)."""
        if not self.store.options.deletion_vectors_enabled or not self.deleted:
            return []
        bitmap64 = self.store.options.deletion_vectors_bitmap64
        vectors: dict[tuple[bytes, int], dict[str, DeletionVector]] = {}
        for i, gone in self.deleted.items():
            partition, bucket, _, f, _ = self.files[i]
            dv = DeletionVector(bitmap64)
            dv.delete(gone)
            vectors.setdefault((partition, bucket), {})[f.file_name] = dv
        return persist_deletion_vectors(self.store, self.snapshot, vectors)


def _highest_per_key(data: pa.Table, keys: Sequence[str], sequence: Sequence[str]) -> pa.Table:
    """One row per key (null-safe): the one with the highest ``sequence`` values, NULL lowest
    (RewriteUpsertTable's row_number() ordered by them descending)."""
    sort = [(k, "ascending", "at_end") for k in keys]
    sort += [(s, "descending", "at_end") for s in sequence]
    ordered = data.take(pc.sort_indices(data, sort_keys=sort))
    if ordered.num_rows == 0:
        return ordered
    first = np.zeros(ordered.num_rows, bool)
    first[0] = True
    for k in keys:
        col = ordered.column(k).combine_chunks()
        a, b = col.slice(1), col.slice(0, len(col) - 1)
        same = pc.fill_null(pc.equal(a, b), False)
        both_null = pc.and_(pc.is_null(a), pc.is_null(b))
        differs = pc.invert(pc.or_(same, both_null)).to_numpy(zero_copy_only=False)
        first[1:] |= differs
    return ordered.filter(pa.array(first))


def _joinable(data: pa.Table, keys: Sequence[str]) -> pa.Table:
    """``data`` with each key as (is-null flag, value with NULL replaced by a fixed value), so
    an equi-join compares keys null-safely (Spark's ``<=>``)."""
    for k in keys:
        col = data.column(k)
        data = data.append_column(_NULL + k, pc.is_null(col))
        filler = _filler(col.type)
        if filler is not None and col.null_count:
            index = data.schema.get_field_index(k)
            data = data.set_column(index, data.schema.field(index), pc.fill_null(col, filler))
    return data


def _join_keys(keys: Sequence[str]) -> list[str]:
    return [*keys, *(_NULL + k for k in keys)]


def _filler(t: pa.DataType) -> pa.Scalar | None:
    """A non-null value of ``t`` (which one does not matter: the null flag decides)."""
    if pa.types.is_fixed_size_binary(t):
        return pa.scalar(b"\0" * t.byte_width, t)
    for value in (pa.scalar(0, pa.int32()), pa.scalar(0), "", b"", False, Decimal(0)):
        try:
            return (value if isinstance(value, pa.Scalar) else pa.scalar(value)).cast(t)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            continue
    return None


def _key_range(store: FileStore, incoming: pa.Table, keys: Sequence[str]) -> Predicate | None:
    """Files whose key stats cannot hold an incoming key are not read: per key column, its
    incoming [min, max] (or IS NULL when a key is NULL); float keys are not pruned."""
    builder = PredicateBuilder(store.fields, store.name)
    parts: list[Predicate] = []
    for k in keys:
        col = incoming.column(k)
        t = store.table_schema.field(k).type
        if t.root in ("FLOAT", "DOUBLE"):
            continue
        options: list[Predicate] = []
        if col.null_count < len(col):
            bounds = pc.min_max(col)
            options.append(builder.between(k, bounds["min"].as_py(), bounds["max"].as_py()))
        if col.null_count:
            options.append(builder.is_null(k))
        either = PredicateBuilder.or_predicates(options)
        if either is not None:
            parts.append(either)
    return PredicateBuilder.and_predicates(parts)
