/*
 * Java Paimon's reads of branches and of tables that read two branches
 * (scan.fallback-branch, scan.primary-branch: FallbackReadFileStoreTable), for
 * tests/interop/test_fallback_branch_java.py and tests/spark/test_branch_wap.py through
 * tests/interop/branch_read_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.table.FallbackReadFileStoreTable;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.types.RowType;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class BranchReadOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private BranchReadOracle() {}

    private static Table table(Catalog catalog, String db, String name, String optionsJson)
            throws Exception {
        Table table = catalog.getTable(Identifier.create(db, name));
        Map<String, String> options = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> it = MAPPER.readTree(optionsJson).fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            options.put(e.getKey(), e.getValue().asText());
        }
        return options.isEmpty() ? table : table.copy(options);
    }

    private static ReadBuilder builder(Table table, String field, String literalJson)
            throws Exception {
        ReadBuilder builder = table.newReadBuilder();
        if (!field.isEmpty()) {
            PredicateBuilder pb = new PredicateBuilder(table.rowType());
            JsonNode literal = MAPPER.readTree(literalJson);
            Object value =
                    literal.isNumber()
                            ? (Object) literal.asLong()
                            : BinaryString.fromString(literal.asText());
            builder.withFilter(pb.equal(pb.indexOf(field), value));
        }
        return builder;
    }

    /**
     * The rows of db.name (a table, or "t$branch_b") as Java's batch read gives them, with the
     * dynamic options of optionsJson (a JSON object) and, when field is not empty, the filter
     * field = literal (a JSON number for an integer column, else a string).
     */
    public static String read(
            String warehouse,
            String db,
            String name,
            String optionsJson,
            String field,
            String literalJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            Table table = table(catalog, db, name, optionsJson);
            RowType rowType = table.rowType();
            ReadBuilder builder = builder(table, field, literalJson);
            ArrayNode rows = MAPPER.createArrayNode();
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(PaimonOracle.encodeRow(row, rowType)));
            }
            return MAPPER.writeValueAsString(rows);
        }
    }

    /**
     * The splits of Java's batch plan of db.name: [[the partition's values..., whether the split
     * came from the other branch (FallbackSplit.isFallback)], ...].
     */
    public static String splits(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.create(db, name));
            RowType partitionType = table.schema().logicalPartitionType();
            ArrayNode out = MAPPER.createArrayNode();
            for (Split split : table.newReadBuilder().newScan().plan().splits()) {
                boolean fallback =
                        split instanceof FallbackReadFileStoreTable.FallbackSplit
                                && ((FallbackReadFileStoreTable.FallbackSplit) split).isFallback();
                DataSplit data =
                        (DataSplit)
                                (split instanceof FallbackReadFileStoreTable.FallbackSplit
                                        ? ((FallbackReadFileStoreTable.FallbackSplit) split)
                                                .wrapped()
                                        : split);
                ArrayNode entry = PaimonOracle.encodeRow(data.partition(), partitionType);
                entry.add(fallback);
                out.add(entry);
            }
            return MAPPER.writeValueAsString(out);
        }
    }
}
