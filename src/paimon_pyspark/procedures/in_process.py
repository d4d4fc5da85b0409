"""The in-process runner: a procedure's tasks run one after another in this process.

A shuffle is an in-memory group-by over one scope of inputs (a partition, for the two-stage
procedures), so at most one scope's units are held at a time; the result is one commit, and a
failure anywhere deletes every file the finished tasks wrote before it propagates.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar, cast

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.compact.plan import written_only
from paimon_pyspark.errors import CommitOutcomeUnknownError
from paimon_pyspark.procedures.pipeline import (
    In,
    ProcedurePlan,
    ProcedureRunner,
    Progress,
    Unit,
    bound,
    committed,
)
from paimon_pyspark.spec.commit_message import CommitMessage
from paimon_pyspark.table.write_builder import BatchWriteBuilder

P = ParamSpec("P")
R = TypeVar("R")


class InProcessRunner(ProcedureRunner):
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def run(self, plan: ProcedurePlan[In, Unit], say: Progress) -> int | None:
        pipeline = plan.pipeline
        source, target = pipeline.source(plan.table), pipeline.target(plan.table)
        builder = BatchWriteBuilder(target, str(uuid.uuid4()), pipeline.overwrite)
        commit = builder.new_commit()
        messages: list[CommitMessage] = []
        try:
            for i, scope in enumerate(plan.scopes, 1):
                keyed = [pair for item in scope for pair in pipeline.split(source, item)]
                if pipeline.shuffle:
                    keyed.sort(key=_key)  # stable: a group-by that keeps each key's order
                units = [unit for _, unit in keyed]
                for message in pipeline.run(target, builder.commit_user, units):
                    messages.append(message)
                say(f"ran {plan.scope_name} {i}/{len(plan.scopes)}")
            every = [*messages, *plan.retired]
            ids = commit.commit(every) if every or pipeline.overwrite is not None else []
        except CommitOutcomeUnknownError:
            raise  # the files may be in the table: nothing is removed
        except BaseException:
            commit.abort([written_only(m) for m in messages])
            raise
        return committed(ids, target, say)


def _key(pair: tuple[int, object]) -> int:
    return pair[0]


def in_process(
    procedure: Callable[Concatenate[ProcedureRunner, P], R],
) -> Callable[Concatenate[Catalog, P], R]:
    """``procedure`` run in this process on the tables of ``catalog``."""

    def call(catalog: Catalog, *args: P.args, **kwargs: P.kwargs) -> R:
        return procedure(InProcessRunner(catalog), *args, **kwargs)

    doc = "Runs in this process; the tables come from ``catalog``."
    # Concatenate types its leading parameter positional-only; ``call`` takes it by keyword too
    return cast(Callable[Concatenate[Catalog, P], R], bound(call, procedure, doc))
