/*
 * Java Paimon's CoreOptions keys and what a "no effect" option does to Java's own output, for
 * tests/interop/test_options_ledger_java.py through tests/interop/options_ledger_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.Snapshot;
import org.apache.paimon.annotation.Documentation;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.options.ConfigOption;
import org.apache.paimon.options.FallbackKey;
import org.apache.paimon.options.MemorySize;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.DataTypes;
import org.apache.paimon.types.RowType;
import org.apache.paimon.utils.TimeUtils;

import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class OptionsLedgerOracle {

    private OptionsLedgerOracle() {}

    /**
     * Every public static ConfigOption field of CoreOptions, read by reflection: [{"key",
     * "field", "type" (the option's class: Boolean, Integer, Long, Double, String, Duration,
     * MemorySize, or an enum's simple name), "enumValues" (an enum's constants as Java prints
     * them, else []), "default" (as Java would parse it back: a duration with its highest
     * unit, a size as MemorySize prints it; null when none), "fallbackKeys", "immutable",
     * "excluded" (kept out of Java's docs)}], in declaration order.
     */
    public static String keys() throws Exception {
        ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
        Method clazzOf = ConfigOption.class.getDeclaredMethod("getClazz");
        clazzOf.setAccessible(true);
        for (Field field : CoreOptions.class.getFields()) {
            if (!Modifier.isStatic(field.getModifiers())
                    || !ConfigOption.class.isAssignableFrom(field.getType())) {
                continue;
            }
            ConfigOption<?> option = (ConfigOption<?>) field.get(null);
            Class<?> clazz = (Class<?>) clazzOf.invoke(option);
            ObjectNode node = out.addObject();
            node.put("key", option.key());
            node.put("field", field.getName());
            node.put("type", clazz.getSimpleName());
            ArrayNode values = node.putArray("enumValues");
            if (clazz.isEnum()) {
                for (Object constant : clazz.getEnumConstants()) {
                    values.add(constant.toString());
                }
            }
            Object value = option.hasDefaultValue() ? option.defaultValue() : null;
            if (value == null) {
                node.putNull("default");
            } else if (value instanceof Duration) {
                node.put("default", TimeUtils.formatWithHighestUnit((Duration) value));
            } else if (value instanceof MemorySize) {
                node.put("default", value.toString());
            } else {
                node.put("default", value.toString());
            }
            ArrayNode fallback = node.putArray("fallbackKeys");
            for (FallbackKey key : option.fallbackKeys()) {
                fallback.add(key.getKey());
            }
            node.put("immutable", field.isAnnotationPresent(Documentation.Immutable.class));
            node.put(
                    "excluded",
                    field.isAnnotationPresent(Documentation.ExcludeFromDocumentation.class));
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    /**
     * For each case {"name", "options": {...}}: a table db.name of the given shape ("pk": a
     * primary-key table (id INT, v STRING) with 2 buckets; "append": the same columns, no
     * key, bucket -1), with the case's options, takes the same three batch writes (inserts,
     * then updates and new keys, then more); Java's output is printed: {"name": {"rows": the
     * rows Java reads, sorted, "files": [[level, prefix, extension, rowCount]...] of the
     * latest snapshot's data files, sorted, "snapshots": [[commitKind, totalRecordCount,
     * deltaRecordCount, changelogRecordCount, hasIndexManifest, hasChangelogManifest]...],
     * "error": null}}; a case Java refuses has its root cause's message in "error".
     */
    public static String fingerprints(String warehouse, String db, String shape, String casesJson)
            throws Exception {
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        for (JsonNode c : PaimonOracle.MAPPER.readTree(casesJson)) {
            String name = c.get("name").asText();
            ObjectNode result = out.putObject(name);
            try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
                catalog.createDatabase(db, true);
                Schema.Builder builder =
                        Schema.newBuilder()
                                .column("id", DataTypes.INT().notNull())
                                .column("v", DataTypes.STRING());
                if ("pk".equals(shape)) {
                    builder.primaryKey("id").option("bucket", "2");
                }
                c.get("options")
                        .fields()
                        .forEachRemaining(e -> builder.option(e.getKey(), e.getValue().asText()));
                catalog.createTable(Identifier.create(db, name), builder.build(), false);
                String[] batches = {
                    "[[1,\"a\"],[2,\"b\"],[3,\"c\"],[4,null]]",
                    "[[2,\"B\"],[5,\"e\"],[6,\"f\"]]",
                    "[[1,\"A\"],[7,\"g\"],[3,null]]"
                };
                for (String rows : batches) {
                    PaimonOracle.writeBatch(PaimonOracle.table(catalog, db, name), rows, null);
                }
                FileStoreTable table = PaimonOracle.table(catalog, db, name);
                result.set("rows", rows(table));
                result.set("files", files(table));
                result.set("snapshots", snapshots(table));
                result.putNull("error");
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null) {
                    root = root.getCause();
                }
                result.put("error", root.getClass().getSimpleName() + ": " + root.getMessage());
            }
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    private static ArrayNode rows(FileStoreTable table) throws Exception {
        ReadBuilder rb = table.newReadBuilder();
        RowType rowType = table.rowType();
        List<String> printed = new ArrayList<>();
        try (RecordReader<InternalRow> reader =
                rb.newRead().createReader(rb.newScan().plan().splits())) {
            reader.forEachRemaining(
                    row ->
                            printed.add(
                                    row.getRowKind().shortString()
                                            + PaimonOracle.encodeRow(row, rowType)));
        }
        printed.sort(null);
        ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
        printed.forEach(out::add);
        return out;
    }

    private static ArrayNode files(FileStoreTable table) {
        List<String> printed = new ArrayList<>();
        for (Split split : table.newReadBuilder().newScan().plan().splits()) {
            for (DataFileMeta f : ((DataSplit) split).dataFiles()) {
                String fileName = f.fileName();
                int dash = fileName.indexOf('-');
                int dot = fileName.lastIndexOf('.');
                printed.add(
                        "["
                                + f.level()
                                + ","
                                + fileName.substring(0, dash + 1)
                                + ","
                                + fileName.substring(dot)
                                + ","
                                + f.rowCount()
                                + ","
                                + f.extraFiles().size()
                                + "]");
            }
        }
        printed.sort(null);
        ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
        printed.forEach(out::add);
        return out;
    }

    private static ArrayNode snapshots(FileStoreTable table) throws Exception {
        ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
        Iterator<Snapshot> it = table.snapshotManager().snapshots();
        List<Snapshot> all = new ArrayList<>();
        it.forEachRemaining(all::add);
        all.sort((a, b) -> Long.compare(a.id(), b.id()));
        for (Snapshot s : all) {
            ArrayNode node = out.addArray();
            node.add(s.commitKind().toString());
            node.add(s.totalRecordCount());
            node.add(s.deltaRecordCount());
            node.add(s.changelogRecordCount());
            node.add(s.indexManifest() != null);
            node.add(s.changelogManifestList() != null);
        }
        return out;
    }
}
