/*
 * Java Paimon's full-compaction changelog producer as its Flink writer drives it, for
 * tests/interop/test_changelog_full_compaction_java.py.
 */

package paimonoracle;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.SinkRecord;
import org.apache.paimon.table.sink.StreamTableCommit;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableWriteImpl;
import org.apache.paimon.types.RowKind;
import org.apache.paimon.types.RowType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class FullChangelogOracle {

    private FullChangelogOracle() {}

    /**
     * Writes {@code commitsJson} ([[["+I", v1, ...], ...], ...]: per commit, its rows after
     * their row kind) into db.name with one stream write, commit i under identifier i (1-based).
     * At every identifier divisible by {@code deltaCommits} the buckets written since the last
     * such commit are compacted fully first (Flink's GlobalFullCompactionSinkWrite); every
     * prepareCommit waits for its compactions. Returns the latest snapshot id after each commit.
     */
    public static String write(
            String warehouse, String db, String name, String commitsJson, int deltaCommits)
            throws Exception {
        JsonNode commits = PaimonOracle.MAPPER.readTree(commitsJson);
        Path tmp = Files.createTempDirectory("full-changelog-oracle");
        ArrayNode ids = PaimonOracle.MAPPER.createArrayNode();
        try (Catalog catalog = PaimonOracle.catalog(warehouse);
                IOManager io = IOManager.create(tmp.toString())) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            if (table.coreOptions().changelogProducer()
                    != CoreOptions.ChangelogProducer.FULL_COMPACTION) {
                throw new IllegalArgumentException(name + " has no full-compaction producer");
            }
            RowType rowType = table.rowType();
            StreamWriteBuilder builder = table.newStreamWriteBuilder();
            Map<String, BinaryRow> partitions = new LinkedHashMap<>();
            Map<String, Integer> written = new LinkedHashMap<>();
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
                        SinkRecord record = write.writeAndReturn(internal);
                        if (record != null) {
                            String key = record.partition() + "/" + record.bucket();
                            partitions.putIfAbsent(key, record.partition().copy());
                            written.put(key, record.bucket());
                        }
                    }
                    if (identifier % deltaCommits == 0) {
                        for (Map.Entry<String, Integer> e : written.entrySet()) {
                            write.compact(partitions.get(e.getKey()), e.getValue(), true);
                        }
                        written.clear();
                    }
                    commit.commit(identifier, write.prepareCommit(true, identifier));
                    Long latest = table.snapshotManager().latestSnapshotId();
                    ids.add(latest == null ? -1L : latest);
                }
            }
        } finally {
            try (java.util.stream.Stream<Path> walk = Files.walk(tmp)) {
                walk.sorted(java.util.Comparator.reverseOrder())
                        .forEach(p -> p.toFile().delete());
            }
        }
        return PaimonOracle.MAPPER.writeValueAsString(ids);
    }
}
