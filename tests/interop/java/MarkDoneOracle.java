/*
 * Java Paimon's partition mark-done actions (PartitionMarkDoneAction, SuccessFile), as
 * CALL sys.mark_partition_done runs them, for tests/interop/test_mark_done_java.py through
 * tests/interop/mark_done_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.fs.Path;
import org.apache.paimon.options.Options;
import org.apache.paimon.partition.actions.PartitionMarkDoneAction;
import org.apache.paimon.partition.file.SuccessFile;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.utils.ParameterUtils;
import org.apache.paimon.utils.PartitionPathUtils;

import java.util.List;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class MarkDoneOracle {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private MarkDoneOracle() {}

    private static Catalog catalog(String warehouse) {
        Options options = new Options();
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    /**
     * What MarkPartitionDoneProcedure does with ('db.name', partitions): the table's actions,
     * each partition spec of "k=v,k=v;k=v" as a path, every action on every path. Answers
     * {"paths": [...]} or {"error": "<exception class>: <message>"}.
     */
    public static String markDone(String warehouse, String db, String name, String partitions)
            throws Exception {
        ObjectNode out = MAPPER.createObjectNode();
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.create(db, name));
            List<String> paths =
                    PartitionPathUtils.generatePartitionPaths(
                            ParameterUtils.getPartitions(partitions.split(";")),
                            table.store().partitionType());
            List<PartitionMarkDoneAction> actions;
            try {
                actions =
                        PartitionMarkDoneAction.createActions(
                                MarkDoneOracle.class.getClassLoader(),
                                table,
                                table.coreOptions());
            } catch (RuntimeException e) {
                out.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
                return MAPPER.writeValueAsString(out);
            }
            for (String path : paths) {
                for (PartitionMarkDoneAction action : actions) {
                    action.markDone(path);
                }
            }
            for (PartitionMarkDoneAction action : actions) {
                action.close();
            }
            out.set("paths", MAPPER.valueToTree(paths));
            return MAPPER.writeValueAsString(out);
        }
    }

    /** The success file of a partition directory as Java reads it, or null. */
    public static String readSuccessFile(
            String warehouse, String db, String name, String partitionPath) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = (FileStoreTable) catalog.getTable(Identifier.create(db, name));
            Path path = new Path(new Path(table.location(), partitionPath), "_SUCCESS");
            SuccessFile file = SuccessFile.safelyFromPath(table.fileIO(), path);
            if (file == null) {
                return "null";
            }
            ObjectNode out = MAPPER.createObjectNode();
            out.put("creationTime", file.creationTime());
            out.put("modificationTime", file.modificationTime());
            return MAPPER.writeValueAsString(out);
        }
    }
}
