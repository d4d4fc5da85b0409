"""Java's ``CALL sys.*`` procedures, with the same names and arguments, run in this process.

``compact`` mirrors CompactProcedure, its arguments in the order of Flink's (Spark's Java
procedure orders them differently; names work everywhere):

    CALL sys.compact(table => 'db.t', partitions => 'dt=1,hr=2;dt=2', compact_strategy => 'full')
    compact(catalog, "db.t", partitions="dt=1,hr=2;dt=2", compact_strategy="full")
    CALL sys.compact('db.t', '', '', '', '')      -- Flink's positional call
    compact(catalog, "db.t", "", "", "", "")
    compact(catalog, "db.t", where="dt >= '2024-01-01'", partition_idle_time="1 d")
    compact(catalog, "db.t", order_strategy="zorder", order_by="a,b")   # sort compaction

On a postpone-bucket table (``bucket = -2``) ``compact`` moves the postpone files of every kept
partition into real buckets (compact/postpone.py), as Java's postpone branch does, with
``partitions`` honoured. ``rescale`` mirrors RescaleProcedure:

    CALL sys.rescale(table => 'db.t', bucket_num => 1, partition => 'dt=1')
    rescale(catalog, "db.t", bucket_num=1, partition="dt=1")

``expire_snapshots`` mirrors ExpireSnapshotsProcedure (maintenance/expire.py does the work):

    CALL sys.expire_snapshots(table => 'db.t', retain_max => 5, older_than => '2024-01-01 12:00:00')
    expire_snapshots(catalog, "db.t", retain_max=5, older_than="2024-01-01 12:00:00")

``expire_changelogs`` mirrors Flink's ExpireChangelogsProcedure (maintenance/expire_changelog.py
does the work): the long-lived changelogs a table keeps with ``changelog.num-retained.*`` or
``changelog.time-retained``:

    CALL sys.expire_changelogs(`table` => 'db.t', retain_max => 5)
    expire_changelogs(catalog, "db.t", retain_max=5)
    expire_changelogs(catalog, "db.t", delete_all=True)

``remove_orphan_files`` mirrors RemoveOrphanFilesProcedure (maintenance/orphan_files.py does the
work); ``'db.*'`` covers every table of ``db``:

    CALL sys.remove_orphan_files(table => 'db.*', older_than => '2024-01-01 12:00:00')
    remove_orphan_files(catalog, "db.*", older_than="2024-01-01 12:00:00", dry_run=True)

The tag procedures mirror CreateTagProcedure, ReplaceTagProcedure, RenameTagProcedure,
DeleteTagProcedure, Spark's RollbackProcedure and Flink's RollbackToProcedure
(maintenance/tags.py does the work):

    CALL sys.create_tag(`table` => 'db.t', tag => 'v1', snapshot_id => 3, time_retained => '1 d')
    create_tag(catalog, "db.t", "v1", 3, "1 d")
    CALL sys.delete_tag(`table` => 'db.t', tag => 'v1,v2')
    delete_tag(catalog, "db.t", "v1,v2")
    CALL sys.replace_tag(`table` => 'db.t', tag => 'v1', snapshot_id => 4)
    replace_tag(catalog, "db.t", "v1", 4)
    CALL sys.rename_tag(`table` => 'db.t', tag => 'v1', target_tag => 'v2')
    rename_tag(catalog, "db.t", "v1", "v2")
    CALL sys.rollback(table => 'db.t', version => 'v1')          -- Spark: digits are a snapshot id
    rollback(catalog, "db.t", "v1")
    CALL sys.rollback_to(`table` => 'db.t', snapshot_id => 3)    -- Flink
    rollback_to(catalog, "db.t", snapshot_id=3)

By commit time or watermark (timestamp_calls.py: Java's CreateTagFromTimestampProcedure,
RollbackToTimestampProcedure, RollbackToWatermarkProcedure, Flink's
CreateTagFromWatermarkProcedure), epoch milliseconds:

    CALL sys.create_tag_from_timestamp(`table` => 'db.t', tag => 'd1', `timestamp` => 1700000000000)
    create_tag_from_timestamp(catalog, "db.t", "d1", 1700000000000, "1 d")
    CALL sys.rollback_to_timestamp(`table` => 'db.t', `timestamp` => 1700000000000)
    rollback_to_timestamp(catalog, "db.t", 1700000000000)
    rollback_to_watermark(catalog, "db.t", 1700000000000)

``rewrite_file_index`` mirrors RewriteFileIndexProcedure: every file's indexes rebuilt from the
table's current ``file-index.*`` options (Flink's ``partitions`` or Spark's ``where``):

    CALL sys.rewrite_file_index(`table` => 'db.t', partitions => 'dt=1')
    rewrite_file_index(catalog, "db.t", where="dt >= '2024-01-01'")

The branch procedures (branch_calls.py, maintenance/branches.py does the work) mirror
CreateBranchProcedure, DeleteBranchProcedure, RenameBranchProcedure and FastForwardProcedure:

    CALL sys.create_branch(`table` => 'db.t', branch => 'b', tag => 'v1')
    create_branch(catalog, "db.t", "b", "v1")
    delete_branch(catalog, "db.t", "b1,b2")
    rename_branch(catalog, "db.t", "b", "c")
    fast_forward(catalog, "db.t", "b")

The file procedures (file_calls.py) mirror PurgeFilesProcedure, RemoveUnexistingFilesProcedure,
CompactManifestProcedure and CompactDatabaseProcedure:

    purge_files(catalog, "db.t")
    remove_unexisting_files(catalog, "db.t", dry_run=True)
    compact_manifest(catalog, "db.t")
    compact_database(catalog, including_databases="db", excluding_tables="db.tmp_.*")

Each procedure is written once (calls.py: arguments.py parses, tasks.py plans and defines the
tasks, pipeline.py the shape) and bound here to the in-process runner (in_process.py); the Spark
twins, tasks on executors and one commit on the driver, are ``paimon_pyspark.spark.procedures``.
"""

