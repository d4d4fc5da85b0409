/*
 * Java Paimon's partition expiry as its expire_partitions procedure runs it, for
 * tests/interop/test_partition_expire_java.py through tests/interop/partition_expire_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.FileStore;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.operation.PartitionExpire;
import org.apache.paimon.options.Options;
import org.apache.paimon.partition.PartitionTimeExtractor;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.utils.ProcedureUtils;

import java.time.format.DateTimeParseException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class PartitionExpireOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private PartitionExpireOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    private static String orNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /**
     * What Spark's and Flink's ExpirePartitionsProcedure do: the arguments as dynamic options
     * (ProcedureUtils.fillInPartitionOptions), newPartitionExpire("", table), expire(Long.MAX_VALUE).
     * Empty strings and maxExpires < 0 are "not given". Answers the procedure's result rows.
     */
    public static String expirePartitions(
            String warehouse,
            String db,
            String name,
            String expirationTime,
            String timestampFormatter,
            String timestampPattern,
            String expireStrategy,
            int maxExpires,
            String options)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Map<String, String> dynamic =
                    ProcedureUtils.fillInPartitionOptions(
                            orNull(expireStrategy),
                            orNull(timestampFormatter),
                            orNull(timestampPattern),
                            orNull(expirationTime),
                            maxExpires < 0 ? null : maxExpires,
                            orNull(options));
            FileStoreTable table =
                    (FileStoreTable) catalog.getTable(Identifier.create(db, name)).copy(dynamic);
            FileStore<?> store = table.store();
            PartitionExpire expire = store.newPartitionExpire("", table);
            List<Map<String, String>> expired = expire.expire(Long.MAX_VALUE);
            ArrayNode out = MAPPER.createArrayNode();
            if (expired == null || expired.isEmpty()) {
                out.add("No expired partitions.");
            } else {
                for (Map<String, String> partition : expired) {
                    String text = partition.toString();
                    out.add(text.substring(1, text.length() - 1));
                }
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * PartitionTimeExtractor(pattern, formatter).extract(keys, values) for each case of
     * casesJson ([[pattern, formatter, [keys], [values]], ...], null for an unset pattern or
     * formatter): the LocalDateTime's toString, or "unparsed" where Java throws.
     */
    public static String extractTimes(String casesJson) throws Exception {
        Object[][] cases = MAPPER.readValue(casesJson, Object[][].class);
        ArrayNode out = MAPPER.createArrayNode();
        for (Object[] c : cases) {
            PartitionTimeExtractor extractor =
                    new PartitionTimeExtractor((String) c[0], (String) c[1]);
            List<?> keys = (List<?>) c[2];
            List<?> values = (List<?>) c[3];
            try {
                String[] k = keys.toArray(new String[0]);
                out.add(extractor.extract(Arrays.asList(k), values).toString());
            } catch (DateTimeParseException | IllegalArgumentException e) {
                out.add("unparsed");
            }
        }
        return MAPPER.writeValueAsString(out);
    }
}
