/*
 * Java Paimon's file procedures (purge_files, remove_unexisting_files, compact_manifest) as its
 * Spark and Flink procedures run them, and the manifests of a table's latest snapshot, for
 * tests/interop/test_file_procedures_java.py through tests/interop/file_procedures_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.io.CompactIncrement;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataIncrement;
import org.apache.paimon.manifest.ManifestFileMeta;
import org.apache.paimon.manifest.ManifestList;
import org.apache.paimon.operation.ListUnexistingFiles;
import org.apache.paimon.options.Options;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageImpl;
import org.apache.paimon.table.sink.TableCommitImpl;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class FileProceduresOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private FileProceduresOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    private static FileStoreTable table(Catalog catalog, String db, String name)
            throws Exception {
        return (FileStoreTable) catalog.getTable(Identifier.create(db, name));
    }

    /** PurgeFilesProcedure: FileStoreTable.purgeFiles(). */
    public static void purgeFiles(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            table(catalog, db, name).purgeFiles();
        }
    }

    /** CompactManifestProcedure: a batch commit's compactManifests(). */
    public static void compactManifest(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            try (BatchTableCommit commit =
                    table(catalog, db, name).newBatchWriteBuilder().newCommit()) {
                commit.compactManifests();
            }
        }
    }

    /**
     * SparkRemoveUnexistingFiles: ListUnexistingFiles over every partition, one message per
     * (partition, bucket) deleting the missing files, committed under Long.MAX_VALUE unless
     * dryRun. Answers the paths found.
     */
    public static String removeUnexistingFiles(
            String warehouse, String db, String name, boolean dryRun) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            ListUnexistingFiles operation = new ListUnexistingFiles(table);
            List<CommitMessage> messages = new ArrayList<>();
            ArrayNode paths = MAPPER.createArrayNode();
            for (BinaryRow partition : table.newScan().listPartitions()) {
                for (Map.Entry<Integer, Map<String, DataFileMeta>> entry :
                        operation.list(partition).entrySet()) {
                    messages.add(
                            new CommitMessageImpl(
                                    partition.copy(),
                                    entry.getKey(),
                                    table.coreOptions().bucket(),
                                    new DataIncrement(
                                            Collections.emptyList(),
                                            new ArrayList<>(entry.getValue().values()),
                                            Collections.emptyList()),
                                    CompactIncrement.emptyIncrement()));
                    entry.getValue().keySet().forEach(paths::add);
                }
            }
            if (!dryRun && !messages.isEmpty()) {
                try (TableCommitImpl commit = table.newCommit(UUID.randomUUID().toString())) {
                    commit.commit(Long.MAX_VALUE, messages);
                }
            }
            return MAPPER.writeValueAsString(paths);
        }
    }

    /**
     * The latest snapshot's kind, its base and delta manifests ({"added", "deleted"} each), and
     * the table's tags, branches and consumers.
     */
    public static String describe(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            ObjectNode out = MAPPER.createObjectNode();
            Snapshot latest = table.snapshotManager().latestSnapshot();
            if (latest != null) {
                ManifestList list = table.store().manifestListFactory().create();
                out.put("kind", latest.commitKind().name());
                out.put("id", latest.id());
                out.set("base", metas(list.read(latest.baseManifestList())));
                out.set("delta", metas(list.read(latest.deltaManifestList())));
            }
            ArrayNode tags = MAPPER.createArrayNode();
            table.tagManager().allTagNames().forEach(tags::add);
            out.set("tags", tags);
            ArrayNode branches = MAPPER.createArrayNode();
            table.branchManager().branches().forEach(branches::add);
            out.set("branches", branches);
            ArrayNode consumers = MAPPER.createArrayNode();
            table.consumerManager().consumers().keySet().forEach(consumers::add);
            out.set("consumers", consumers);
            return MAPPER.writeValueAsString(out);
        }
    }

    private static ArrayNode metas(List<ManifestFileMeta> metas) {
        ArrayNode out = MAPPER.createArrayNode();
        for (ManifestFileMeta meta : metas) {
            ObjectNode m = MAPPER.createObjectNode();
            m.put("added", meta.numAddedFiles());
            m.put("deleted", meta.numDeletedFiles());
            out.add(m);
        }
        return out;
    }
}
