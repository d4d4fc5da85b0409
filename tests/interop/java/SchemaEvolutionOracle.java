package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.options.Options;
import org.apache.paimon.schema.SchemaChange;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;

import java.util.ArrayList;
import java.util.List;

/**
 * Java Paimon's ALTER TABLE and RENAME TABLE for the schema-evolution interop tests, called
 * through the py4j gateway of PaimonOracle's JVM. Changes come as JSON in pypaimon's wire form
 * ({"action": "addColumn", "fieldNames": [...], "dataType": type JSON, "move": {...}}); results
 * go back as JSON: {"schemaId": n} or {"error": "ExceptionClass: message"} of the root cause.
 */
public final class SchemaEvolutionOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SchemaEvolutionOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    private static String[] names(JsonNode change) {
        JsonNode node = change.get("fieldNames");
        String[] out = new String[node.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = node.get(i).asText();
        }
        return out;
    }

    private static String text(JsonNode change, String key) {
        JsonNode node = change.get(key);
        return node == null || node.isNull() ? null : node.asText();
    }

    private static SchemaChange.Move move(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        String field = node.get("fieldName").asText();
        String ref = text(node, "referenceFieldName");
        switch (node.get("type").asText()) {
            case "FIRST":
                return SchemaChange.Move.first(field);
            case "AFTER":
                return SchemaChange.Move.after(field, ref);
            case "BEFORE":
                return SchemaChange.Move.before(field, ref);
            default:
                return SchemaChange.Move.last(field);
        }
    }

    private static SchemaChange change(JsonNode c) {
        String action = c.get("action").asText();
        switch (action) {
            case "setOption":
                return SchemaChange.setOption(c.get("key").asText(), c.get("value").asText());
            case "removeOption":
                return SchemaChange.removeOption(c.get("key").asText());
            case "updateComment":
                return SchemaChange.updateComment(text(c, "comment"));
            case "addColumn":
                DataType type = DataTypeJsonParser.parseDataType(c.get("dataType"));
                return SchemaChange.addColumn(
                        names(c), type, text(c, "comment"), move(c.get("move")));
            case "renameColumn":
                return SchemaChange.renameColumn(names(c), c.get("newName").asText());
            case "dropColumn":
                return SchemaChange.dropColumn(names(c));
            case "updateColumnType":
                return SchemaChange.updateColumnType(
                        names(c),
                        DataTypeJsonParser.parseDataType(c.get("newDataType")),
                        c.get("keepNullability").asBoolean());
            case "updateColumnNullability":
                return SchemaChange.updateColumnNullability(
                        names(c), c.get("newNullability").asBoolean());
            case "updateColumnComment":
                return SchemaChange.updateColumnComment(names(c), text(c, "newComment"));
            case "updateColumnPosition":
                return SchemaChange.updateColumnPosition(move(c.get("move")));
            default:
                throw new IllegalArgumentException("Unknown schema change action " + action);
        }
    }

    private static String error(Exception e) throws Exception {
        Throwable cause = e;
        while (cause.getCause() != null) {
            cause = cause.getCause();
        }
        ObjectNode out = MAPPER.createObjectNode();
        out.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
        return MAPPER.writeValueAsString(out);
    }

    /** One Catalog.alterTable of the JSON changes: {"schemaId": n} or {"error": "..."}. */
    public static String alterTable(String warehouse, String db, String name, String changesJson)
            throws Exception {
        List<SchemaChange> changes = new ArrayList<>();
        for (JsonNode c : MAPPER.readTree(changesJson)) {
            changes.add(change(c));
        }
        try (Catalog catalog = catalog(warehouse)) {
            try {
                catalog.alterTable(Identifier.create(db, name), changes, false);
            } catch (Exception e) {
                return error(e);
            }
            FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.create(db, name));
            ObjectNode out = MAPPER.createObjectNode();
            out.put("schemaId", table.schema().id());
            return MAPPER.writeValueAsString(out);
        }
    }

    /** Catalog.renameTable: {"renamed": true} or {"error": "..."}. */
    public static String renameTable(
            String warehouse, String fromDb, String fromName, String toDb, String toName)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            ObjectNode out = MAPPER.createObjectNode();
            try {
                catalog.renameTable(
                        Identifier.create(fromDb, fromName),
                        Identifier.create(toDb, toName),
                        false);
            } catch (Exception e) {
                return error(e);
            }
            out.put("renamed", true);
            return MAPPER.writeValueAsString(out);
        }
    }
}
