"""``MERGE INTO`` as one Spark job, as Java Paimon 1.4.2's Spark connector runs it
(MergeIntoPaimonTable, PaimonMergeIntoBase, PaimonMergeIntoResolverBase).

The source is any Spark relation. The target's rows (pruned by the ON condition's conjuncts
over the target alone, as Java's ``targetOnlyCondition``) are joined with the source's, full,
left, right or inner as the clauses need, and Spark evaluates each joined row's clauses in
order: the first MATCHED clause whose condition holds for a matched pair, the first NOT
MATCHED one for a source row without target row, the first NOT MATCHED BY SOURCE one for a
target row without source row; a row no clause takes is left as it is. Expressions resolve as
Java's resolver does: MATCHED clauses over both sides, NOT MATCHED clauses (and ``*``
values) over the source only, NOT MATCHED BY SOURCE clauses over the target only. Values are
cast to the column's type; an INSERT leaves the columns it does not name NULL.

- Primary-key tables (every bucket mode): the changed rows are written with their kinds
  (+I, +U, -D) through ``spark.write``'s topology: one snapshot (plus a COMPACT one when the
  writers compact). Java's checks: only the deduplicate and partial-update merge engines
  (RowLevelOp MergeInto), and an UPDATE may assign a primary-key column only when the ON
  condition equates every primary key with the source. A DELETE clause on a partial-update
  table needs the options Java's batch DELETE needs (Java would write -D records its merge
  function then refuses on read).
- Append tables with ``deletion-vectors.enabled``: the rows deleted or updated are marked in
  deletion vectors, the new and updated rows written as new files, in one commit.
- Other append tables: the files holding a deleted or updated row are rewritten
  copy-on-write (their other rows kept), with the inserted rows, in one commit that deletes
  them.

A target row matched by more than one source row while a MATCHED clause exists is refused
(Java's checkMatchRationality, Spark's MERGE_CARDINALITY_VIOLATION): by a join of its own before
writing, or, when ON only equates a primary-key table's keys with the source, by the main job
itself as it joins. Nothing is committed on failure; the write job removes its files.

Python API::

    merge_into(spark, warehouse, "db.t", source_df, "t.k = s.k", source_alias="s")
        .when_matched_update({"v": "s.v"}, condition="s.op = 'U'")
        .when_matched_delete("s.op = 'D'")
        .when_not_matched_insert_all()
        .execute()
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark import StorageLevel
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import IntegerType, LongType, StructField, StructType
from sqlglot import exp

from paimon_pyspark.errors import (
    CommitOutcomeUnknownError,
    InvalidArgumentError,
    MergeCardinalityError,
    SqlError,
    UnsupportedOperationError,
    describe,
)
from paimon_pyspark.read.read_builder import ReadBuilder
from paimon_pyspark.spark import dml
from paimon_pyspark.spark.compat import error_condition
from paimon_pyspark.spark.job import WriteJob
from paimon_pyspark.spark.schema import spark_schema
from paimon_pyspark.spark.write import ROW_KIND_COLUMN, postpone_bucket_counts, run_write
from paimon_pyspark.spec.deletion_vector import DeletionVector
from paimon_pyspark.spec.key_value import DELETE, INSERT, UPDATE_AFTER
from paimon_pyspark.sql.dialect import parse_expression, to_sql
from paimon_pyspark.sql.merge import (
    Action,
    Kind,
    MergeClause,
    MergeInto,
    TargetName,
    check_merge,
    clause,
)
from paimon_pyspark.sql.statements import TableName
from paimon_pyspark.store.deletion_vectors import (
    deletion_files,
    dv_index_entries,
    dv_index_of,
    index_handler_of,
)
from paimon_pyspark.write.append_dv import delete_written_index_files, persist_deletion_vectors

_MERGE_ENGINES = ("deduplicate", "partial-update")
_P = "__paimon_merge_"
_S_MARK = f"{_P}s"
_T_MARK = f"{_P}t"
_T_IN = f"{_P}tin"
_CLAUSE = f"{_P}clause"
_T_PRESENT = f"{_P}tp"
_CARDINALITY = f"{_P}cardinality_violation"


def execute(
    spark: SparkSession,
    warehouse: str,
    table: str,
    source: DataFrame,
    stmt: MergeInto,
    options: Mapping[str, Any] | None = None,
) -> int | None:
    """Run ``stmt`` on ``table`` of ``warehouse`` with ``source`` as its source relation; the
    id of the snapshot committed, or None when no row changed."""
    if not isinstance(source, DataFrame):
        raise InvalidArgumentError(
            f"Table '{table}': MERGE INTO takes a Spark DataFrame as source, got "
            f"{describe(source)}."
        )
    target = dml._open(spark, warehouse, table, options, "merge")
    return _Merge(target, source, stmt).run()


@dataclass
class _Merge:
    target: dml._Target
    source: DataFrame
    stmt: MergeInto
    views: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = self.target.name
        self.fields = spark_schema(self.target.table).fields
        self.columns = [f.name for f in self.fields]
        self.by_lower = {c.lower(): c for c in self.columns}
        self.t_alias = self.stmt.target_alias or self.stmt.target.table
        self.s_alias = self.stmt.source_alias or _source_name(self.stmt) or f"{_P}source"
        self.source_columns = {c.lower() for c in self.source.columns}
        self.pk = self.target.table.primary_keys

    # checks ---------------------------------------------------------------------------------

    def check(self) -> None:
        """Java's analysis checks, before anything is read."""
        dml._check_engine(self.target, "MergeInto", _MERGE_ENGINES)
        if self.t_alias.lower() == self.s_alias.lower():
            raise SqlError(
                f"Table '{self.name}': MERGE INTO's target and source are both named "
                f"'{self.t_alias}'; give one of them another alias."
            )
        for c in self.stmt.clauses:
            for column in c.columns or ():
                if column.lower() not in self.by_lower:
                    raise SqlError(
                        f"Table '{self.name}': {c.describe()} names column '{column}', which "
                        f"the table does not have (columns: {', '.join(self.columns)})."
                    )
            if c.star:
                missing = [x for x in self.columns if x.lower() not in self.source_columns]
                if missing:
                    raise SqlError(
                        f"Table '{self.name}': {c.describe()} takes every column from the "
                        f"source, which lacks {', '.join(missing)} (source columns: "
                        f"{', '.join(self.source.columns)})."
                    )
            positional = c.action == "insert" and c.columns is None and not c.star
            if positional and len(c.values) != len(self.columns):
                raise SqlError(
                    f"Table '{self.name}': {c.describe()} gives {len(c.values)} value(s) "
                    f"for the table's {len(self.columns)} columns "
                    f"({', '.join(self.columns)})."
                )
        if self.pk:
            self._check_key_updates()
            deletes = any(c.action == "delete" for c in self.stmt.clauses)
            if deletes and self.target.table.options.merge_engine == "partial-update":
                dml._check_pk_deletable(self.target)

    def _check_key_updates(self) -> None:
        """Java's checkUpdateActionValidity: an UPDATE of a MATCHED clause may assign a key
        column only when the ON condition equates every key with a column."""
        keys = {k.lower() for k in self.pk}
        if all(self._on_equates(k) for k in keys):
            return
        for c in self.stmt.of_kind("matched"):
            if c.action != "update":
                continue
            names = self.columns if c.star else list(c.columns or ())
            values = [None] * len(names) if c.star else list(c.values)
            for column, value in zip(names, values, strict=True):
                if column.lower() in keys and not self._is_same_target(value, column):
                    raise UnsupportedOperationError(
                        f"Table '{self.name}': Can't update the primary key column in update "
                        f"clause ({column}; primary keys {self.pk})."
                    )

    def _on_equates(self, key: str) -> bool:
        for conj in _conjuncts(self.stmt.on):
            if isinstance(conj, exp.EQ):
                sides = [conj.this, conj.expression]
                columns = all(isinstance(s, exp.Column) for s in sides) and sides[0] != sides[1]
                if columns and any(self._is_target_column(s, key) for s in sides):
                    return True
        return False

    def _is_target_column(self, node: exp.Expr, key: str) -> bool:
        if not isinstance(node, exp.Column) or node.name.lower() != key:
            return False
        if node.table:
            return node.table.lower() == self.t_alias.lower()
        return key not in self.source_columns

    def _is_same_target(self, value: exp.Expr | None, column: str) -> bool:
        return value is not None and self._is_target_column(value, column.lower())

    # the job --------------------------------------------------------------------------------

    def run(self) -> int | None:
        self.check()
        target = self.target
        matched = self.stmt.of_kind("matched")
        inserts = self.stmt.of_kind("not_matched")
        by_source = self.stmt.of_kind("not_matched_by_source")
        table = target.table
        if not table.primary_keys and not table.options.deletion_vectors_enabled:
            table.options.check_row_tracking_rewrite(
                "a copy-on-write MERGE INTO",
                "set 'deletion-vectors.enabled' = 'true', or run the MERGE with Java Paimon.",
            )
        elif not table.primary_keys and self._codes("update"):
            table.options.check_row_tracking_rewrite(
                "a MERGE INTO that updates rows",
                "run the MERGE with Java Paimon (its updated rows keep their _ROW_ID).",
            )
        only_target = self._target_only()
        try:
            rows, files = self._target_rows(only_target)
            inline = self._keys_only_on() if matched else None
            if matched and inline is None:
                self._check_cardinality(rows, only_target)
            joined = self._joined(rows, only_target, bool(inserts), bool(by_source), inline)
            if table.primary_keys:
                out = self._outputs(joined, keep=False).where(F.col(_CLAUSE) >= 0)
                kinds = out.select(*self.columns, ROW_KIND_COLUMN)
                try:
                    return dml._write_rows(target, kinds)
                except Exception as e:
                    if _CARDINALITY in str(e):
                        raise self._cardinality_error() from None
                    raise
            if table.options.deletion_vectors_enabled:
                return self._deletion_vectors(joined, files)
            return self._copy_on_write(joined, files, dedupe=not matched)
        finally:
            for view in self.views:
                target.spark.catalog.dropTempView(view)

    def _view(self, df: DataFrame) -> str:
        view = f"{_P}{uuid.uuid4().hex}"
        df.createOrReplaceTempView(view)
        self.views.append(view)
        return view

    def _target_only(self) -> exp.Expr | None:
        """The ON condition's conjuncts over the target's columns only (Java's
        getExpressionOnlyRelated), qualified with the target's alias."""
        kept: list[exp.Expr] = []
        for conj in _conjuncts(self.stmt.on):
            cols = list(conj.find_all(exp.Column))
            if not cols or conj.find(exp.AggFunc, exp.Window) is not None:
                continue
            if all(self._on_target(c) for c in cols):
                kept.append(conj.copy())
        if not kept:
            return None
        out = kept[0]
        for k in kept[1:]:
            out = exp.and_(out, k)
        return out

    def _on_target(self, column: exp.Column) -> bool:
        if column.table:
            return column.table.lower() == self.t_alias.lower() and not column.args.get("db")
        name = column.name.lower()
        return name in self.by_lower and name not in self.source_columns

    def _pushable(self, only_target: exp.Expr | None) -> tuple[str | None, Any]:
        """The target-only conjuncts as text over the table's columns, and as a Predicate
        where read/sql_predicate.py translates them (else None: nothing is pruned)."""
        if only_target is None:
            return None, None
        bare = only_target.copy()
        for c in bare.find_all(exp.Column):
            c.set("table", None)
        text = to_sql(bare)
        predicate = dml._translated(self.target, text)
        return (text if predicate is not None else None), predicate

    def _target_rows(self, only_target: exp.Expr | None) -> tuple[DataFrame, list[Any]]:
        """The target's rows at the statement's snapshot; an append table's with each row's
        file number and position (the files are the candidate single-file splits)."""
        target = self.target
        text, predicate = self._pushable(only_target)
        if target.table.primary_keys:
            return target.rows(text), []
        files: list[Any] = []
        vectors: list[Any] = []
        if target.snapshot is not None:
            pinned = target.table.copy(
                {"scan.snapshot-id": str(target.snapshot.id)}, time_travel=False
            )
            splits = ReadBuilder(pinned.store).with_filter(predicate).new_scan().plan().splits()
            files = [s.with_files([f]) for s in splits for f in s.files]
            if target.table.options.deletion_vectors_enabled:
                store = target.table.store
                where = deletion_files(
                    dv_index_of(store), dv_index_entries(index_handler_of(store), target.snapshot)
                )
                vectors = [
                    where.get((bytes(s.partition), s.bucket), {}).get(s.files[0].file_name)
                    for s in files
                ]
            else:
                vectors = [None] * len(files)
        if not files:
            schema = StructType(
                [
                    *self.fields,
                    StructField(dml.FILE_COLUMN, IntegerType(), False),
                    StructField(dml.ROW_COLUMN, LongType(), False),
                ]
            )
            return target.spark.createDataFrame([], schema), files
        return dml._positioned_rows(target, files, vectors), files

    def _sql(self, node: exp.Expr) -> str:
        return to_sql(node)

    def _source_keys(self) -> list[exp.Expr] | None:
        """On a primary-key table, the source expressions the ON condition equates with each
        key column (``t.k = s.k``), or None if one is not equated so."""
        out: list[exp.Expr] = []
        for key in self.pk:
            found = None
            for conj in _conjuncts(self.stmt.on):
                if not isinstance(conj, exp.EQ):
                    continue
                for mine, other in ((conj.this, conj.expression), (conj.expression, conj.this)):
                    if self._is_target_column(mine, key.lower()) and not any(
                        self._on_target(c) or c.table.lower() == self.t_alias.lower()
                        for c in other.find_all(exp.Column)
                    ):
                        found = other
            if found is None:
                return None
            out.append(found)
        return out

    def _check_cardinality(self, rows: DataFrame, only_target: exp.Expr | None) -> None:
        """Java's checkMatchRationality. A primary-key table's rows are unique by key, so
        when ON equates every key with a source expression, source rows unique by those
        expressions settle it without reading the target."""
        src = self._view(self.source)
        keys = self._source_keys() if self.pk else None
        if keys is not None:
            texts = [self._sql(k) for k in keys]
            unique = (
                f"SELECT 1 FROM {src} AS {_q(self.s_alias)} WHERE "
                f"{' AND '.join(f'({t}) IS NOT NULL' for t in texts)} "
                f"GROUP BY {', '.join(texts)} HAVING count(1) > 1 LIMIT 1"
            )
            if not self._spark_sql(unique).take(1):
                return
        tgt = self._view(rows.withColumn(f"{_P}tid", F.monotonically_increasing_id()))
        where = "" if only_target is None else f" WHERE {self._sql(only_target)}"
        query = (
            f"SELECT {_P}tid FROM (SELECT * FROM {src} AS {_q(self.s_alias)}) AS "
            f"{_q(self.s_alias)} JOIN (SELECT * FROM {tgt} AS {_q(self.t_alias)}{where}) AS "
            f"{_q(self.t_alias)} ON {self._sql(self.stmt.on)} GROUP BY {_P}tid "
            f"HAVING count(1) > 1 LIMIT 1"
        )
        if self._spark_sql(query).take(1):
            raise self._cardinality_error()

    def _keys_only_on(self) -> list[str] | None:
        """When ON is only ``t.key = <source expression>`` for every key column of a
        primary-key table, those source expressions: a target row (unique by key) then
        matches several source rows exactly when their expressions repeat, which the main
        job checks as it joins (a window over the join's own partitioning), without a job
        of its own."""
        keys = self._source_keys() if self.pk else None
        if keys is None or len(_conjuncts(self.stmt.on)) != len(keys):
            return None
        return [self._sql(k) for k in keys]

    def _cardinality_error(self) -> MergeCardinalityError:
        return MergeCardinalityError(
            f"Table '{self.name}': MERGE_CARDINALITY_VIOLATION: the ON search condition of "
            "the MERGE statement matched a single row from the target table with multiple "
            "rows of the source table; Can't execute this MergeInto when there are some "
            "target rows that each of them match more than one source rows."
        )

    def _joined(
        self,
        rows: DataFrame,
        only_target: exp.Expr | None,
        inserts: bool,
        by_source: bool,
        inline: list[str] | None = None,
    ) -> DataFrame:
        """Source and target joined, each row with the number of the clause that takes it
        (-1: none), its target's values and each clause's values. ``inline``: the source
        key expressions whose repetition among matched rows fails the job."""
        table = self.target.table
        keep_target = by_source or not table.primary_keys
        join = {
            (True, True): "FULL OUTER",
            (True, False): "LEFT OUTER",
            (False, True): "RIGHT OUTER",
            (False, False): "INNER",
        }[(inserts, keep_target)]
        s, t = _q(self.s_alias), _q(self.t_alias)
        extra_s: list[str] = []
        extra_t: list[str] = []
        inner: list[str] = []
        cases = {"matched": [], "not_matched": [], "not_matched_by_source": []}  # type: dict[str, list[str]]
        for i, c in enumerate(self.stmt.clauses):
            cond = "TRUE" if c.condition is None else f"({self._sql(c.condition)})"
            values = self._values(c)
            if c.kind == "matched":
                cases["matched"].append(f"WHEN {cond} THEN {i}")
                inner += [f"({v}) AS {_value(i, j)}" for j, v in values.items()]
            elif c.kind == "not_matched":
                extra_s.append(f"{cond} AS {_P}c{i}")
                extra_s += [f"({v}) AS {_value(i, j)}" for j, v in values.items()]
                cases["not_matched"].append(f"WHEN {_P}c{i} THEN {i}")
                inner += [_value(i, j) for j in values]
            else:
                extra_t.append(f"{cond} AS {_P}c{i}")
                extra_t += [f"({v}) AS {_value(i, j)}" for j, v in values.items()]
                cases["not_matched_by_source"].append(f"WHEN {_T_IN} AND {_P}c{i} THEN {i}")
                inner += [_value(i, j) for j in values]

        def case(whens: list[str]) -> str:
            return f"CASE {' '.join(whens)} ELSE -1 END" if whens else "-1"

        target_in = "TRUE" if only_target is None else f"(({self._sql(only_target)}) <=> TRUE)"
        where = ""
        if only_target is not None and (
            table.primary_keys or table.options.deletion_vectors_enabled
        ):
            where = f" WHERE {self._sql(only_target)}"
        check = ""
        if inline is not None:
            extra_s.append(f"count(1) OVER (PARTITION BY {', '.join(inline)}) AS {_P}n")
            check = (
                f"WHEN {_S_MARK} IS NOT NULL AND {_T_MARK} IS NOT NULL AND {_P}n > 1 THEN "
                f"raise_error('{_CARDINALITY}') "
            )
        src_view = self._view(self.source)
        tgt_view = self._view(rows)
        src_proj = ", ".join(["*", f"TRUE AS {_S_MARK}", *extra_s])
        tgt_proj = ", ".join(["*", f"TRUE AS {_T_MARK}", f"{target_in} AS {_T_IN}", *extra_t])
        clause_case = (
            f"CASE {check}WHEN {_S_MARK} IS NOT NULL AND {_T_MARK} IS NOT NULL THEN "
            f"{case(cases['matched'])} WHEN {_S_MARK} IS NOT NULL THEN "
            f"{case(cases['not_matched'])} ELSE {case(cases['not_matched_by_source'])} END"
        )
        targets = [f"{t}.{_q(c)} AS {_old(j)}" for j, c in enumerate(self.columns)]
        positions = (
            [] if table.primary_keys else [f"{t}.{dml.FILE_COLUMN}", f"{t}.{dml.ROW_COLUMN}"]
        )
        select = ", ".join(
            [
                f"{clause_case} AS {_CLAUSE}",
                f"{_T_MARK} IS NOT NULL AS {_T_PRESENT}",
                *targets,
                *positions,
                *inner,
            ]
        )
        query = (
            f"SELECT {select} FROM (SELECT {src_proj} FROM {src_view} AS {s}) AS {s} "
            f"{join} JOIN (SELECT {tgt_proj} FROM {tgt_view} AS {t}{where}) AS {t} "
            f"ON {self._sql(self.stmt.on)}"
        )
        return self._spark_sql(query)

    def _spark_sql(self, query: str) -> DataFrame:
        """``query`` analysed by Spark; an analysis error (a column neither side has, an
        ambiguous name, a type mismatch) named with the table."""
        try:
            return self.target.spark.sql(query)
        except AnalysisException as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else error_condition(e)
            raise SqlError(
                f"Table '{self.name}': MERGE INTO cannot be analysed by Spark: {first} "
                f"(target alias '{self.t_alias}', source alias '{self.s_alias}')."
            ) from None

    def _values(self, c: MergeClause) -> dict[int, str]:
        """Target column number -> the clause's expression text for it (UPDATE: the columns
        it assigns; INSERT: every column, NULL where not named)."""
        if c.action == "delete":
            return {}
        positions = {col: j for j, col in enumerate(self.columns)}
        out: dict[int, str] = {}
        if c.star:
            prefix = f"{_q(self.s_alias)}." if c.kind == "matched" else ""
            return {j: f"{prefix}{_q(col)}" for j, col in enumerate(self.columns)}
        if c.action == "insert" and c.columns is None:
            return {j: self._sql(v) for j, v in enumerate(c.values)}
        for col, v in zip(c.columns or (), c.values, strict=True):
            out[positions[self.by_lower[col.lower()]]] = self._sql(v)
        if c.action == "insert":
            for j in range(len(self.columns)):
                out.setdefault(j, "NULL")
        return out

    def _outputs(self, joined: DataFrame, keep: bool) -> DataFrame:
        """Each row's new values and kind: the clause's, or with ``keep`` a target row no
        clause takes as it is (+I)."""
        clause = F.col(_CLAUSE)
        kind: Column | None = None
        values: list[Column | None] = [None] * len(self.columns)
        for i, c in enumerate(self.stmt.clauses):
            code = {"update": UPDATE_AFTER, "delete": DELETE, "insert": INSERT}[c.action]
            hit = clause == i
            kind = F.when(hit, F.lit(code)) if kind is None else kind.when(hit, F.lit(code))
            given = self._values(c)
            for j in given:
                v = F.col(_value(i, j))
                values[j] = F.when(hit, v) if values[j] is None else values[j].when(hit, v)  # type: ignore[union-attr]
        assert kind is not None
        kind = kind.otherwise(F.lit(INSERT if keep else -1))
        out = []
        for j, f in enumerate(self.fields):
            old = F.col(_old(j))
            value = old if values[j] is None else values[j].otherwise(old)  # type: ignore[union-attr]
            out.append(value.cast(f.dataType).alias(f.name))
        extra = [F.col(_CLAUSE), F.col(_T_PRESENT)]
        if not self.target.table.primary_keys:
            extra += [F.col(dml.FILE_COLUMN), F.col(dml.ROW_COLUMN)]
        return joined.select(*out, kind.cast("tinyint").alias(ROW_KIND_COLUMN), *extra)

    def _codes(self, *actions: str) -> list[int]:
        return [i for i, c in enumerate(self.stmt.clauses) if c.action in actions]

    def _deletion_vectors(self, joined: DataFrame, files: Sequence[Any]) -> int | None:
        """Java's deletion-vector MERGE: deleted and updated rows marked in vectors, new
        and updated rows written, one commit."""
        target = self.target
        store = target.table.store
        out = self._outputs(joined, keep=False).where(F.col(_CLAUSE) >= 0)
        out = out.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            marked = out.where(F.col(_CLAUSE).isin(self._codes("update", "delete")))
            vectors = dml._collect_vectors(target, marked) if files else {}
            found: dict[tuple[bytes, int], dict[str, DeletionVector]] = {}
            for i, dv in vectors.items():
                s = files[i]
                found.setdefault((bytes(s.partition), s.bucket), {})[s.files[0].file_name] = dv
            messages = persist_deletion_vectors(store, target.snapshot, found) if found else []
            try:
                written = out.where(F.col(_CLAUSE).isin(self._codes("update", "insert")))
                return self._append(written.select(*self.columns), messages)
            except CommitOutcomeUnknownError:
                raise
            except BaseException:
                delete_written_index_files(store, messages)
                raise
        finally:
            out.unpersist()

    def _copy_on_write(self, joined: DataFrame, files: Sequence[Any], dedupe: bool) -> int | None:
        """Java's copy-on-write MERGE: the files holding a deleted or updated row are
        rewritten with their other rows, plus the inserted rows, in the commit deleting them."""
        out = self._outputs(joined, keep=True).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            changed = out.where(F.col(_CLAUSE).isin(self._codes("update", "delete")))
            touched = sorted(r[0] for r in changed.select(dml.FILE_COLUMN).distinct().collect())
            kept = out.where(
                (F.col(_CLAUSE) < 0) & F.col(_T_PRESENT) & F.col(dml.FILE_COLUMN).isin(touched)
            )
            if dedupe:
                kept = kept.dropDuplicates([dml.FILE_COLUMN, dml.ROW_COLUMN])
            new = out.where(F.col(_CLAUSE).isin(self._codes("update", "insert")))
            rows = kept.select(*self.columns).unionByName(new.select(*self.columns))
            chosen = [files[i] for i in touched]
            messages = dml._file_deletions(self.target, chosen) if chosen else []
            return self._append(rows, messages)
        finally:
            out.unpersist()

    def _append(self, rows: DataFrame, messages: Sequence[Any]) -> int | None:
        ref, writer_table = dml._appending(self.target)
        job = WriteJob(ref, postpone_buckets=postpone_bucket_counts(writer_table))
        ids = run_write(rows, writer_table, job, driver_messages=messages)
        return ids[-1] if ids else None


