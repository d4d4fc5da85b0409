"""The SQL door's tag DDL (sql/tags.py), run as Java's CreateOrReplaceTagExec, DeleteTagExec
and RenameTagExec run it, on maintenance/tags.py:

- ``CREATE TAG`` of an existing tag is refused (TagAlreadyExistError) unless ``IF NOT
  EXISTS``, which then changes nothing, not even a different snapshot or retention;
- ``REPLACE TAG`` and ``CREATE OR REPLACE TAG`` replace an existing tag and create a missing
  one (Java creates it for plain ``REPLACE`` too);
- without ``RETAIN`` the tag has no retention (Java passes none, whatever the table's
  ``tag.default-time-retained``);
- ``DELETE TAG`` of a missing tag logs a warning (silent with ``IF EXISTS``), as Java does;
- ``RENAME TAG`` of a missing tag, or to an existing one, is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame

from paimon_pyspark.maintenance import tags
from paimon_pyspark.sql.statements import TableName
from paimon_pyspark.sql.tags import CreateTag, DeleteTag, RenameTag

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def _store(runner: Any, parts: tuple[str, ...]) -> FileStore:
    identifier = runner.identifier(TableName(*reversed(parts)))
    store: FileStore = runner.catalog.get_table(identifier).store
    return store


def create_tag(runner: Any, stmt: CreateTag) -> DataFrame:
    store = _store(runner, stmt.table)
    exists = store.tag_manager.tag_exists(stmt.tag)
    if stmt.replace and exists:
        tags.replace_tag(store, stmt.tag, stmt.snapshot_id, stmt.time_retained)
    elif not (exists and stmt.if_not_exists):
        tags.create_tag(
            store,
            stmt.tag,
            stmt.snapshot_id,
            ignore_if_exists=stmt.if_not_exists,
            time_retained=stmt.time_retained,
            default_retained=False,
        )
    empty: DataFrame = runner.empty()
    return empty


def delete_tag(runner: Any, stmt: DeleteTag) -> DataFrame:
    store = _store(runner, stmt.table)
    names = [tags.check_tag_name(n, store.name, "DELETE TAG") for n in stmt.tags]
    manager = store.tag_manager
    for name in names:
        if stmt.if_exists and not manager.tag_exists(name):
            continue
        tags.delete_tag(store, name)
    empty: DataFrame = runner.empty()
    return empty


def rename_tag(runner: Any, stmt: RenameTag) -> DataFrame:
    tags.rename_tag(_store(runner, stmt.table), stmt.tag, stmt.target)
    empty: DataFrame = runner.empty()
    return empty


__all__ = ["create_tag", "delete_tag", "rename_tag"]
