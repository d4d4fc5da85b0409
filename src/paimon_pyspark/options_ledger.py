"""The options ledger: every key of Java Paimon 1.4.2's ``CoreOptions``, and every key pypaimon
2.1 acts on that Java lacks, and the Spark connector's write options acted on here (``_SPARK``),
each with exactly one status.

- *implemented*: our code acts on it as Java does; the note names the test that shows it.
- *refused*: a value other than Java's default raises :class:`UnsupportedOptionError` at create
  and at load (``options.check_supported``); the note says what to do instead. The keys of
  :data:`REFUSED_ONLY_BY` are refused only by the operation that reads them (compaction,
  stream reads, or writes and compaction).
- *no effect by design*: it cannot change a row, file or snapshot this package writes or reads
  (Flink operator tuning, Java's caches and memory, ...); the note says why.

Keys this ledger does not list and no :data:`PREFIX_RULES` prefix covers are accepted, as Java
accepts keys it does not know. ``docs/options.md`` is this ledger as a table
(``tests/integration/test_options_ledger.py`` keeps the two equal; :func:`markdown` prints it), and
``tests/interop/test_options_ledger_java.py`` checks the keys, their types and defaults against
Java's own ``CoreOptions`` and every no-effect key against Java's output.

Mirrors org.apache.paimon.CoreOptions (its keys, types and defaults); imports nothing of the
package so that ``options.py`` can use it.
"""

from __future__ import annotations

from dataclasses import dataclass

IMPLEMENTED = "implemented"
REFUSED = "refused"
NO_EFFECT = "no effect by design"
STATUSES = (IMPLEMENTED, REFUSED, NO_EFFECT)
_STATUS = {"I": IMPLEMENTED, "R": REFUSED, "N": NO_EFFECT}

KINDS = ("bool", "int", "long", "double", "memory", "duration", "string", "map", "enum")
"""How Java parses a key's value: Boolean, Integer, Long, Double or Float, MemorySize,
Duration, String, Map (``k:v,k:v``), or one of an enum's constants (any case)."""


@dataclass(frozen=True)
class Entry:
    """One key: its Java type and default, its status, and the test, the reason or the advice."""

    key: str
    kind: str
    default: str | None
    """Java's default as Java prints it back (a duration in its highest unit, a size as
    MemorySize prints it, an enum in lower case, an empty map as ""); None: no default."""
    status: str
    note: str
    """implemented: the test file(s); refused: what to do instead; no effect: why."""
    origin: str
    """``java`` (a CoreOptions key) or ``pypaimon`` (pypaimon 2.1 only)."""

    def tests(self) -> list[str]:
        """The test files an implemented key's note names."""
        return [w.strip(".,;:()") for w in self.note.split() if w.startswith("tests/")]


@dataclass(frozen=True)
class PrefixRule:
    """The status of every key under a prefix that no entry lists (``fields.<f>.*``, ...)."""

    prefix: str
    status: str
    note: str