def _source_name(stmt: MergeInto) -> str | None:
    return stmt.source.name if isinstance(stmt.source, exp.Table) else None


def _conjuncts(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.And):
        return [*_conjuncts(node.this), *_conjuncts(node.expression)]
    if isinstance(node, exp.Paren):
        return _conjuncts(node.this)
    return [node]


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _value(clause_number: int, column: int) -> str:
    return f"{_P}v{clause_number}_{column}"


def _old(column: int) -> str:
    return f"{_P}o{column}"


# --- Python API --------------------------------------------------------------------------------


@dataclass
class MergeBuilder:
    """``MERGE INTO`` from Python: add clauses in order, then ``execute()``. Conditions and
    values are Spark SQL text, over ``target_alias`` and ``source_alias`` as in the SQL."""

    spark: SparkSession
    warehouse: str
    table: str
    source: DataFrame
    on: str
    target_alias: str | None = None
    source_alias: str = "source"
    options: Mapping[str, Any] | None = None
    clauses: list[MergeClause] = field(default_factory=list)

    def _add(
        self,
        kind: Kind,
        action: Action,
        condition: str | None,
        assignments: Mapping[str, str] | None,
    ) -> MergeBuilder:
        if condition is not None and not isinstance(condition, str):
            raise InvalidArgumentError(
                f"Table '{self.table}': a MERGE clause's condition is Spark SQL text, got "
                f"{describe(condition)}."
            )
        if assignments is not None and (not isinstance(assignments, Mapping) or not assignments):
            raise InvalidArgumentError(
                f"Table '{self.table}': a MERGE clause's assignments are a non-empty mapping "
                f"of column name to Spark SQL text, got {describe(assignments)}."
            )
        self.clauses.append(clause(kind, action, condition, assignments, self._name()))
        return self

    def _name(self) -> TargetName:
        parts = self.table.split(".")
        return TargetName(parts[-1], parts[-2] if len(parts) > 1 else None)

    def when_matched_update(
        self, assignments: Mapping[str, str], condition: str | None = None
    ) -> MergeBuilder:
        return self._add("matched", "update", condition, assignments)

    def when_matched_update_all(self, condition: str | None = None) -> MergeBuilder:
        return self._add("matched", "update", condition, None)

    def when_matched_delete(self, condition: str | None = None) -> MergeBuilder:
        return self._add("matched", "delete", condition, None)

    def when_not_matched_insert(
        self, values: Mapping[str, str], condition: str | None = None
    ) -> MergeBuilder:
        return self._add("not_matched", "insert", condition, values)

    def when_not_matched_insert_all(self, condition: str | None = None) -> MergeBuilder:
        return self._add("not_matched", "insert", condition, None)

    def when_not_matched_by_source_update(
        self, assignments: Mapping[str, str], condition: str | None = None
    ) -> MergeBuilder:
        return self._add("not_matched_by_source", "update", condition, assignments)

    def when_not_matched_by_source_delete(self, condition: str | None = None) -> MergeBuilder:
        return self._add("not_matched_by_source", "delete", condition, None)

    def execute(self) -> int | None:
        """Run the MERGE: the id of the snapshot committed, or None when nothing changed."""
        if not isinstance(self.on, str) or not self.on.strip():
            raise InvalidArgumentError(
                f"Table '{self.table}': merge_into(on=...) takes Spark SQL boolean text, got "
                f"{describe(self.on)}."
            )
        name = self._name()
        on = parse_expression(self.on)
        check_merge(name, on, self.clauses)
        stmt = MergeInto(
            name,
            self.target_alias,
            exp.to_table(name.table),
            self.source_alias,
            on,
            tuple(self.clauses),
        )
        return execute(self.spark, self.warehouse, self.table, self.source, stmt, self.options)


