"""Skipping data files by their file indexes when a scan is planned.

Mirrors org.apache.paimon.fileindex.FileIndexPredicate (the visit of a predicate over a file's
indexes) as Java's scans and readers use it: AppendOnlyFileStoreScan tests the index embedded
in the manifest, RawFileSplitRead (FileIndexEvaluator) also the separate ``.index`` file; here
both happen at plan time, the separate files read in parallel, so every door (Python API,
Spark, SQL) plans the same files. A primary-key table uses its indexes only with deletion
vectors (KeyValueFileStore: ``fileIndexReadEnabled && deletionVectorsEnabled``), where each
key's live row is in one file, and then only where its value filter judges files (the scan's
own rules); ``file-index.read.enabled = false`` turns it all off.

A leaf is answered by every index of its column (all must allow a match); AND and OR combine
the answers as Java's FileIndexResult REMAIN/SKIP do (Java also intersects the row bitmaps of
bitmap indexes under an AND, which can skip a file whose leaves each match some row: we keep
it). ``between`` asks an index for the range, then for both bounds. A column without an index,
an index type we do not know, or a column retyped since the file was written (a renamed one is
found by its field id) keeps the file. A missing or damaged ``.index`` file raises, as Java's
read of that file would.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from paimon_pyspark.read.predicate import CompoundPredicate, LeafPredicate, Predicate
from paimon_pyspark.spec import file_index as fi
from paimon_pyspark.spec.data_file_meta import DataFileMeta
from paimon_pyspark.spec.file_index.format import IndexFile, read_index_file
from paimon_pyspark.store.file_store import FileStore
from paimon_pyspark.types.data_types import DataType

INDEX_PATH_SUFFIX = ".index"
_READ_THREADS = 16
"""Separate index files read at once (object stores answer each read in tens of ms)."""

_OPERATIONS = {
    "equal": fi.EQUAL,
    "notEqual": fi.NOT_EQUAL,
    "lessThan": fi.LESS_THAN,
    "lessOrEqual": fi.LESS_OR_EQUAL,
    "greaterThan": fi.GREATER_THAN,
    "greaterOrEqual": fi.GREATER_OR_EQUAL,
    "isNull": fi.IS_NULL,
    "isNotNull": fi.IS_NOT_NULL,
    "in": fi.IN,
    "notIn": fi.NOT_IN,
}
_EMPTY_SKIPS = {"equal", "isNotNull", "startsWith", "endsWith", "contains", "lessThan"}
_EMPTY_SKIPS |= {"greaterOrEqual", "lessOrEqual", "greaterThan", "in"}
"""The tests Java's EmptyFileIndexReader (an index over no values) answers SKIP."""


def separate_index(f: DataFileMeta) -> str | None:
    """The name of ``f``'s separate index file, if it has one (FileIndexEvaluator: at most one
    extra file ending ``.index``)."""
    names = [x for x in f.extra_files if x.endswith(INDEX_PATH_SUFFIX)]
    return names[0] if names else None


class FileIndexFilter:
    """Answers, for one scan's predicate, whether a data file may hold a matching row."""

    def __init__(self, store: FileStore, predicate: Predicate | None) -> None:
        self.store = store
        self.predicate = predicate
        o = store.options
        primary_key = bool(store.primary_keys)
        self.enabled = (
            predicate is not None
            and o.file_index_read_enabled
            and (not primary_key or o.deletion_vectors_enabled)
        )
        self._columns: dict[int, dict[str, tuple[str, DataType] | None]] = {}

    def keep_embedded(self, f: DataFileMeta) -> bool:
        """False only when ``f``'s embedded index says no row can match."""
        if not self.enabled or f.embedded_index is None:
            return True
        index = read_index_file(f.embedded_index, f"the embedded index of {f.file_name!r}")
        return self.keep(f, index)

    def keep(self, f: DataFileMeta, index: IndexFile) -> bool:
        assert self.predicate is not None
        return self._test(self.predicate, index, self._file_columns(f.schema_id))

    def drop_by_separate_files(
        self, items: list[Any], file_of: Callable[[Any], DataFileMeta], dir_of: Callable[[Any], str]
    ) -> list[Any]:
        """``items`` without those whose file's separate ``.index`` file says no row matches;
        the index files are read in parallel. ``dir_of`` gives the directory of an item's data
        file (the bucket's, or the external path's)."""
        if not self.enabled:
            return items
        todo = [
            i
            for i, it in enumerate(items)
            if file_of(it).embedded_index is None and separate_index(file_of(it)) is not None
        ]
        if not todo:
            return items

        def judge(i: int) -> bool:
            f = file_of(items[i])
            name = separate_index(f)
            assert name is not None
            path = os.path.join(dir_of(items[i]), name)
            data = self.store.file_io.read_bytes(path)  # FileMissingError names the path
            return self.keep(f, read_index_file(data, f"index file {path!r}"))

        if len(todo) == 1:
            verdicts = [judge(todo[0])]
        else:
            with ThreadPoolExecutor(min(_READ_THREADS, len(todo))) as pool:
                verdicts = list(pool.map(judge, todo))
        dropped = {i for i, keep in zip(todo, verdicts, strict=True) if not keep}
        return [it for i, it in enumerate(items) if i not in dropped]

    def _file_columns(self, schema_id: int) -> dict[str, tuple[str, DataType] | None]:
        """Current field name -> (its name, its type) in the schema a file was written with;
        None where the field is missing there or has another type (its index cannot answer)."""
        got = self._columns.get(schema_id)
        if got is None:
            old = {fd.id: fd for fd in self.store.schema_manager.schema(schema_id).fields}
            got = {}
            for fd in self.store.fields:
                was = old.get(fd.id)
                same = was is not None and was.type.copy(nullable=True) == fd.type.copy(
                    nullable=True
                )
                got[fd.name] = (was.name, was.type) if was is not None and same else None
            self._columns[schema_id] = got
        return got

    def _test(
        self,
        p: Predicate,
        index: IndexFile,
        columns: dict[str, tuple[str, DataType] | None],
    ) -> bool:
        if isinstance(p, CompoundPredicate):
            results = (self._test(c, index, columns) for c in p.children)
            return any(results) if p.function == "or" else all(results)
        if not isinstance(p, LeafPredicate):
            return True
        column = columns.get(p.field)
        if column is None:
            return True
        name, data_type = column
        for index_type, data in index.column(name).items():
            if index_type not in fi.INDEX_TYPES:
                continue  # Java would fail on it; the file is read
            if data is None:
                if p.function in _EMPTY_SKIPS:
                    return False
                continue
            reader = fi.create_reader(index_type, data_type, data)
            if reader is not None and not _leaf_may_match(reader, p):
                return False
        return True


def _leaf_may_match(reader: fi.FileIndexReader, p: LeafPredicate) -> bool:
    op = _OPERATIONS.get(p.function)
    if op is not None:
        return reader.may_match(op, list(p.literals))
    if p.function == "between" and len(p.literals) == 2:
        low, high = p.literals
        return (
            reader.may_match(fi.BETWEEN, [low, high])
            and reader.may_match(fi.GREATER_OR_EQUAL, [low])
            and reader.may_match(fi.LESS_OR_EQUAL, [high])
        )
    return True  # pattern tests, notBetween: no Java index answers them
