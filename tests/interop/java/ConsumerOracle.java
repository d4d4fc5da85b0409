/*
 * Java Paimon's stream scan with a consumer id ("consumer-id"), for
 * tests/interop/test_consumers_java.py through tests/interop/consumer_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.options.Options;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.source.DataSplit;
import org.apache.paimon.table.source.Split;
import org.apache.paimon.table.source.StreamTableScan;
import org.apache.paimon.table.source.TableScan;

import java.util.Collections;
import java.util.List;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class ConsumerOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private ConsumerOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    /**
     * A stream scan of db.name with "consumer-id" = consumerId: maxPlans plans (the empty ones
     * skipped), then notifyCheckpointComplete(checkpoint()), as a Flink source does
     * when a checkpoint completes. Answers {"snapshots": [the snapshot id of each non-empty
     * plan's splits, ...], "checkpoint": next snapshot id}.
     */
    public static String consume(
            String warehouse, String db, String name, String consumerId, int maxPlans)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table =
                    catalog.getTable(Identifier.create(db, name))
                            .copy(Collections.singletonMap("consumer-id", consumerId));
            StreamTableScan scan = table.newReadBuilder().newStreamScan();
            ArrayNode snapshots = MAPPER.createArrayNode();
            for (int i = 0; i < maxPlans; i++) {
                TableScan.Plan plan = scan.plan();
                List<Split> splits = plan.splits();
                if (splits.isEmpty()) {
                    continue; // a start positioned only, or nothing new yet
                }
                snapshots.add(((DataSplit) splits.get(0)).snapshotId());
            }
            Long next = scan.checkpoint();
            scan.notifyCheckpointComplete(next);
            ObjectNode out = MAPPER.createObjectNode();
            out.set("snapshots", snapshots);
            if (next == null) {
                out.putNull("checkpoint");
            } else {
                out.put("checkpoint", next);
            }
            return MAPPER.writeValueAsString(out);
        }
    }
}