def merge_into(
    spark: SparkSession,
    warehouse: str,
    table: str,
    source: DataFrame,
    on: str,
    target_alias: str | None = None,
    source_alias: str = "source",
    options: Mapping[str, Any] | None = None,
) -> MergeBuilder:
    """``MERGE INTO table [AS target_alias] USING source AS source_alias ON on``: add the
    clauses with the builder's ``when_*`` methods, then ``execute()``. ``target_alias``
    defaults to the table's name; ``options`` are filesystem and dynamic table options."""
    return MergeBuilder(spark, warehouse, table, source, on, target_alias, source_alias, options)


def run_statement(runner: Any, stmt: MergeInto) -> DataFrame:
    """The SQL door's handler: the source bound as a query (Paimon tables, Spark's tables
    and views), the target a Paimon table of the runner's warehouse."""
    t = stmt.target
    identifier = runner.identifier(TableName(t.table, t.database, t.catalog))
    if isinstance(stmt.source, exp.Table):
        tree: exp.Expr = exp.select("*").from_(stmt.source.copy())
    else:
        tree = stmt.source
    source = runner.query(tree, stmt.text)
    execute(
        runner.spark,
        runner.warehouse,
        identifier,
        source,
        stmt,
        {**runner.options, **runner.dynamic_for(identifier), **stmt.hints},
    )
    empty: DataFrame = runner.empty()
    return empty


__all__ = ["MergeBuilder", "execute", "merge_into", "run_statement"]