# key | Java type | Java's default (- for none) | I, R or N | test, advice or reason
_JAVA = """
type | enum | table | R | only `table` is read and written here; open format, object, lance and iceberg tables with Java Paimon
bucket | int | -1 | I | tests/interop/test_bucket_java.py
bucket-key | string | - | I | tests/interop/test_java_reads_ours.py (each row in Java's bucket for the bucket-key)
bucket-append-ordered | bool | true | R | false lets Java's bucketed append writes and reads give up the order of a bucket's files; not implemented
bucket-function.type | enum | default | I | tests/integration/test_bucket_functions.py
data-file.external-paths | string | - | I | tests/integration/test_external_paths.py
data-file.external-paths.strategy | enum | none | I | tests/integration/test_external_paths.py
data-file.external-paths.specific-fs | string | - | I | tests/integration/test_external_paths.py
data-file.external-paths.weights | string | - | I | tests/integration/test_external_paths.py
compaction.force-rewrite-all-files | bool | false | I | tests/interop/test_options_implemented_java.py
path | string | - | I | tests/integration/test_alter_table.py (the table's location, set by the catalog; Java's rules for changing it)
branch | string | main | I | tests/integration/test_branch_store.py
chain-table.enabled | bool | false | R | chain tables (snapshot and delta branches) are not implemented; use Java Paimon
scan.fallback-snapshot-branch | string | - | R | chain tables are not implemented; use Java Paimon
scan.fallback-delta-branch | string | - | R | chain tables are not implemented; use Java Paimon
chain-table.chain-partition-keys | string | - | R | chain tables are not implemented; use Java Paimon
file.format | string | parquet | I | tests/interop/test_java_reads_ours.py
file.compression.per.level | map | "" | R | one codec for every level: unset it and use file.compression
file.format.per.level | map | "" | R | one format for every level: unset it and use file.format
file.compression | string | zstd | I | tests/integration/test_avro_snappy.py
file.compression.zstd-level | int | 1 | I | tests/integration/test_options_implemented.py
data-file.prefix | string | data- | I | tests/integration/test_options_ledger.py
data-file.path-directory | string | - | R | data files live in the bucket directories; unset it
changelog-file.prefix | string | changelog- | I | tests/integration/test_changelog_input.py
changelog-file.format | string | - | I | tests/integration/test_changelog_input.py
changelog-file.compression | string | - | I | tests/integration/test_changelog_input.py
changelog-file.stats-mode | string | - | I | tests/integration/test_changelog_input.py
file.suffix.include.compression | bool | false | R | data file names without the codec: unset it
file.block-size | memory | - | R | refused by writes and compaction only (reads go on): the Parquet row-group (ORC stripe) size also moves where Java rolls a data file at target-file-size; not implemented, unset it
file-index.in-manifest-threshold | memory | 500 bytes | I | tests/integration/test_file_index.py
file-index.read.enabled | bool | true | I | tests/integration/test_file_index.py
variant.shreddingSchema | string | - | R | VARIANT shredding is not implemented; unset it
variant.inferShreddingSchema | bool | false | R | VARIANT shredding is not implemented; unset it
variant.shredding.maxSchemaWidth | int | 300 | R | VARIANT shredding is not implemented; unset it
variant.shredding.maxSchemaDepth | int | 50 | R | VARIANT shredding is not implemented; unset it
variant.shredding.minFieldCardinalityRatio | double | 0.1 | R | VARIANT shredding is not implemented; unset it
variant.shredding.maxInferBufferRow | int | 4096 | R | VARIANT shredding is not implemented; unset it
manifest.format | string | avro | R | manifests are written in Avro only: unset it
manifest.compression | string | zstd | I | tests/interop/test_options_implemented_java.py
manifest.target-file-size | memory | 8 mb | I | tests/integration/test_options_implemented.py tests/interop/test_option_ranges_java.py
manifest.full-compaction-threshold-size | memory | 16 mb | I | tests/integration/test_file_procedures.py
manifest.merge-min-count | int | 30 | I | tests/integration/test_options_implemented.py
upsert-key | string | - | I | tests/integration/test_upsert_key.py
partition.default-name | string | __DEFAULT_PARTITION__ | I | tests/integration/test_options_implemented.py
partition.legacy-name | bool | true | I | tests/integration/test_options_implemented.py
snapshot.num-retained.min | int | 10 | I | tests/integration/test_expire.py
snapshot.num-retained.max | int | 2147483647 | I | tests/integration/test_expire.py
snapshot.time-retained | duration | 1 h | I | tests/integration/test_expire.py
changelog.num-retained.min | int | - | I | tests/integration/test_changelog_lifecycle.py tests/interop/test_changelog_lifecycle_java.py
changelog.num-retained.max | int | - | I | tests/integration/test_changelog_lifecycle.py tests/interop/test_changelog_lifecycle_java.py
changelog.time-retained | duration | - | I | tests/integration/test_changelog_lifecycle.py
snapshot.expire.execution-mode | enum | sync | N | when expiry runs after a commit (Java's async: on another thread); it expires the same snapshots, here at the commit's end
snapshot.expire.limit | int | 50 | I | tests/integration/test_options_implemented.py
snapshot.clean-empty-directories | bool | false | I | tests/integration/test_options_implemented.py
continuous.discovery-interval | duration | 10 s | N | how often a streaming read polls for snapshots: when, not what, it reads
scan.max-splits-per-task | int | 10 | N | how Flink's source hands splits to its readers
merge-engine | enum | deduplicate | I | tests/interop/test_merge_engines_java.py
ignore-delete | bool | false | I | tests/interop/test_merge_engines_java.py
ignore-update-before | bool | false | I | tests/integration/test_changelog_producer_read.py
sort-engine | enum | loser-tree | N | the algorithm of Java's in-memory merge (loser tree or heap): the merged rows are the same
sort-spill-threshold | int | - | N | how many sorted runs Java's merge keeps in memory before it spills the rest to local files (this package does likewise): the merged rows and the files are the same
sort-spill-buffer-size | memory | 64 mb | N | memory of Java's external sort buffer, never part of the table
spill-compression | string | zstd | N | codec of local spill files, never part of the table (lzo, which Arrow IPC lacks, is refused)
spill-compression.zstd-level | int | 1 | N | codec level of local spill files, never part of the table
write-only | bool | false | I | tests/interop/test_write_compaction_java.py
source.split.target-size | memory | 128 mb | I | tests/integration/test_split_options.py
source.split.open-file-cost | memory | 4 mb | I | tests/integration/test_split_options.py
write-buffer-size | memory | 256 mb | I | tests/integration/test_bounded_memory.py
write-buffer-spill.max-disk-size | memory | 9223372036854775807 bytes | N | local disk a write buffer may spill to, never part of the table
write-buffer-spillable | bool | true | I | tests/integration/test_bounded_memory.py
write-buffer-for-append | bool | false | N | while the buffer spills (write-buffer-spillable, Java's default) Java's append files roll at target-file-size as without it; an append write with write-buffer-spillable = false too is refused (Java would close a file whenever the buffer fills): tests/integration/test_options_implemented.py
write-max-writers-to-spill | int | 10 | N | past this many append writers Java buffers their rows with spilling to local disk: the rows and the files rolled at target-file-size are the same
local-sort.max-num-file-handles | int | 128 | N | fan-in of local spill-file merges, never part of the table
page-size | memory | 64 kb | N | page size of Java's memory pool
cache-page-size | memory | 64 kb | N | page size of Java's lookup cache
target-file-size | memory | - | I | tests/integration/test_append_table.py
blob.target-file-size | memory | - | R | BLOB columns are not implemented; use Java Paimon
blob.split-by-file-size | bool | - | R | BLOB columns are not implemented; use Java Paimon
num-sorted-run.compaction-trigger | int | 5 | I | tests/interop/test_write_compaction_java.py
num-sorted-run.stop-trigger | int | - | I | tests/unit/write/test_write_compaction_options.py
num-levels | int | - | I | tests/interop/test_options_implemented_java.py
commit.force-compact | bool | false | R | compaction forced before every commit is not implemented; unset it
commit.timeout | duration | - | R | commits are bounded by commit.max-retries only; unset it
commit.max-retries | int | 10 | I | tests/integration/test_options_implemented.py tests/integration/test_racing_commits.py
commit.min-retry-wait | duration | 10 ms | I | tests/integration/test_options_implemented.py
commit.max-retry-wait | duration | 10 s | I | tests/integration/test_options_implemented.py
compaction.max-size-amplification-percent | int | 200 | I | tests/interop/test_options_implemented_java.py
compaction.force-up-level-0 | bool | false | I | tests/interop/test_options_implemented_java.py
compaction.size-ratio | int | 1 | I | tests/interop/test_options_implemented_java.py
compaction.offpeak.start.hour | int | -1 | R | refused by compaction only (reads and write-only writes go on): off-peak compaction is not implemented
compaction.offpeak.end.hour | int | -1 | R | refused by compaction only (reads and write-only writes go on): off-peak compaction is not implemented
compaction.offpeak-ratio | int | 0 | R | refused by compaction only (reads and write-only writes go on): off-peak compaction is not implemented
compaction.optimization-interval | duration | - | R | refused by compaction only (reads and write-only writes go on): early full compaction is not implemented
compaction.total-size-threshold | memory | - | R | refused by compaction only (reads and write-only writes go on): early full compaction is not implemented
compaction.incremental-size-threshold | memory | - | R | refused by compaction only (reads and write-only writes go on): early full compaction is not implemented
compaction.min.file-num | int | 5 | I | tests/interop/test_options_implemented_java.py tests/integration/test_write_compaction.py
compaction.file-num-limit | int | 100000 | R | append compaction picks as many files as Java's default allows; unset it
compaction.delete-ratio-threshold | double | 0.2 | I | tests/integration/test_options_implemented.py tests/integration/test_dv_append.py
changelog-producer | enum | none | I | tests/integration/test_changelog_input.py, tests/integration/test_changelog_producer_read.py, tests/integration/test_changelog_lookup.py
changelog-producer.row-deduplicate | bool | false | I | tests/integration/test_changelog_full_compaction.py, tests/integration/test_changelog_lookup.py
changelog-producer.row-deduplicate-ignore-fields | string | - | I | tests/integration/test_changelog_full_compaction.py, tests/integration/test_changelog_lookup.py
table-read.sequence-number.enabled | bool | false | R | reads do not return _SEQUENCE_NUMBER; unset it
key-value.sequence_number.enabled | bool | false | R | reads do not return _SEQUENCE_NUMBER; unset it
sequence.field | string | - | I | tests/interop/test_sequence_order_java.py
sequence.field.sort-order | enum | ascending | I | tests/interop/test_sequence_order_java.py
aggregation.remove-record-on-delete | bool | false | I | tests/interop/test_merge_engines_java.py
partial-update.remove-record-on-delete | bool | false | I | tests/interop/test_merge_engines_java.py
partial-update.remove-record-on-sequence-group | string | - | I | tests/integration/test_partial_update_sequence_group.py
rowkind.field | string | - | I | tests/interop/test_merge_engines_java.py
scan.mode | enum | default | I | tests/integration/test_stream_read.py tests/integration/test_options_ledger.py (compacted-full, from-creation-timestamp and from-file-creation-time are refused)
scan.timestamp | string | - | I | tests/integration/test_time_travel.py
scan.timestamp-millis | long | - | I | tests/integration/test_time_travel.py
scan.watermark | long | - | R | time travel by watermark is not implemented; use scan.snapshot-id or scan.timestamp-millis
scan.file-creation-time-millis | long | - | R | filtering files by creation time is not implemented; filter on a column instead
scan.creation-time-millis | long | - | R | filtering files by creation time is not implemented; filter on a column instead
scan.snapshot-id | long | - | I | tests/integration/test_time_travel.py
scan.tag-name | string | - | I | tests/interop/test_time_travel_java.py
scan.version | string | - | R | use scan.snapshot-id or scan.tag-name
scan.bounded.watermark | long | - | R | bounded streaming reads by watermark are not implemented; unset it
scan.manifest.parallelism | int | - | N | threads that read manifests: the same manifests are read
streaming.read.snapshot.delay | duration | - | R | refused by stream reads only (batch reads do not read it): delayed stream reads are not implemented
scan.ignore-corrupt-files | bool | false | R | corrupt files always fail a read here; unset it
scan.ignore-lost-files | bool | false | R | lost files always fail a read here; unset it
auto-create | bool | false | R | Java's catalogs refuse to create a table with it ("should be false"): unset it
streaming-read-overwrite | bool | false | R | refused by stream reads only (batch reads do not read it): stream reads skip OVERWRITE snapshots
streaming-read-append-overwrite | bool | false | R | streaming reads of overwrite snapshots' appends are not implemented; unset it
dynamic-partition-overwrite | bool | true | I | tests/interop/test_overwrite_interop.py
partition.expiration-strategy | string | values-time | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py (values-time: the time in the partition values; update-time: the newest file's creation time)
partition.expiration-time | duration | - | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py (expired partitions dropped by one OVERWRITE snapshot after a commit, and by expire_partitions)
partition.expiration-check-interval | duration | 1 h | I | tests/integration/test_partition_expire.py (kept per table handle, where Java keeps it per TableCommit)
partition.expiration-max-num | int | 100 | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py
partition.expiration-batch-size | int | - | I | tests/integration/test_partition_expire.py (one OVERWRITE snapshot per batch)
partition.timestamp-formatter | string | - | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py (partition expiry; DateTimeFormatter letters y, u, M, d, H, m, s, S and literals)
partition.timestamp-pattern | string | - | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py (partition expiry)
partition.timestamp-format.strict | bool | false | R | Java refuses writes to partitions whose values do not parse as times; not implemented: unset it
partition.end-input-to-done | bool | false | I | tests/integration/test_partition_mark_done.py tests/spark/test_spark_commit_maintenance.py (a batch commit marks the partitions it wrote new files into, as Java's Spark and Flink writers do at the end of input)
scan.plan-sort-partition | bool | false | N | orders a scan's splits by partition: the same rows are read
primary-key | string | - | I | tests/integration/test_options_implemented.py tests/integration/test_alter_table.py
partition | string | - | I | tests/integration/test_options_implemented.py
lookup.hash-load-factor | double | 0.75 | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache-file-retention | duration | 1 h | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache-max-disk-size | memory | 9223372036854775807 bytes | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache-spill-compression | string | zstd | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache-max-memory-size | memory | 256 mb | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache.high-priority-pool-ratio | double | 0.25 | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache.bloom.filter.enabled | bool | true | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.cache.bloom.filter.fpp | double | 0.05 | N | Java's local lookup files and Flink's lookup-join cache, never part of the table
lookup.remote-file.enabled | bool | false | R | remote lookup files beside data files are not written; unset it
lookup.remote-file.level-threshold | int | -2147483648 | R | remote lookup files beside data files are not written; unset it
read.batch-size | int | 1024 | N | rows per batch inside Java's readers
write.batch-size | int | 1024 | R | refused by writes and compaction of ORC files only (reads and Parquet or Avro writes go on): the rows per batch Java hands its ORC writer also move where it rolls an ORC file at target-file-size; not implemented, unset it
write.batch-memory | memory | 128 mb | R | refused by writes and compaction of ORC files only (reads and Parquet or Avro writes go on): the memory of Java's ORC writer batches also moves where it rolls an ORC file at target-file-size; not implemented, unset it
consumer-id | string | - | I | tests/integration/test_consumers.py tests/spark/test_spark_consumer_restart.py
full-compaction.delta-commits | int | - | I | tests/integration/test_write_compaction.py tests/integration/test_changelog_full_compaction.py
stream-scan-mode | enum | none | R | Java's internal scan modes of system tables; unset it
batch-scan-mode | enum | none | R | Java's internal scan modes of system tables; unset it
consumer.expiration-time | duration | - | I | tests/integration/test_consumers.py
consumer.mode | enum | exactly-once | N | how Flink's parallel readers agree on one recorded position; a stream here has one planner, which records its own position in both modes
consumer.ignore-progress | bool | false | I | tests/integration/test_consumers.py
consumer.changelog-only | bool | false | I | tests/integration/test_changelog_lifecycle.py (while changelog retention is apart from snapshots', snapshot expiry ignores consumers; changelog expiry keeps what they need)
dynamic-bucket.target-row-num | long | 2000000 | I | tests/interop/test_spark_format_dynamic_bucket_java.py tests/interop/test_options_implemented_java.py
dynamic-bucket.initial-buckets | int | - | I | tests/integration/test_options_implemented.py tests/interop/test_option_ranges_java.py
dynamic-bucket.max-buckets | int | -1 | I | tests/interop/test_options_implemented_java.py
dynamic-bucket.assigner-parallelism | int | - | I | tests/interop/test_spark_cross_partition_java.py
incremental-between | string | - | I | tests/interop/test_incremental_java.py
incremental-between-scan-mode | enum | auto | I | tests/interop/test_incremental_java.py
incremental-between-timestamp | string | - | I | tests/interop/test_incremental_java.py
incremental-to-auto-tag | string | - | R | needs Java's naming of automatic tags; use incremental-between with two tags
incremental-between-tag-to-snapshot | bool | false | I | tests/interop/test_incremental_java.py
end-input.check-partition-expire | bool | false | I | tests/integration/test_partition_expire.py tests/interop/test_partition_expire_java.py (every batch commit, identifier Long.MAX_VALUE, checks)
metadata.stats-mode | string | truncate(16) | I | tests/unit/write/test_key_value_writer.py
metadata.stats-mode.per.level | map | "" | R | one stats mode for every level: unset it and use metadata.stats-mode
metadata.stats-dense-store | bool | true | R | value stats are stored densely, as Java's default: unset it
metadata.stats-keep-first-n-columns | int | -1 | R | stats for the first n columns only are not implemented; unset it
commit.callbacks | string | "" | R | Java classes run at commit cannot run here; use Java Paimon, or pypaimon's CommitCallback in table.commit
commit.callback.#.param | string | - | R | Java classes run at commit cannot run here; use Java Paimon
tag.callbacks | string | "" | R | Java classes run at tag creation cannot run here; use Java Paimon
tag.callback.#.param | string | - | R | Java classes run at tag creation cannot run here; use Java Paimon
partition.mark-done-action | string | success-file | I | tests/integration/test_partition_mark_done.py tests/interop/test_mark_done_java.py (success-file; mark-event with metastore.partitioned-table is ignored by a filesystem catalog, as Java's; done-partition, mark-event without it, http-report and custom refused when a mark is asked for)
partition.mark-done-action.custom.class | string | - | N | read only by the custom mark-done action, which is refused when a mark is asked for
partition.mark-done-action.http.url | string | - | N | read only by the http-report mark-done action, which is refused when a mark is asked for
partition.mark-done-action.http.params | string | - | N | read only by the http-report mark-done action, which is refused when a mark is asked for
partition.sink-strategy | enum | none | I | tests/spark/test_spark_partition_sink_strategy.py (hash: Java's Spark writer shuffles bucket-unaware and postpone writes by partition; Flink's sink likewise)
metastore.partitioned-table | bool | false | N | acts through a Hive catalog's metastore; the filesystem catalog has none
metastore.tag-to-partition | string | - | N | acts through a Hive catalog's metastore; the filesystem catalog has none
metastore.tag-to-partition.preview | enum | none | N | acts through a Hive catalog's metastore; the filesystem catalog has none
tag.automatic-creation | enum | none | I | tests/integration/test_tag_automatic.py tests/interop/test_tag_auto_java.py
tag.create-success-file | bool | false | R | Java writes a success file beside every tag it creates; not implemented: unset it
tag.creation-period | enum | daily | I | tests/integration/test_tag_automatic.py tests/interop/test_tag_auto_java.py
tag.creation-delay | duration | 0 ms | I | tests/integration/test_tag_automatic.py
tag.period-formatter | enum | with_dashes | I | tests/integration/test_tag_automatic.py
tag.creation-period-duration | duration | - | I | tests/integration/test_tag_automatic.py
tag.num-retained-max | int | - | I | tests/integration/test_tag_automatic.py tests/interop/test_tag_auto_java.py
tag.default-time-retained | duration | - | I | tests/integration/test_tags.py
tag.time-expire-enabled | bool | true | I | tests/integration/test_tag_automatic.py
tag.automatic-completion | bool | false | I | tests/integration/test_tag_automatic.py
tag.batch.customized-name | string | - | I | tests/integration/test_tag_automatic.py
snapshot.watermark-idle-timeout | duration | - | N | Flink's watermark of idle sources
parquet.enable.dictionary | int | - | N | Parquet dictionary encoding inside Java's data files: only their bytes change (ours are never byte for byte Java's); the rows and where Java rolls its files are the same
sink.watermark-time-zone | string | UTC | I | tests/integration/test_tag_automatic.py (the zone of watermark tags; Flink's mark-done reads it too)
sink.process-time-zone | string | - | I | tests/integration/test_tag_automatic.py (the zone of process-time and batch tags; Flink's mark-done reads it too)
local-merge-buffer-size | memory | - | N | Flink's merge of rows before its shuffle
cross-partition-upsert.index-ttl | duration | - | I | tests/integration/test_dynamic_bucket.py
cross-partition-upsert.bootstrap-parallelism | int | 10 | N | parallelism of Flink's key index bootstrap
zorder.var-length-contribution | int | 8 | I | tests/unit/compact/test_sort_keys.py tests/integration/test_options_ledger.py
file-reader-async-threshold | memory | 10 mb | N | when Java's readers read a file asynchronously
commit.force-create-snapshot | bool | false | R | a commit with nothing new creates no snapshot here; unset it
deletion-vectors.enabled | bool | false | I | tests/interop/test_dv_java_both_ways.py
deletion-vectors.modifiable | bool | false | I | tests/integration/test_alter_table.py (refused without it) tests/integration/test_dv_read.py (switched on with it)
deletion-vector.index-file.target-size | memory | 2 mb | I | tests/integration/test_dv_append.py
deletion-vectors.bitmap64 | bool | false | I | tests/interop/test_dv_java_both_ways.py
delete.force-produce-changelog | bool | false | I | tests/spark/test_spark_dml.py
sort-compaction.range-strategy | enum | size | R | sort compaction ranges by size only (Java's default): unset it
sort-compaction.local-sample.magnification | int | 1000 | R | sort compaction samples with Java's default magnification only: unset it
record-level.expire-time | duration | - | I | tests/integration/test_record_level_expire.py
record-level.time-field | string | - | I | tests/integration/test_record_level_expire.py
fields.default-aggregate-function | string | - | I | tests/interop/test_sequence_group_java.py tests/unit/merge/test_merge_engine_semantics.py
commit.user-prefix | string | - | R | commit users are not prefixed; unset it
force-lookup | bool | false | I | tests/integration/test_compact.py
lookup-wait | bool | true | N | whether Flink's checkpoint waits for the lookup compaction (false: its changelog comes with a later commit); every commit here compacts synchronously and waits, as Java's batch writes do
lookup-compact | enum | radical | R | only radical lookup compaction is implemented; unset it
lookup-compact.max-interval | int | - | N | read only with lookup-compact = gentle, which is refused
file-operation.thread-num | int | - | N | threads of Java's file operations
scan.fallback-branch | string | - | I | tests/integration/test_fallback_branch.py tests/interop/test_fallback_branch_java.py
scan.primary-branch | string | - | I | tests/integration/test_fallback_branch.py
async-file-write | bool | true | N | whether Java writes files on a background thread
manifest.delete-file-drop-stats | bool | false | R | manifest DELETE entries keep their stats; unset it
data-file.thin-mode | bool | false | I | tests/unit/write/test_key_value_writer.py (no key columns in the file) tests/interop/test_pk_java.py (Java reads them)
partition.idle-time-to-report-statistic | duration | 0 ms | N | reports partition statistics to a metastore; the filesystem catalog has none
query-auth.enabled | bool | false | R | query authorisation needs a REST catalog (Java's filesystem catalog fails with it): unset it
materialized-table.definition-query | string | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.interval-freshness | string | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.interval-freshness.time-unit | enum | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.logical-refresh-mode | enum | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.refresh-mode | enum | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.refresh-status | enum | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.refresh-handler-description | string | - | N | Flink materialized-table metadata, never read by reads or writes
materialized-table.refresh-handler-bytes | string | - | N | Flink materialized-table metadata, never read by reads or writes
alter-column-null-to-not-null.disabled | bool | true | I | tests/interop/test_schema_evolution_java.py
disable-explicit-type-casting | bool | false | I | tests/interop/test_schema_evolution_java.py
add-column-before-partition | bool | false | I | tests/interop/test_schema_evolution_java.py
commit.strict-mode.last-safe-snapshot | long | - | R | strict-mode commit checks are not implemented; unset it
clustering.columns | string | - | R | writes clustered by columns are not implemented; unset it, or sort with sort compaction
clustering.strategy | string | auto | N | read only with clustering.columns, which is refused
clustering.incremental | bool | false | R | incremental clustering is not implemented; unset it
clustering.history-partition.limit | int | 5 | N | read only with clustering.incremental, which is refused
clustering.history-partition.idle-to-full-sort | duration | - | N | read only with clustering.incremental, which is refused
clustering.incremental.optimize-write | bool | false | N | read only with clustering.incremental, which is refused
clustering.incremental.mode | enum | global-sort | N | read only with clustering.incremental, which is refused
row-tracking.enabled | bool | false | I | tests/integration/test_row_tracking_read.py tests/integration/test_row_tracking_write.py tests/interop/test_row_tracking_java.py (reads and writes; copy-on-write DELETE/UPDATE, upsert-key and sort compaction refused)
data-evolution.enabled | bool | false | R | data evolution is not implemented; use Java Paimon
snapshot.ignore-empty-commit | bool | - | R | empty commits follow Java's batch default; unset it
index-file-in-data-file-dir | bool | false | R | index files live in the index directory; unset it
global-index.external-path | string | - | R | global indexes are not implemented (data evolution); unset it
global-index.column-update-action | enum | throw_error | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
lookup.merge-buffer-size | memory | 8 mb | N | memory of Java's lookup merge
lookup.merge-records-threshold | int | 1024 | N | when Java's lookup merge spills, never part of the table
format-table.implementation | enum | paimon | N | read only by format tables (type = format-table), which are refused
format-table.partition-path-only-value | bool | false | N | read only by format tables (type = format-table), which are refused
format-table.file.compression | string | - | N | read only by format tables (type = format-table), which are refused
format-table.commit-hive-sync-url | string | - | N | read only by format tables (type = format-table), which are refused
blob-field | string | - | R | BLOB columns are not implemented; use Java Paimon
blob-descriptor-field | string | - | R | BLOB columns are not implemented; use Java Paimon
blob-as-descriptor | bool | false | R | BLOB columns are not implemented; use Java Paimon
blob-external-storage-path | string | - | R | BLOB columns are not implemented; use Java Paimon
blob-external-storage-field | string | - | R | BLOB columns are not implemented; use Java Paimon
commit.discard-duplicate-files | bool | false | R | a commit of files already committed fails here; unset it
postpone.batch-write-fixed-bucket | bool | true | I | tests/interop/test_postpone_java.py
postpone.batch-write-fixed-bucket.max-parallelism | int | 2048 | N | caps the buckets Java's Flink and Spark fixed-bucket batch writes give a new partition, min(write parallelism, this): one writer's write gets 1 bucket whatever it is, as here (with postpone.default-bucket-num's default); the Spark door gives postpone.default-bucket-num, not Java's parallelism (a known difference), which this cap would not change
postpone.default-bucket-num | int | 1 | I | tests/interop/test_postpone_java.py
global-index.row-count-per-shard | long | 100000 | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
global-index.build.max-shard | int | 32 | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
global-index.build.max-parallelism | int | 4096 | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
global-index.enabled | bool | true | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
global-index.thread-num | int | - | N | acts on global indexes, which exist only with data-evolution.enabled (refused)
overwrite-upgrade | bool | true | I | tests/integration/test_overwrite.py
visibility-callback.enabled | bool | false | R | commits that wait for compaction to make rows visible are not implemented; unset it
visibility-callback.timeout | duration | 30 min | N | read only with visibility-callback.enabled, which is refused
visibility-callback.check-interval | duration | 10 s | N | read only with visibility-callback.enabled, which is refused
vector.file.format | string | - | R | VECTOR columns are not implemented; use Java Paimon
vector-field | string | - | R | VECTOR columns are not implemented; use Java Paimon
vector.target-file-size | memory | - | R | VECTOR columns are not implemented; use Java Paimon
pk-clustering-override | bool | false | R | clustering of primary-key tables is not implemented; unset it
"""  # noqa: E501

