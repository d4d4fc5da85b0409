package paimonoracle;

import org.apache.paimon.schema.SchemaMergingUtils;
import org.apache.paimon.schema.TableSchema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowType;

/**
 * Java Paimon's SchemaMergingUtils.mergeSchemas (what write.merge-schema commits) for the
 * schema-merge interop tests. Input: a JSON array of cases {"schema": schema-file JSON, "data":
 * row type JSON, "explicit": bool}; output: a JSON array of {"schema": merged schema-file JSON}
 * or {"error": "ExceptionClass: message"}, one per case, in order.
 */
public final class SchemaMergeOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SchemaMergeOracle() {}

    public static String mergeAll(String casesJson) throws Exception {
        ArrayNode out = MAPPER.createArrayNode();
        for (JsonNode c : MAPPER.readTree(casesJson)) {
            ObjectNode result = MAPPER.createObjectNode();
            try {
                TableSchema current = TableSchema.fromJson(c.get("schema").asText());
                RowType data = (RowType) DataTypeJsonParser.parseDataType(c.get("data"));
                boolean explicit = c.get("explicit").asBoolean();
                TableSchema merged = SchemaMergingUtils.mergeSchemas(current, data, explicit);
                result.put("schema", merged.toString());
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null) {
                    root = root.getCause();
                }
                result.put("error", root.getClass().getSimpleName() + ": " + root.getMessage());
            }
            out.add(result);
        }
        return MAPPER.writeValueAsString(out);
    }
}
