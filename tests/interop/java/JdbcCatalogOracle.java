/*
 * Java Paimon's JdbcCatalog (metastore = jdbc, SQLite or PostgreSQL through their JDBC drivers)
 * for tests/interop/test_jdbc_catalog_java.py: its database and table listing, create, rename and
 * drop.
 * Writes, reads and snapshots go through PaimonOracle's methods, which open the same catalog once
 * PaimonOracle.setCatalogOptions has given the warehouse its jdbc options. JdbcRaceWriter (below)
 * is one process of the commit race.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.Identifier;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** Static entry points taking strings and answering JSON strings, as PaimonOracle's. */
public final class JdbcCatalogOracle {

    private JdbcCatalogOracle() {}

    /** The catalog's class name, so a test knows Java opened a JdbcCatalog and not another. */
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

    public static void createDatabase(String warehouse, String db) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.createDatabase(db, false);
        }
    }

    /** Catalog.dropDatabase(db, ignoreIfNotExists = false, cascade). */
    public static void dropDatabase(String warehouse, String db, boolean cascade)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.dropDatabase(db, false, cascade);
        }
    }

    public static void dropTable(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.dropTable(Identifier.create(db, name), false);
        }
    }

    public static void renameTable(String warehouse, String db, String from, String to)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            catalog.renameTable(Identifier.create(db, from), Identifier.create(db, to), false);
        }
    }

    /** The database's options as Java's getDatabase returns them (location among them). */
    public static String databaseOptions(String warehouse, String db) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            return PaimonOracle.MAPPER.writeValueAsString(catalog.getDatabase(db).options());
        }
    }

    private static String sorted(List<String> names) throws Exception {
        List<String> out = new ArrayList<>(names);
        Collections.sort(out);
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }
}