_PYPAIMON = """
postpone.target-row-num-per-bucket | long | - | N | pypaimon 2.1 only (its postpone batch write's bucket count); Java 1.4.2 has no such option, and a one-writer fixed-bucket batch write plans one bucket in Java and here: tests/integration/test_options_ledger.py
postpone.target-size-per-bucket | memory | 1 gb | N | pypaimon 2.1 only (its postpone batch write's bucket count); Java 1.4.2 has no such option, and a one-writer fixed-bucket batch write plans one bucket in Java and here: tests/integration/test_options_ledger.py
primary-key.nullable | bool | false | R | pypaimon 2.1 only; nullable keys need null-safe key merging: unset it
target-file-row-num | long | 9223372036854775807 | R | pypaimon 2.1 only; rolling files by row count is not implemented: use target-file-size
bitmap-index.compression | string | none | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
bitmap-index.compression-level | int | 1 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
bitmap-index.dictionary-block-size | memory | 16 kb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
bitmap-index.fallback-scan-max-size | memory | 256 mb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
blob-view-field | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
blob-view.resolve.enabled | bool | true | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
blob.copy-buffer-size | memory | 4 kb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
btree-index.block-size | memory | 64 kb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
btree-index.bloom-filter.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
btree-index.fallback-scan-max-size | memory | 256 mb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
btree-index.records-per-range | long | 10000000 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
commit.native.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
data-evolution.row-id-conflict-rewrite.max-size | memory | 256 mb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
data-evolution.row-sidecar.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
data-evolution.row-sidecar.max-selected-rows | int | 4096 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
data-evolution.row-sidecar.max-selection-ratio | double | 0.05 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
data-evolution.write-cols-optimization.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
deletion-vectors.merge-on-read | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
full-text-index.search-mode | enum | fast | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
global-index.build.parallelism | int | 1 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
global-index.filter.refine-from-data | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
global-index.search-mode | enum | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
local-cache.block-size | memory | 1 mb | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
local-cache.dir | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
local-cache.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
local-cache.max-size | memory | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
local-cache.whitelist | string | meta,global-index | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
manifest-sort.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
manifest.sidecar.enabled | bool | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
mosaic.num-buckets | int | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
mosaic.stats-columns | string | "" | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
parquet.filter.columnindex.enabled | bool | true | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
parquet.write-page-index.enabled | bool | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
pk-bitmap.index.columns | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
pk-btree.index.columns | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
pk-full-text.index.columns | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
pk-vector.index.columns | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
read.native.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
read.parallelism | int | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
row-tracking.partition-group-on-commit | bool | true | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
scalar-index.search-mode | enum | fast | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
scan.native-plan.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
sorted-index.records-per-file | long | 25000000 | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
vector-index.search-mode | enum | fast | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
video-frame-field | string | - | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
write.native.enabled | bool | false | N | pypaimon 2.1 only; Java 1.4.2 has no such option and this package writes and reads as Java does
"""  # noqa: E501

