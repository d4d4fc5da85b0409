/*
 * Java Paimon's decoupled changelog lifecycle (long-lived changelog/changelog-<id> files), for
 * tests/interop/test_changelog_lifecycle_java.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.operation.CleanOrphanFilesResult;
import org.apache.paimon.operation.LocalOrphanFilesClean;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.ExpireChangelogImpl;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableRead;
import org.apache.paimon.table.source.TableScan;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.ChangelogManager;
import org.apache.paimon.utils.SnapshotManager;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class ChangelogLifecycleOracle {

    private ChangelogLifecycleOracle() {}

    private static FileStoreTable table(Catalog catalog, String db, String name, String optionsJson)
            throws Exception {
        Map<String, String> dynamic = new LinkedHashMap<>();
        PaimonOracle.MAPPER
                .readTree(optionsJson)
                .fields()
                .forEachRemaining(e -> dynamic.put(e.getKey(), e.getValue().asText()));
        return PaimonOracle.table(catalog, db, name).copy(dynamic);
    }

    /**
     * What Java sees of db.name: {"snapshots": [ids], "changelogs": [long-lived changelog ids],
     * "earliestChangelog", "latestChangelog" (Java's hint-then-listing answers, or null),
     * "decoupled": CoreOptions.changelogLifecycleDecoupled}.
     */
    public static String state(String warehouse, String db, String name) throws Exception {
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            SnapshotManager sm = table.snapshotManager();
            ChangelogManager cm = table.changelogManager();
            ArrayNode snapshots = out.putArray("snapshots");
            List<Long> ids = new ArrayList<>();
            sm.snapshots().forEachRemaining(s -> ids.add(s.id()));
            Collections.sort(ids);
            ids.forEach(snapshots::add);
            ArrayNode changelogs = out.putArray("changelogs");
            List<Long> cids = new ArrayList<>();
            cm.changelogs().forEachRemaining(c -> cids.add(c.id()));
            Collections.sort(cids);
            cids.forEach(changelogs::add);
            Long earliest = cm.earliestLongLivedChangelogId();
            Long latest = cm.latestLongLivedChangelogId();
            if (earliest == null) {
                out.putNull("earliestChangelog");
            } else {
                out.put("earliestChangelog", earliest);
            }
            if (latest == null) {
                out.putNull("latestChangelog");
            } else {
                out.put("latestChangelog", latest);
            }
            out.put("decoupled", table.coreOptions().changelogLifecycleDecoupled());
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    /**
     * Java's stream read of db.name copied with {@code optionsJson}: plan() until no next
     * snapshot or changelog, each plan read with row kinds. {"plans": [{"snapshot": id, "rows":
     * [["+I", v1, ...], ...]}, ...], "error": null}, or {"plans": null, "error": "..."}.
     */
    public static String streamChanges(
            String warehouse, String db, String name, String optionsJson) throws Exception {
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        Path tmp = Files.createTempDirectory("changelog-lifecycle-io");
        try (Catalog catalog = PaimonOracle.catalog(warehouse);
                IOManager io = IOManager.create(tmp.toString())) {
            FileStoreTable table = table(catalog, db, name, optionsJson);
            ArrayNode plans = PaimonOracle.MAPPER.createArrayNode();
            try {
                RowType rowType = table.rowType();
                ReadBuilder builder = table.newReadBuilder();
                StreamTableScan scan = builder.newStreamScan();
                TableRead read = builder.newRead().withIOManager(io);
                Long latest = table.snapshotManager().latestSnapshotId();
                long end = latest == null ? 0 : latest;
                int empty = 0;
                while (true) {
                    TableScan.Plan plan = scan.plan();
                    List<Split> splits = plan.splits();
                    if (splits.isEmpty()) {
                        Long next = scan.checkpoint();
                        if (next == null || next > end || ++empty > 64) {
                            break;
                        }
                        continue;
                    }
                    ObjectNode node = plans.addObject();
                    node.put("snapshot", ((DataSplit) splits.get(0)).snapshotId());
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
     * Java's expiry of db.name copied with {@code optionsJson}, as its commit runs it: snapshot
     * expiry with the table's ExpireConfig, then, when the changelog is decoupled, changelog
     * expiry (AbstractFileStoreTable.newExpireRunnable). Returns [snapshots expired, changelog
     * ids expired].
     */
    public static String expire(String warehouse, String db, String name, String optionsJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name, optionsJson);
            int snapshots =
                    table.newExpireSnapshots().config(table.coreOptions().expireConfig()).expire();
            int changelogs = 0;
            if (table.coreOptions().changelogLifecycleDecoupled()) {
                changelogs =
                        table.newExpireChangelog()
                                .config(table.coreOptions().expireConfig())
                                .expire();
            }
            ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
            out.add(snapshots);
            out.add(changelogs);
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
    }

    /** Java's ExpireChangelogImpl.expireAll (expire_changelogs with delete_all). */
    public static void expireAllChangelogs(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            ((ExpireChangelogImpl) PaimonOracle.table(catalog, db, name).newExpireChangelog())
                    .expireAll();
        }
    }

    /** Java's remove_orphan_files as a dry run with a cutoff of now: the paths it would delete. */
    public static String orphans(String warehouse, String db, String name, long olderThanMillis)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            CleanOrphanFilesResult result =
                    new LocalOrphanFilesClean(table, olderThanMillis, true).clean();
            ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
            List<String> paths = new ArrayList<>();
            if (result.getDeletedFilesPath() != null) {
                result.getDeletedFilesPath().forEach(p -> paths.add(p.toString()));
            }
            Collections.sort(paths);
            paths.forEach(out::add);
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
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