from __future__ import annotations

from paimon_pyspark.procedures import calls, file_calls
from paimon_pyspark.procedures.branch_calls import (
    create_branch,
    delete_branch,
    fast_forward,
    rename_branch,
)
from paimon_pyspark.procedures.calls import (
    RewriteFileIndexResult,
    RollbackResult,
    clear_consumers,
    create_tag,
    delete_tag,
    expire_changelogs,
    expire_snapshots,
    rename_tag,
    replace_tag,
    reset_consumer,
    rollback,
    rollback_to,
)
from paimon_pyspark.procedures.file_calls import compact_manifest, purge_files
from paimon_pyspark.procedures.in_process import in_process
from paimon_pyspark.procedures.mark_done_calls import mark_partition_done
from paimon_pyspark.procedures.partition_calls import expire_partitions
from paimon_pyspark.procedures.pipeline import Progress
from paimon_pyspark.procedures.tag_auto_calls import expire_tags, trigger_tag_automatic_creation
from paimon_pyspark.procedures.timestamp_calls import (
    CreateTagResult,
    create_tag_from_timestamp,
    create_tag_from_watermark,
    rollback_to_timestamp,
    rollback_to_watermark,
)

compact = in_process(calls.compact)
rescale = in_process(calls.rescale)
remove_orphan_files = in_process(calls.remove_orphan_files)
rewrite_file_index = in_process(calls.rewrite_file_index)
remove_unexisting_files = in_process(file_calls.remove_unexisting_files)
compact_database = in_process(file_calls.compact_database)

__all__ = [
    "CreateTagResult",
    "Progress",
    "RewriteFileIndexResult",
    "RollbackResult",
    "clear_consumers",
    "compact",
    "compact_database",
    "compact_manifest",
    "create_branch",
    "create_tag",
    "create_tag_from_timestamp",
    "create_tag_from_watermark",
    "delete_branch",
    "delete_tag",
    "expire_changelogs",
    "expire_partitions",
    "expire_snapshots",
    "expire_tags",
    "fast_forward",
    "mark_partition_done",
    "purge_files",
    "remove_orphan_files",
    "remove_unexisting_files",
    "rename_branch",
    "rename_tag",
    "replace_tag",
    "rescale",
    "reset_consumer",
    "rewrite_file_index",
    "rollback",
    "rollback_to",
    "rollback_to_timestamp",
    "rollback_to_watermark",
    "trigger_tag_automatic_creation",
]
