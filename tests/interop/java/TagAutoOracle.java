/*
 * Java Paimon 1.4.2's automatic tags and tag expiry (TagAutoManager, TagBatchCreation,
 * TagTimeExpire), for tests/interop/test_tag_auto_java.py through
 * tests/interop/tag_auto_oracle.py. The procedures' bodies are the core calls Spark's and
 * Flink's ExpireTagsProcedure and TriggerTagAutomaticCreationProcedure make, and Spark's
 * WriteHelper.batchCreateTag after a batch write.
 */

package paimonoracle;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.manifest.ManifestCommittable;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.sink.StreamTableWrite;
import org.apache.paimon.table.sink.StreamWriteBuilder;
import org.apache.paimon.table.sink.TableCommitImpl;
import org.apache.paimon.tag.Tag;
import org.apache.paimon.tag.TagBatchCreation;
import org.apache.paimon.tag.TagTimeExpire;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.DateTimeUtils;
import org.apache.paimon.utils.Pair;

import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TimeZone;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class TagAutoOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private TagAutoOracle() {}

    private static FileStoreTable table(Catalog catalog, String db, String name, String optionsJson)
            throws Exception {
        FileStoreTable table = PaimonOracle.table(catalog, db, name);
        Map<String, String> options = new HashMap<>();
        if (optionsJson != null) {
            JsonNode node = MAPPER.readTree(optionsJson);
            Iterator<Map.Entry<String, JsonNode>> it = node.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                options.put(e.getKey(), e.getValue().asText());
            }
        }
        return options.isEmpty() ? table : table.copy(options);
    }

    /**
     * Every tag: {name: {"snapshot": id, "createTime": LocalDateTime text or null,
     * "timeRetainedMillis": n or null}}.
     */
    public static String tags(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return tagsJson(table(catalog, db, name, null));
        }
    }

    private static String tagsJson(FileStoreTable table) throws Exception {
        ObjectNode out = MAPPER.createObjectNode();
        for (Pair<Tag, String> pair : table.tagManager().tagObjects()) {
            Tag tag = pair.getLeft();
            ObjectNode t = out.putObject(pair.getRight());
            t.put("snapshot", tag.id());
            if (tag.getTagCreateTime() == null) {
                t.putNull("createTime");
            } else {
                t.put("createTime", tag.getTagCreateTime().toString());
            }
            Duration retained = tag.getTagTimeRetained();
            if (retained == null) {
                t.putNull("timeRetainedMillis");
            } else {
                t.put("timeRetainedMillis", retained.toMillis());
            }
        }
        return MAPPER.writeValueAsString(out);
    }

    /** TriggerTagAutomaticCreationProcedure's body on the table with {@code optionsJson}. */
    public static String triggerAutoCreation(
            String warehouse, String db, String name, String optionsJson) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name, optionsJson);
            table.newTagAutoManager().run();
            return tagsJson(table);
        }
    }

    /** Spark's batchCreateTag after a batch write, on the table with {@code optionsJson}. */
    public static String batchCreateTag(
            String warehouse, String db, String name, String optionsJson) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name, optionsJson);
            new TagBatchCreation(table).createTag();
            return tagsJson(table);
        }
    }

    /** ExpireTagsProcedure's body; answers the expired tags' names (a JSON array). */
    public static String expireTags(String warehouse, String db, String name, String olderThan)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table =
                    table(catalog, db, name, null)
                            .copy(
                                    Collections.singletonMap(
                                            CoreOptions.TAG_TIME_EXPIRE_ENABLED.key(), "true"));
            TagTimeExpire expire = table.store().newTagAutoManager(table).getTagTimeExpire();
            if (olderThan != null) {
                Timestamp ts =
                        DateTimeUtils.parseTimestampData(olderThan, 3, TimeZone.getDefault());
                expire.withOlderThanTime(ts.toLocalDateTime());
            }
            List<String> expired = expire.expire();
            ArrayNode out = MAPPER.createArrayNode();
            expired.forEach(out::add);
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * One streaming commit per entry of {@code batchesJson} ([{"rows": [...], "watermark": n},
     * ...]), each a ManifestCommittable carrying that watermark, as a Flink sink commits, with
     * the table's maintenance under {@code optionsJson}. Returns the latest snapshot id.
     */
    public static long commitWithWatermarks(
            String warehouse, String db, String name, String batchesJson, String optionsJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name, optionsJson);
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
                    commit.commit(
                            new ManifestCommittable(
                                    i,
                                    batch.get("watermark").asLong(),
                                    write.prepareCommit(false, i)));
                }
            }
            return table.snapshotManager().latestSnapshotId();
        }
    }
}
