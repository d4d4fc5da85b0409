/*
 * Java Paimon's RESTCatalog (metastore = rest, bearer token) against our REST server, for
 * tests/interop/test_rest_catalog_interop.py. Writes, reads and snapshots go through
 * PaimonOracle's methods, which open the same catalog once PaimonOracle.setCatalogOptions has
 * given the warehouse its rest options; this class adds what only a catalog service shows: the
 * catalog's class, listings (tables, partitions), the table's uuid and path as the server named
 * them, drops, and the exception a wrong token raises.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.options.Options;
import org.apache.paimon.partition.Partition;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Static entry points taking strings and answering JSON strings, as PaimonOracle's. */
public final class RestCatalogOracle {

    private RestCatalogOracle() {}

    /** The catalog's class name, so a test knows Java opened a RESTCatalog and not another. */
    public static String catalogClass(String warehouse) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return catalog.getClass().getName();
        }
    }

    /** Database names, sorted, as JSON. */
    public static String listDatabases(String warehouse) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return sorted(catalog.listDatabases());
        }
    }

    /** Table names of db, sorted, as JSON. */
    public static String listTables(String warehouse, String db) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return sorted(catalog.listTables(db));
        }
    }

    /** {"uuid", "location", "latestSnapshotId"} of the table as Java's RESTCatalog loads it. */
    public static String tableInfo(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
            out.put("uuid", table.catalogEnvironment().uuid());
            out.put("location", table.location().toString());
            Long latest =
                    catalog.loadSnapshot(Identifier.create(db, name))
                            .map(s -> s.snapshot().id())
                            .orElse(null);
            if (latest == null) {
                out.putNull("latestSnapshotId");
            } else {
                out.put("latestSnapshotId", latest);
            }
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
    }

    /** [{"spec", "recordCount", "fileCount"}] sorted by spec, from Catalog.listPartitions. */
    public static String partitions(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            List<Partition> partitions =
                    new ArrayList<>(catalog.listPartitions(Identifier.create(db, name)));
            partitions.sort((a, b) -> a.spec().toString().compareTo(b.spec().toString()));
            ArrayNode out = PaimonOracle.MAPPER.createArrayNode();
            for (Partition partition : partitions) {
                ObjectNode node = out.addObject();
                node.set("spec", PaimonOracle.MAPPER.valueToTree(partition.spec()));
                node.put("recordCount", partition.recordCount());
                node.put("fileCount", partition.fileCount());
            }
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
    }

    public static void dropTable(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.dropTable(Identifier.create(db, name), false);
        }
    }

    /** Catalog.dropDatabase(db, ignoreIfNotExists = false, cascade). */
    public static void dropDatabase(String warehouse, String db, boolean cascade)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.dropDatabase(db, false, cascade);
        }
    }

    /**
     * Opens a RESTCatalog with the given bearer token and lists databases; answers
     * {"error": class name or null, "message"} so a test can assert what Java raised.
     */
    public static String openWithToken(String uri, String warehouse, String token)
            throws Exception {
        Options options = new Options();
        options.set("metastore", "rest");
        options.set("uri", uri);
        options.set("warehouse", warehouse);
        options.set("token.provider", "bear");
        options.set("token", token);
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
            catalog.listDatabases();
            out.putNull("error");
            out.putNull("message");
        } catch (RuntimeException e) {
            out.put("error", e.getClass().getName());
            out.put("message", e.getMessage());
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    private static String sorted(List<String> names) throws Exception {
        List<String> out = new ArrayList<>(names);
        Collections.sort(out);
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }
}
