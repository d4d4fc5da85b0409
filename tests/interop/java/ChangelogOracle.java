/*
 * Java Paimon's changelog producers and change reads, for tests/interop/test_changelog_java.py
 * through tests/interop/changelog_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.DynamicBucketRowKeyExtractor;
import org.apache.paimon.table.sink.SinkRecord;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class ChangelogOracle {

    private ChangelogOracle() {}

    /**
     * Writes {@code commitsJson} ([[["+I", v1, v2, ...], ...], ...]: per commit, rows in the
     * table's column order after their row kind, canonical encoding) into db.name, copied with
     * the dynamic options {@code optionsJson} ({"k": "v"}), with ONE
     * stream write (as one Flink writer task across checkpoints), committing commit i with
     * identifier i (1-based, as Flink's checkpoint ids). Every prepareCommit waits for its
     * compaction, so the snapshots are deterministic (Flink's lookup writer waits by default;
     * its input writer would let compaction run asynchronously, which changes no changelog).
     * With changelog-producer full-compaction, the buckets written since the last full
     * compaction are compacted fully at every identifier divisible by
     * full-compaction.delta-commits (default 1), as Flink's GlobalFullCompactionSinkWrite does;
     * a table without that producer but with full-compaction.delta-commits set gets the same;
     * write-only gets none (Flink's plain writer then).
     * Returns the latest snapshot id after each commit, as a JSON list.
     */
    public static String writeCommits(
            String warehouse, String db, String name, String commitsJson, String optionsJson)
            throws Exception {
        JsonNode commits = PaimonOracle.MAPPER.readTree(commitsJson);
        Map<String, String> dynamic = new LinkedHashMap<>();
        PaimonOracle.MAPPER
                .readTree(optionsJson)
                .fields()
                .forEachRemaining(e -> dynamic.put(e.getKey(), e.getValue().asText()));
        Path tmp = Files.createTempDirectory("changelog-oracle-io");
        ArrayNode ids = PaimonOracle.MAPPER.createArrayNode();
        try (Catalog catalog = PaimonOracle.catalog(warehouse);
                IOManager io = IOManager.create(tmp.toString())) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name).copy(dynamic);
            CoreOptions options = table.coreOptions();
            Map<String, String> raw = table.options();
            boolean fullTrigger =
                    !options.writeOnly()
                            && (options.changelogProducer()
                                            == CoreOptions.ChangelogProducer.FULL_COMPACTION
                                    || raw.containsKey(
                                            CoreOptions.FULL_COMPACTION_DELTA_COMMITS.key()));
            int deltaCommits =
                    Math.max(
                            raw.containsKey(CoreOptions.FULL_COMPACTION_DELTA_COMMITS.key())
                                    ? options.fullCompactionDeltaCommits()
                                    : 1,
                            1);
            RowType rowType = table.rowType();
            StreamWriteBuilder builder = table.newStreamWriteBuilder();
            Map<BinaryRow, Set<Integer>> written = new LinkedHashMap<>();
            // a dynamic-bucket table routes rows as Flink's single-task HashBucketAssigner does
            HashBucketAssigner assigner = null;
            DynamicBucketRowKeyExtractor extractor = null;
            if (table.bucketMode() == BucketMode.HASH_DYNAMIC) {
                Integer max = options.dynamicBucketMaxBuckets();
                assigner =
                        new HashBucketAssigner(
                                table.snapshotManager(),
                                builder.commitUser(),
                                table.store().newIndexFileHandler(),
                                1,
                                1,
                                0,
                                options.dynamicBucketTargetRowNum(),
                                max == null ? -1 : max);
                extractor = new DynamicBucketRowKeyExtractor(table.schema());
            }
            try (TableWriteImpl<?> write = (TableWriteImpl<?>) builder.newWrite();
                    StreamTableCommit commit = builder.newCommit()) {
                write.withIOManager(io);
                long identifier = 0;
                for (JsonNode rows : commits) {
                    identifier++;
                    for (JsonNode row : rows) {
                        ArrayNode values = PaimonOracle.MAPPER.createArrayNode();
                        for (int i = 1; i < row.size(); i++) {
                            values.add(row.get(i));
                        }
                        GenericRow internal = (GenericRow) PaimonOracle.decode(values, rowType);
                        internal.setRowKind(RowKind.fromShortString(row.get(0).asText()));
                        SinkRecord record;
                        if (assigner == null) {
                            record = write.writeAndReturn(internal);
                        } else {
                            extractor.setRecord(internal);
                            int hash = extractor.trimmedPrimaryKey().hashCode();
                            record =
                                    write.writeAndReturn(
                                            internal, assigner.assign(extractor.partition(), hash));
                        }
                        if (record != null) {
                            written.computeIfAbsent(
                                            record.partition().copy(), k -> new LinkedHashSet<>())
                                    .add(record.bucket());
                        }
                    }
                    if (fullTrigger && identifier % deltaCommits == 0) {
                        for (Map.Entry<BinaryRow, Set<Integer>> e : written.entrySet()) {
                            for (int bucket : e.getValue()) {
                                write.compact(e.getKey(), bucket, true);
                            }
                        }
                        written.clear();
                    }
                    List<CommitMessage> messages = write.prepareCommit(true, identifier);
                    commit.commit(identifier, messages);
                    if (assigner != null) {
                        assigner.prepareCommit(identifier);
                    }
                    Long latest = table.snapshotManager().latestSnapshotId();
                    ids.add(latest == null ? -1L : latest);
                }
            }
        } finally {
            deleteTree(tmp.toFile());
        }
        return PaimonOracle.MAPPER.writeValueAsString(ids);
    }

    /**
     * Java's stream read of db.name (a data table, or a system table such as t$audit_log)
     * copied with {@code optionsJson} (e.g. scan.mode from-snapshot, scan.snapshot-id 1):
     * {@code newReadBuilder().newStreamScan()}, plan() until no next snapshot exists, each plan
     * read with row kinds. Answers {"plans":
     * [{"snapshot": id, "rows": [["+I", v1, ...], ...]}, ...], "error": null} with one entry per
     * non-empty plan in scan order ("snapshot": its splits' snapshot id), or {"plans": null,
     * "error": "<root cause>"} when Java refuses.
     */
    public static String streamChanges(
            String warehouse, String db, String name, String optionsJson) throws Exception {
        Map<String, String> dynamic = new LinkedHashMap<>();
        PaimonOracle.MAPPER
                .readTree(optionsJson)
                .fields()
                .forEachRemaining(e -> dynamic.put(e.getKey(), e.getValue().asText()));
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        Path tmp = Files.createTempDirectory("changelog-oracle-io");
        try (Catalog catalog = PaimonOracle.catalog(warehouse);
                IOManager io = IOManager.create(tmp.toString())) {
            Table table =
                    catalog.getTable(org.apache.paimon.catalog.Identifier.create(db, name))
                            .copy(dynamic);
            ArrayNode plans = PaimonOracle.MAPPER.createArrayNode();
            try {
                RowType rowType = table.rowType();
                ReadBuilder builder = table.newReadBuilder();
                StreamTableScan scan = builder.newStreamScan();
                TableRead read = builder.newRead().withIOManager(io);
                // the first plan may only position the scan; a later empty plan means that no
                // next snapshot exists (DataTableStreamScan.nextPlan skips empty snapshots)
                boolean first = true;
                while (true) {
                    TableScan.Plan plan = scan.plan();
                    List<Split> splits = plan.splits();
                    if (splits.isEmpty()) {
                        if (!first) {
                            break;
                        }
                        first = false;
                        continue;
                    }
                    first = false;
                    ObjectNode node = plans.addObject();
                    Split split = splits.get(0);
                    node.put(
                            "snapshot",
                            split instanceof DataSplit ? ((DataSplit) split).snapshotId() : -1L);
                    ArrayNode rows = node.putArray("rows");
                    try (RecordReader<InternalRow> reader = read.createReader(plan)) {
                        reader.forEachRemaining(
                                row -> {
                                    ArrayNode r = PaimonOracle.encodeRow(row, rowType);
                                    r.insert(0, row.getRowKind().shortString());
                                    rows.add(r);
                                });
                    }
                }
            } catch (Exception e) {
                out.putNull("plans");
                out.put("error", rootMessage(e));
                return PaimonOracle.MAPPER.writeValueAsString(out);
            }
            out.set("plans", plans);
            out.putNull("error");
        } finally {
            deleteTree(tmp.toFile());
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    /**
     * Per snapshot of db.name: {"id", "commitKind", "commitIdentifier", "changelogManifestList"
     * (or null), "changelogRecordCount" (or null)}, oldest first, plus "changelogFiles": the
     * names of the changelog files Java finds in each snapshot's changelog manifests.
     */
    public static String snapshotChangelogs(String warehouse, String db, String name)
            throws Exception {
        ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            List<org.apache.paimon.Snapshot> snapshots = new ArrayList<>();
            table.snapshotManager().snapshots().forEachRemaining(snapshots::add);
            for (org.apache.paimon.Snapshot s : snapshots) {
                ObjectNode node = out.addObject();
                node.put("id", s.id());
                node.put("commitKind", s.commitKind().name());
                node.put("commitIdentifier", s.commitIdentifier());
                node.put("changelogManifestList", s.changelogManifestList());
                if (s.changelogRecordCount() == null) {
                    node.putNull("changelogRecordCount");
                } else {
                    node.put("changelogRecordCount", s.changelogRecordCount());
                }
                ArrayNode files = node.putArray("changelogFiles");
                for (DataSplit split :
                        table.newSnapshotReader()
                                .withSnapshot(s)
                                .withMode(org.apache.paimon.table.source.ScanMode.CHANGELOG)
                                .read()
                                .dataSplits()) {
                    split.dataFiles().forEach(f -> files.add(f.fileName()));
                }
            }
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    private static void deleteTree(java.io.File file) {
        java.io.File[] children = file.listFiles();
        if (children != null) {
            for (java.io.File child : children) {
                deleteTree(child);
            }
        }
        file.delete();
    }
}
