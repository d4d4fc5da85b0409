/*
 * Java Paimon 1.4.2's tag procedures by time and watermark (CreateTagFromTimestampProcedure,
 * CreateTagFromWatermarkProcedure, RollbackToTimestampProcedure, RollbackToWatermarkProcedure),
 * replaceTag / renameTag, and commits carrying a watermark, for
 * tests/interop/test_tag_procedures_java.py through tests/interop/tag_procedures_oracle.py.
 * The procedures' bodies are the core calls Spark's and Flink's procedures make (their classes
 * are not in paimon-bundle).
 */

package paimonoracle;

import org.apache.paimon.Snapshot;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.manifest.ManifestCommittable;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.SnapshotManager;
import org.apache.paimon.utils.TimeUtils;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class TagProceduresOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private TagProceduresOracle() {}

    private static Duration duration(String text) {
        return text == null ? null : TimeUtils.parseDuration(text);
    }

    private static String tagRow(String tag, Snapshot snapshot) throws Exception {
        ObjectNode out = MAPPER.createObjectNode();
        out.put("tagName", tag);
        out.put("snapshot", snapshot.id());
        out.put("commit_time", snapshot.timeMillis());
        out.put("watermark", String.valueOf(snapshot.watermark()));
        return MAPPER.writeValueAsString(out);
    }

    private static String rollbackRow(long previous, long current) throws Exception {
        ArrayNode out = MAPPER.createArrayNode();
        out.add(previous);
        out.add(current);
        return MAPPER.writeValueAsString(out);
    }

    /**
     * One commit per entry of {@code batchesJson} ([{"rows": [...], "watermark": n | null}, ...],
     * rows canonical-encoded), each a ManifestCommittable with that watermark, as a Flink
     * sink commits. Returns the latest snapshot id.
     */
    public static long commitWithWatermarks(
            String warehouse, String db, String name, String batchesJson) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            RowType rowType = table.rowType();
            StreamWriteBuilder builder = table.newStreamWriteBuilder();
            JsonNode batches = MAPPER.readTree(batchesJson);
            try (StreamTableWrite write = builder.newWrite();
                    TableCommitImpl commit = (TableCommitImpl) builder.newCommit()) {
                for (int i = 0; i < batches.size(); i++) {
                    JsonNode batch = batches.get(i);
                    for (JsonNode row : batch.get("rows")) {
                        write.write(PaimonOracle.decode(row, rowType));
                    }
                    List<CommitMessage> messages = write.prepareCommit(false, i);
                    JsonNode mark = batch.get("watermark");
                    Long watermark = mark == null || mark.isNull() ? null : mark.asLong();
                    commit.commit(new ManifestCommittable(i, watermark, messages));
                }
            }
            return table.snapshotManager().latestSnapshotId();
        }
    }

    /**
     * SnapshotManager's four searches for each value of {@code valuesJson}: {"laterTime": [id
     * or null, ...], "earlierTime": [...], "laterWatermark": [...], "earlierWatermark": [...]};
     * a search that throws answers the exception's class name.
     */
    public static String searches(String warehouse, String db, String name, String valuesJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            SnapshotManager sm = PaimonOracle.table(catalog, db, name).snapshotManager();
            JsonNode values = MAPPER.readTree(valuesJson);
            ObjectNode out = MAPPER.createObjectNode();
            String[] kinds = {"laterTime", "earlierTime", "laterWatermark", "earlierWatermark"};
            for (String kind : kinds) {
                ArrayNode ids = out.putArray(kind);
                for (JsonNode v : values) {
                    long value = v.asLong();
                    try {
                        Snapshot s;
                        switch (kind) {
                            case "laterTime":
                                s = sm.laterOrEqualTimeMills(value);
                                break;
                            case "earlierTime":
                                s = sm.earlierOrEqualTimeMills(value);
                                break;
                            case "laterWatermark":
                                s = sm.laterOrEqualWatermark(value);
                                break;
                            default:
                                s = sm.earlierOrEqualWatermark(value);
                        }
                        if (s == null) {
                            ids.addNull();
                        } else {
                            ids.add(s.id());
                        }
                    } catch (RuntimeException e) {
                        ids.add(e.getClass().getSimpleName());
                    }
                }
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /** CreateTagFromTimestampProcedure's body; answers its row as JSON. */
    public static String createTagFromTimestamp(
            String warehouse, String db, String name, String tag, long timestamp, String retained)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            Snapshot snapshot = table.snapshotManager().laterOrEqualTimeMills(timestamp);
            Set<Snapshot> tagged = table.tagManager().tags().keySet();
            for (Snapshot t : tagged) {
                if (timestamp <= t.timeMillis()) {
                    if (snapshot == null || t.timeMillis() < snapshot.timeMillis()) {
                        snapshot = t;
                    }
                    break;
                }
            }
            if (snapshot == null) {
                throw new IllegalArgumentException("no snapshot later than " + timestamp);
            }
            table.createTag(tag, snapshot.id(), duration(retained));
            return tagRow(tag, snapshot);
        }
    }

    /** CreateTagFromWatermarkProcedure's body (Flink); answers its row as JSON. */
    public static String createTagFromWatermark(
            String warehouse, String db, String name, String tag, long watermark, String retained)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            Snapshot snapshot = table.snapshotManager().laterOrEqualWatermark(watermark);
            Set<Snapshot> tagged = table.tagManager().tags().keySet();
            for (Snapshot t : tagged) {
                if (t.watermark() != null && watermark <= t.watermark()) {
                    if (snapshot == null
                            || snapshot.watermark() == null
                            || t.watermark() < snapshot.watermark()) {
                        snapshot = t;
                    }
                    break;
                }
            }
            if (snapshot == null) {
                throw new IllegalArgumentException("no snapshot with watermark " + watermark);
            }
            table.createTag(tag, snapshot.id(), duration(retained));
            return tagRow(tag, snapshot);
        }
    }

    /** RollbackToTimestampProcedure's body (Spark); answers [previous, current]. */
    public static String rollbackToTimestamp(
            String warehouse, String db, String name, long timestamp) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            Snapshot latest = table.snapshotManager().latestSnapshot();
            Snapshot snapshot = table.snapshotManager().earlierOrEqualTimeMills(timestamp);
            table.rollbackTo(snapshot.id());
            return rollbackRow(latest.id(), snapshot.id());
        }
    }

    /** RollbackToWatermarkProcedure's body (Spark); answers [previous, current]. */
    public static String rollbackToWatermark(
            String warehouse, String db, String name, long watermark) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            Snapshot latest = table.snapshotManager().latestSnapshot();
            Snapshot snapshot = table.snapshotManager().earlierOrEqualWatermark(watermark);
            table.rollbackTo(snapshot.id());
            return rollbackRow(latest.id(), snapshot.id());
        }
    }

    /** ReplaceTagProcedure's body: {@code replaceTag(tag, snapshotId, timeRetained)}. */
    public static void replaceTag(
            String warehouse, String db, String name, String tag, long snapshotId, String retained)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            PaimonOracle.table(catalog, db, name).replaceTag(tag, snapshotId, duration(retained));
        }
    }

    /** RenameTagProcedure's body: {@code renameTag(tag, target)}. */
    public static void renameTag(
            String warehouse, String db, String name, String tag, String target) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            PaimonOracle.table(catalog, db, name).renameTag(tag, target);
        }
    }

    /** Every tag's name, snapshot id, and the tag file's tagTimeRetained ("PT12H" or null). */
    public static String tags(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            ObjectNode out = MAPPER.createObjectNode();
            for (String tag : table.tagManager().allTagNames()) {
                org.apache.paimon.tag.Tag t = table.tagManager().getOrThrow(tag);
                ObjectNode node = out.putObject(tag);
                node.put("snapshot", t.id());
                Duration retained = t.getTagTimeRetained();
                node.put("retained", retained == null ? null : retained.toString());
            }
            return MAPPER.writeValueAsString(out);
        }
    }
}
