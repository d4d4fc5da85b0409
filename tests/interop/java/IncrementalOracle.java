/*
 * Java Paimon's incremental reads ("incremental-between", "incremental-between-timestamp"), for
 * tests/interop/test_incremental_java.py through tests/interop/incremental_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.RowType;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class IncrementalOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private IncrementalOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    /**
     * The rows of Java's batch read of db.name with these dynamic options ({"k": "v"}), each
     * with its row kind: {"rows": [["+I", v1, v2, ...], ...], "error": null}; or, when Java
     * refuses the options or the read, {"rows": null, "error": "<the root cause's message>"}.
     * Values: integers as numbers, strings as text, null as null (the tests' column types).
     */
    public static String read(String warehouse, String db, String name, String optionsJson)
            throws Exception {
        Map<String, String> dynamic = new LinkedHashMap<>();
        JsonNode given = MAPPER.readTree(optionsJson);
        given.fields().forEachRemaining(e -> dynamic.put(e.getKey(), e.getValue().asText()));
        ObjectNode out = MAPPER.createObjectNode();
        try (Catalog catalog = catalog(warehouse)) {
            Table table = catalog.getTable(Identifier.create(db, name));
            ArrayNode rows = MAPPER.createArrayNode();
            try {
                Table copied = table.copy(dynamic);
                RowType rowType = copied.rowType();
                List<DataField> fields = rowType.getFields();
                InternalRow.FieldGetter[] getters = new InternalRow.FieldGetter[fields.size()];
                for (int i = 0; i < getters.length; i++) {
                    getters[i] = InternalRow.createFieldGetter(fields.get(i).type(), i);
                }
                ReadBuilder builder = copied.newReadBuilder();
                try (RecordReader<InternalRow> reader =
                        builder.newRead().createReader(builder.newScan().plan())) {
                    reader.forEachRemaining(
                            row -> {
                                ArrayNode node = rows.addArray();
                                node.add(row.getRowKind().shortString());
                                for (InternalRow.FieldGetter getter : getters) {
                                    Object v = getter.getFieldOrNull(row);
                                    if (v == null) {
                                        node.addNull();
                                    } else if (v instanceof BinaryString) {
                                        node.add(v.toString());
                                    } else if (v instanceof Number) {
                                        node.add(((Number) v).longValue());
                                    } else {
                                        node.add(v.toString());
                                    }
                                }
                            });
                }
            } catch (Exception e) {
                Throwable root = e;
                while (root.getCause() != null && root.getCause() != root) {
                    root = root.getCause();
                }
                out.putNull("rows");
                out.put("error", root.getClass().getSimpleName() + ": " + root.getMessage());
                return MAPPER.writeValueAsString(out);
            }
            out.set("rows", rows);
            out.putNull("error");
            return MAPPER.writeValueAsString(out);
        }
    }
}
