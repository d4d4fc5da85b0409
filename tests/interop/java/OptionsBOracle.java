/*
 * Java Paimon's bucket functions (bucket-function.type), external data paths and row tracking,
 * for tests/interop/test_options_b_java.py and tests/integration/test_bucket_functions.py through
 * tests/interop/options_b_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.CoreOptions;
import org.apache.paimon.bucket.BucketFunction;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowType;

import java.util.ArrayList;
import java.util.List;

/** Static entry points taking strings and answering JSON, as PaimonOracle's. */
public final class OptionsBOracle {

    private OptionsBOracle() {}

    /**
     * The bucket of each key row ({@code PaimonOracle.decode} encoding) under the bucket function
     * {@code functionType} (default, mod, hive) for each bucket count: {"buckets": {"n": [...]}},
     * or {"error": "<Java's message>"} when Java refuses the function or a value.
     */
    public static String buckets(
            String functionType, String keyTypesJson, String keyRowsJson, String numBucketsJson)
            throws Exception {
        List<DataType> keyTypes = new ArrayList<>();
        for (JsonNode type : PaimonOracle.MAPPER.readTree(keyTypesJson)) {
            keyTypes.add(DataTypeJsonParser.parseDataType(type));
        }
        RowType keyType = RowType.of(keyTypes.toArray(new DataType[0]));
        ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
        try {
            BucketFunction function =
                    BucketFunction.create(
                            CoreOptions.BucketFunctionType.of(functionType), keyType);
            InternalRowSerializer serializer = new InternalRowSerializer(keyType);
            List<BinaryRow> keys = new ArrayList<>();
            for (JsonNode row : PaimonOracle.MAPPER.readTree(keyRowsJson)) {
                keys.add(serializer.toBinaryRow(PaimonOracle.decode(row, keyType)).copy());
            }
            ObjectNode buckets = out.putObject("buckets");
            for (JsonNode n : PaimonOracle.MAPPER.readTree(numBucketsJson)) {
                ArrayNode list = buckets.putArray(Integer.toString(n.asInt()));
                for (BinaryRow key : keys) {
                    list.add(function.bucket(key, n.asInt()));
                }
            }
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            out.put("error", root.getClass().getSimpleName() + ": " + root.getMessage());
        }
        return PaimonOracle.MAPPER.writeValueAsString(out);
    }

    /**
     * The rows of Java's batch read of db.name with read type {@code fieldsJson} (["a", "_ROW_ID",
     * "_SEQUENCE_NUMBER", ...]; the special fields of a row-tracking table allowed), each row in
     * {@code PaimonOracle.encodeRow}'s encoding.
     */
    public static String readFields(String warehouse, String db, String name, String fieldsJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            RowType full =
                    table.coreOptions().rowTrackingEnabled()
                            ? org.apache.paimon.table.SpecialFields.rowTypeWithRowTracking(
                                    table.rowType())
                            : table.rowType();
            List<DataField> fields = new ArrayList<>();
            for (JsonNode f : PaimonOracle.MAPPER.readTree(fieldsJson)) {
                fields.add(full.getField(f.asText()));
            }
            RowType readType = new RowType(fields);
            ArrayNode rows = PaimonOracle.MAPPER.createArrayNode();
            ReadBuilder builder = table.newReadBuilder().withReadType(readType);
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(PaimonOracle.encodeRow(row, readType)));
            }
            return PaimonOracle.MAPPER.writeValueAsString(rows);
        }
    }

    /**
     * Java's compaction of an unaware-bucket append table: one AppendCompactTask per partition
     * holding every file of the latest snapshot (as the coordinator would pick them when all are
     * small), rewritten by {@code compactRewrite} (with the row-tracking fields written, as
     * Flink's AppendTableCompactor does) and committed in one batch commit. Returns the
     * latest snapshot id afterwards.
     */
    public static long compactUnaware(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            java.util.Map<BinaryRow, List<org.apache.paimon.io.DataFileMeta>> byPartition =
                    new java.util.LinkedHashMap<>();
            for (org.apache.paimon.table.source.DataSplit split :
                    table.newSnapshotReader().read().dataSplits()) {
                byPartition
                        .computeIfAbsent(split.partition(), p -> new ArrayList<>())
                        .addAll(split.dataFiles());
            }
            org.apache.paimon.table.sink.BatchWriteBuilder builder = table.newBatchWriteBuilder();
            // as Flink's AppendTableCompactor: a store write that keeps the row-tracking fields
            org.apache.paimon.operation.BaseAppendFileStoreWrite store =
                    (org.apache.paimon.operation.BaseAppendFileStoreWrite)
                            table.store().newWrite(java.util.UUID.randomUUID().toString());
            if (table.coreOptions().rowTrackingEnabled()) {
                store.withWriteType(
                        org.apache.paimon.table.SpecialFields.rowTypeWithRowTracking(
                                table.rowType()));
            }
            try (org.apache.paimon.table.sink.BatchTableCommit commit = builder.newCommit()) {
                List<org.apache.paimon.table.sink.CommitMessage> messages = new ArrayList<>();
                for (java.util.Map.Entry<BinaryRow, List<org.apache.paimon.io.DataFileMeta>> e :
                        byPartition.entrySet()) {
                    if (e.getValue().size() > 1) {
                        messages.add(
                                new org.apache.paimon.append.AppendCompactTask(
                                                e.getKey(), e.getValue())
                                        .doCompact(table, store));
                    }
                }
                commit.commit(messages);
            } finally {
                store.close();
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /**
     * Java's batch INSERT OVERWRITE of the whole table with {@code rowsJson} (rows encoded as
     * for {@code PaimonOracle.writeRows}): one OVERWRITE commit, whose new files get new row ids
     * on a row-tracking table. Returns the latest snapshot id afterwards.
     */
    public static long overwriteRows(String warehouse, String db, String name, String rowsJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            org.apache.paimon.table.sink.BatchWriteBuilder builder =
                    table.newBatchWriteBuilder().withOverwrite();
            try (org.apache.paimon.table.sink.BatchTableWrite write = builder.newWrite();
                    org.apache.paimon.table.sink.BatchTableCommit commit = builder.newCommit()) {
                PaimonOracle.writeAll(table, write, rowsJson);
                commit.commit(write.prepareCommit());
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }
}
