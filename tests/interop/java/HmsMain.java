/*
 * A Hive Metastore 2.3 server (pyspark's own hive-metastore jars, embedded Derby) for the Hive
 * catalog's tests (tests/catalogs/hive_metastore.py starts it on a free port).
 * TxnDbUtil.prepDb creates the transaction and lock tables (TXNS, HIVE_LOCKS, ...) that
 * datanucleus.schema.autoCreateAll does not: the table lock of Paimon's lock.enabled needs them.
 */

package paimonoracle;

import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.txn.TxnDbUtil;

/** {@code HmsMain -p PORT}, with hive-site.xml first on the classpath. */
public final class HmsMain {

    private HmsMain() {}

    public static void main(String[] args) throws Throwable {
        TxnDbUtil.prepDb(new HiveConf());
        HiveMetaStore.main(args);
    }
}
