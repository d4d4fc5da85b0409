"""Automatic tags and tag expiry: ``tag.automatic-creation`` and tags' ``time_retained``.

Mirrors org.apache.paimon.tag.TagAutoManager (TagAutoCreation, TagTimeExpire). (Filled in by
issue 41.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paimon_pyspark.store.file_store import FileStore


def create_tags_after_commit(store: FileStore) -> None:
    """The automatic tag creation step of a commit's maintenance."""
    del store


def expire_tags_after_commit(store: FileStore) -> None:
    """The tag expiry step of a commit's maintenance (tags past their ``time_retained``)."""
    del store