# Java's SparkConnectorOptions this package acts on: options of one Spark write, never stored
_SPARK = """
write.merge-schema | bool | false | I | tests/spark/test_spark_merge_schema.py tests/unit/test_schema_merge.py (a write option or the session's spark.paimon.write.merge-schema; not stored in the table)
write.merge-schema.explicit-cast | bool | false | I | tests/spark/test_spark_merge_schema.py tests/unit/test_schema_merge.py (with write.merge-schema; not stored in the table)
"""  # noqa: E501

PREFIX_RULES = (
    PrefixRule(
        "fields.",
        IMPLEMENTED,
        "tests/interop/test_merge_engines_java.py "
        "tests/integration/test_partial_update_sequence_group.py "
        "tests/interop/test_sequence_group_java.py "
        "tests/unit/merge/test_aggregate_functions_more.py "
        "tests/interop/test_aggregate_functions_java.py "
        "(per-field merge options; merge/ refuses an unknown one)",
    ),
    PrefixRule("file-index.", IMPLEMENTED, "tests/integration/test_file_index.py"),
    PrefixRule(
        "lookup.",
        NO_EFFECT,
        "Flink's lookup-join settings and Java's local lookup files, never part of the table",
    ),
    PrefixRule("commit.callback.", REFUSED, "Java classes run at commit cannot run here"),
    PrefixRule("tag.callback.", REFUSED, "Java classes run at tag creation cannot run here"),
    PrefixRule("blob", REFUSED, "BLOB columns are not implemented; use Java Paimon"),
    PrefixRule(
        "metadata.iceberg.",
        REFUSED,
        "Java's IcebergOptions: Iceberg-compatible metadata is not written here; unset it",
    ),
    PrefixRule("vector.", REFUSED, "VECTOR columns are not implemented; use Java Paimon"),
)
"""Statuses of keys by prefix, for keys no entry lists; the first matching prefix rules."""

