"""``expire_tags`` and ``trigger_tag_automatic_creation``: Java's procedures over
maintenance/tag_automatic.py, the work a commit's maintenance does, on demand.

    CALL sys.expire_tags(`table` => 'db.t', older_than => '2024-01-01 12:00:00')
    expire_tags(catalog, "db.t", older_than="2024-01-01 12:00:00")
    CALL sys.trigger_tag_automatic_creation(`table` => 'db.t')
    trigger_tag_automatic_creation(catalog, "db.t")

Both are metadata work (a few tag files), done in this process.
"""

from __future__ import annotations

import datetime as dt

from paimon_pyspark.catalog import Catalog
from paimon_pyspark.errors import InvalidArgumentError, describe
from paimon_pyspark.maintenance.expire import parse_timestamp_ms
from paimon_pyspark.maintenance.tag_automatic import expire_tags as _expire_tags
from paimon_pyspark.maintenance.tag_automatic import run_tag_auto_manager

NO_EXPIRED_TAGS = "No expired tags."
"""The one row Java's ExpireTagsProcedure answers when no tag expired."""


def expire_tags(catalog: Catalog, table: str, older_than: str | None = None) -> list[str]:
    """Delete the tags of ``table`` past their ``time_retained`` and, with ``older_than``
    (``'yyyy-MM-dd[ HH:mm:ss[.SSS]]'``, local time), every tag created before it (a tag
    without a creation time by its file's modification time); returns their names.

    Java's ``CALL sys.expire_tags(`table` => 'db.t', older_than => '...')`` (Spark and Flink:
    ``table, older_than``; ExpireTagsProcedure runs TagTimeExpire whatever
    ``tag.time-expire-enabled`` says). Java's result rows are these names, or one row
    ``'No expired tags.'``. A deleted tag's files go with it when its snapshot expired.
    """
    if older_than is not None and not isinstance(older_than, str):
        raise InvalidArgumentError(
            f"expire_tags: argument 'older_than' must be a string, got {describe(older_than)}."
        )
    cutoff = None
    if older_than is not None:
        millis = parse_timestamp_ms(older_than)
        seconds, rest = divmod(millis, 1000)
        cutoff = dt.datetime.fromtimestamp(seconds) + dt.timedelta(milliseconds=rest)
    return _expire_tags(catalog.get_table(table).store, cutoff)


def trigger_tag_automatic_creation(catalog: Catalog, table: str) -> bool:
    """Create the automatic tags ``table``'s snapshots are due (``tag.automatic-creation`` =
    ``process-time`` or ``watermark``; nothing for ``none`` and ``batch``), then expire tags
    by time unless ``tag.time-expire-enabled`` is false; True, as Java's Spark procedure
    answers (Flink's answers ``'Success'``).

    Java's ``CALL sys.trigger_tag_automatic_creation(`table` => 'db.t')`` (Spark and Flink:
    ``table``; ``FileStoreTable.newTagAutoManager().run()``).
    """
    run_tag_auto_manager(catalog.get_table(table).store)
    return True


__all__ = ["NO_EXPIRED_TAGS", "expire_tags", "trigger_tag_automatic_creation"]
