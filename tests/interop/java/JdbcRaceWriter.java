/*
 * One Java process of the JDBC commit race (tests/interop/test_jdbc_catalog_java.py):
 *   java -cp ... paimonoracle.JdbcRaceWriter <catalog options JSON> <db> <table> <writer> <commits>
 *       <barrier dir>
 * opens Java's catalog from the options (metastore = jdbc, uri, warehouse, lock.enabled, ...),
 * warms up on a table of its own, creates <barrier dir>/ready-java-<writer>, waits for <barrier dir>/go (tests/interop/jdbc_race.py
 * says why), and makes <commits> batch commits of two rows each, (writer, seq) and
 * (writer, -seq - 1), the rows our writers make, so the final table holds every pair once. Its
 * snapshots' commit users start with java-<writer> (commit.user-prefix).
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.options.Options;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;

import java.io.File;
import java.util.Collections;

/** The race's Java writer: exits 0 after its last commit, non-zero on any failure. */
public final class JdbcRaceWriter {

    private JdbcRaceWriter() {}

    public static void main(String[] args) {
        try {
            race(args);
        } catch (Throwable error) {
            // exit here: a pool thread Paimon left running must not keep a failed JVM alive
            error.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    /**
     * Three commits into a table of its own (the test made it: Java's JdbcCatalog fails creating
     * tables from two processes at once on SQLite) before the race: a JVM's first commits load
     * classes and wait for the JIT, seconds where ours take tens of milliseconds.
     */
    private static void warmUp(Catalog catalog, Identifier name) throws Exception {
        Table table = catalog.getTable(name);
        for (int seq = 0; seq < 3; seq++) {
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.write(GenericRow.of(seq, seq, BinaryString.fromString("warm-up")));
                commit.commit(write.prepareCommit());
            }
        }
    }

    private static void race(String[] args) throws Exception {
        Options options = new Options();
        PaimonOracle.MAPPER
                .readTree(args[0])
                .fields()
                .forEachRemaining(e -> options.set(e.getKey(), e.getValue().asText()));
        int writer = Integer.parseInt(args[3]);
        int commits = Integer.parseInt(args[4]);
        try (Catalog catalog = CatalogFactory.createCatalog(CatalogContext.create(options))) {
            Table table =
                    catalog.getTable(Identifier.create(args[1], args[2]))
                            .copy(Collections.singletonMap(
                                    "commit.user-prefix", "java-" + writer));
            warmUp(catalog, Identifier.create(args[1], args[2] + "_warmup_java_" + writer));
            File barrier = new File(args[5]);
            new File(barrier, "ready-java-" + writer).createNewFile();
            long deadline = System.currentTimeMillis() + 120_000L;
            while (!new File(barrier, "go").exists()) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("no start signal in " + barrier);
                }
                Thread.sleep(5);
            }
            BinaryString payload = BinaryString.fromString("java");
            for (int seq = 0; seq < commits; seq++) {
                BatchWriteBuilder builder = table.newBatchWriteBuilder();
                try (BatchTableWrite write = builder.newWrite();
                        BatchTableCommit commit = builder.newCommit()) {
                    write.write(GenericRow.of(writer, seq, payload));
                    write.write(GenericRow.of(writer, -seq - 1, payload));
                    commit.commit(write.prepareCommit());
                }
                if (seq == 0) {
                    // our writers wait for this before their second commit, so a JVM's slow
                    // first commit cannot leave the race to them alone
                    new File(barrier, "first-java-" + writer).createNewFile();
                }
            }
        }
    }
}