_COMPACTION = "compaction"
_STREAM_READS = "stream reads"
WRITES = "writes and compaction"
ORC_WRITES = "writes and compaction of ORC files"
REFUSED_ONLY_BY = {
    "file.block-size": WRITES,
    "write.batch-size": ORC_WRITES,
    "write.batch-memory": ORC_WRITES,
    "compaction.optimization-interval": _COMPACTION,
    "compaction.total-size-threshold": _COMPACTION,
    "compaction.incremental-size-threshold": _COMPACTION,
    "compaction.offpeak.start.hour": _COMPACTION,
    "compaction.offpeak.end.hour": _COMPACTION,
    "compaction.offpeak-ratio": _COMPACTION,
    "streaming.read.snapshot.delay": _STREAM_READS,
    "streaming-read-overwrite": _STREAM_READS,
}
"""Refused keys that only one operation refuses (``CoreOptions.check_compaction_supported``,
``read/stream_scan.py``, ``CoreOptions.check_files_writable`` for :data:`WRITES` and
:data:`ORC_WRITES`), as nothing
else reads them: the table opens, and batch reads (and write-only writes, for the compaction
keys) go on."""

PENDING_TESTS = frozenset(
    {
        "tests/integration/test_file_index.py",
        "tests/integration/test_partial_update_sequence_group.py",
        "tests/unit/merge/test_aggregate_functions_more.py",
        "tests/integration/test_upsert_key.py",
        "tests/integration/test_changelog_producer_read.py",
        "tests/integration/test_record_level_expire.py",
        "tests/integration/test_bucket_functions.py",
        "tests/integration/test_external_paths.py",
        "tests/integration/test_row_tracking_read.py",
    }
)
"""Test files of keys being implemented in issue 38 that may not exist yet."""


