/*
 * Java's rewrite_file_index without an engine: FileIndexProcessor (paimon-core, the work of
 * Spark's and Flink's RewriteFileIndexProcedure) on every file of the latest snapshot, committed
 * as their sinks commit it (one CompactIncrement per file: the file before, the file after).
 */
package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.index.FileIndexProcessor;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.List;

/** Called from tests/interop/rewrite_file_index_oracle.py. */
public final class RewriteFileIndexOracle {

    private RewriteFileIndexOracle() {}

    /**
     * Rewrites the file indexes of every file of the latest snapshot and commits; returns, per
     * data file, its embedded index (hex, or null) and extra files after the commit.
     */
    public static String rewrite(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            FileIndexProcessor processor = new FileIndexProcessor(table);
            List<CommitMessage> messages = new ArrayList<>();
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                DataFileMeta indexed = processor.process(e.partition(), e.bucket(), e);
                messages.add(
                        new CommitMessageImpl(
                                e.partition(),
                                e.bucket(),
                                e.totalBuckets(),
                                DataIncrement.emptyIncrement(),
                                new CompactIncrement(
                                        Collections.singletonList(e.file()),
                                        Collections.singletonList(indexed),
                                        Collections.emptyList())));
            }
            try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                commit.commit(messages);
            }
            return files(PaimonOracle.table(catalog, db, name));
        }
    }

    /** Per data file of the latest snapshot: its embedded index (hex or null), extra files. */
    public static String files(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return files(PaimonOracle.table(catalog, db, name));
        }
    }

    private static String files(FileStoreTable table) throws Exception {
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        for (ManifestEntry e : table.store().newScan().plan().files()) {
            DataFileMeta file = e.file();
            ObjectNode node = out.putObject(file.fileName());
            byte[] embedded = file.embeddedIndex();
            node.put("embedded", embedded == null ? null : HexFormat.of().formatHex(embedded));
            node.putPOJO("extra_files", file.extraFiles());
        }
        out.put("_commit_kind", table.snapshotManager().latestSnapshot().commitKind().name());
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }
}
