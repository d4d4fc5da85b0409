/*
 * Java Paimon's HiveCatalog (metastore = hive, Hive 2.3.10's metastore client from pyspark's
 * jars) for tests/interop/test_hive_catalog_java.py: the metastore record Java reads of a table,
 * and which catalog class opened. Listing, create, write, read and drop go through
 * PaimonOracle's and JdbcCatalogOracle's methods, which open the same catalog once
 * PaimonOracle.setCatalogOptions has given the warehouse its hive options.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.DelegateCatalog;
import org.apache.paimon.hive.HiveCatalog;

import org.apache.hadoop.hive.metastore.api.FieldSchema;
import org.apache.hadoop.hive.metastore.api.Table;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Static entry points taking strings and answering JSON strings, as PaimonOracle's. */
public final class HiveCatalogOracle {

    private HiveCatalogOracle() {}

    /** The catalog's class name, so a test knows Java opened a HiveCatalog. */
    public static String catalogClass(String warehouse) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return unwrap(catalog).getClass().getName();
        }
    }

    /**
     * The metastore's record of db.name as Java's client reads it: tableType, owner, parameters
     * (sorted), location, input/output format, serde, columns [name, type, comment], partition
     * keys.
     */
    public static String hmsRecord(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            HiveCatalog hive = (HiveCatalog) unwrap(catalog);
            Table t = hive.getHmsClient().getTable(db, name);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("tableType", t.getTableType());
            out.put("owner", t.getOwner());
            out.put("retention", t.getRetention());
            out.put("parameters", new TreeMap<>(t.getParameters()));
            out.put("location", t.getSd().getLocation());
            out.put("inputFormat", t.getSd().getInputFormat());
            out.put("outputFormat", t.getSd().getOutputFormat());
            out.put("serde", t.getSd().getSerdeInfo().getSerializationLib());
            out.put("serdeParameters", t.getSd().getSerdeInfo().getParameters());
            out.put("cols", columns(t.getSd().getCols()));
            out.put("partitionKeys", columns(t.getPartitionKeys()));
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
    }

    private static List<List<String>> columns(List<FieldSchema> fields) {
        List<List<String>> out = new ArrayList<>();
        if (fields != null) {
            for (FieldSchema f : fields) {
                List<String> col = new ArrayList<>();
                col.add(f.getName());
                col.add(f.getType());
                col.add(f.getComment());
                out.add(col);
            }
        }
        return out;
    }

    private static Catalog unwrap(Catalog catalog) {
        Catalog c = catalog;
        while (c instanceof DelegateCatalog) {
            c = ((DelegateCatalog) c).wrapped();
        }
        return c;
    }
}