def _parse(table: str, origin: str) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for line in table.strip().splitlines():
        key, kind, default, status, note = (part.strip() for part in line.split("|", 4))
        value = None if default == "-" else "" if default == '""' else default
        out[key] = Entry(key, kind, value, _STATUS[status], note, origin)
    return out


JAVA_KEYS = _parse(_JAVA, "java")
"""Every key of Java 1.4.2's CoreOptions, in its declaration order."""

PYPAIMON_KEYS = _parse(_PYPAIMON, "pypaimon")
"""The keys pypaimon 2.1 acts on that Java 1.4.2 lacks."""

SPARK_KEYS = _parse(_SPARK, "spark")
"""Java 1.4.2's Spark connector write options (SparkConnectorOptions) acted on here."""

LEDGER = {**JAVA_KEYS, **PYPAIMON_KEYS, **SPARK_KEYS}

FALLBACK_KEYS = {
    "parquet.variant.shreddingSchema": "variant.shreddingSchema",
    "snapshot.expire.clean-empty-directories": "snapshot.clean-empty-directories",
    "first-row.ignore-delete": "ignore-delete",
    "deduplicate.ignore-delete": "ignore-delete",
    "partial-update.ignore-delete": "ignore-delete",
    "write.compaction-skip": "write-only",
    "log.scan": "scan.mode",
    "log.scan.timestamp-millis": "scan.timestamp-millis",
    "orc.write.batch-size": "write.batch-size",
    "changelog-producer.lookup-wait": "lookup-wait",
    "delete-file.thread-num": "file-operation.thread-num",
    "sink.clustering.by-columns": "clustering.columns",
    "sink.clustering.strategy": "clustering.strategy",
    "blob.stored-descriptor-fields": "blob-descriptor-field",
}
"""Java's fallback keys (an older name Java still reads) that are not keys themselves, and the
key each stands for: it has that key's status."""


def status_of(key: str) -> Entry | PrefixRule | None:
    """The ledger's entry for ``key`` (or for the key it is a fallback of), else the prefix
    rule covering it, else None."""
    entry = LEDGER.get(key) or LEDGER.get(FALLBACK_KEYS.get(key, ""))
    if entry is not None:
        return entry
    return next((r for r in PREFIX_RULES if key.startswith(r.prefix)), None)


def counts() -> dict[str, int]:
    """Keys per status, Java's and pypaimon's together."""
    return {s: sum(e.status == s for e in LEDGER.values()) for s in STATUSES}


def markdown() -> str:
    """``docs/options.md``'s tables: one row per key, then one per prefix rule."""

    def cell(text: str | None) -> str:
        return "(none)" if text is None else f"`{text}`" if text else '`""`'

    out = ["| key | origin | Java default | status | test, or what to do instead, or why |"]
    out.append("|---|---|---|---|---|")
    for e in LEDGER.values():
        note = e.note.replace("|", "\\|")
        out.append(f"| `{e.key}` | {e.origin} | {cell(e.default)} | {e.status} | {note} |")
    out.append("")
    out.append("| prefix | status | test, or what to do instead, or why |")
    out.append("|---|---|---|")
    out.extend(f"| `{r.prefix}*` | {r.status} | {r.note} |" for r in PREFIX_RULES)
    return "\n".join(out) + "\n"
