package paimonoracle;

import org.apache.paimon.bucket.BucketFunction;
import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.catalog.CatalogContext;
import org.apache.paimon.catalog.CatalogFactory;
import org.apache.paimon.catalog.Identifier;
import org.apache.paimon.data.BinaryRow;
import org.apache.paimon.data.BinaryString;
import org.apache.paimon.data.DataGetters;
import org.apache.paimon.data.Decimal;
import org.apache.paimon.data.GenericArray;
import org.apache.paimon.data.GenericMap;
import org.apache.paimon.data.GenericRow;
import org.apache.paimon.data.InternalArray;
import org.apache.paimon.data.InternalMap;
import org.apache.paimon.data.InternalRow;
import org.apache.paimon.data.Timestamp;
import org.apache.paimon.data.serializer.InternalRowSerializer;
import org.apache.paimon.disk.IOManager;
import org.apache.paimon.index.HashBucketAssigner;
import org.apache.paimon.io.DataInputDeserializer;
import org.apache.paimon.io.DataOutputViewStreamWrapper;
import org.apache.paimon.options.Options;
import org.apache.paimon.reader.RecordReader;
import org.apache.paimon.schema.Schema;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.BucketMode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.table.Table;
import org.apache.paimon.table.sink.BatchTableCommit;
import org.apache.paimon.table.sink.BatchTableWrite;
import org.apache.paimon.table.sink.BatchWriteBuilder;
import org.apache.paimon.table.sink.CommitMessage;
import org.apache.paimon.table.sink.CommitMessageSerializer;
import org.apache.paimon.table.sink.DynamicBucketRowKeyExtractor;
import org.apache.paimon.table.source.ReadBuilder;
import org.apache.paimon.types.ArrayType;
import org.apache.paimon.types.DataField;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.DecimalType;
import org.apache.paimon.types.LocalZonedTimestampType;
import org.apache.paimon.types.MapType;
import org.apache.paimon.types.MultisetType;
import org.apache.paimon.types.RowType;
import org.apache.paimon.types.TimestampType;
import org.apache.paimon.utils.JsonSerdeUtil;
import org.apache.paimon.utils.SnapshotManager;

import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Test oracle: Java Paimon's own catalog, reader, writer and bucket function, driven from Python
 * through py4j. Every method takes and returns only strings, numbers and (serialized commit
 * messages) byte arrays; structures travel as JSON in one canonical value encoding (see
 * tests/interop/java_oracle.py):
 *
 * <pre>
 * null -> null; BOOLEAN -> true/false; TINYINT..BIGINT -> number;
 * FLOAT/DOUBLE -> string from Double.toString (FLOAT widened to double; NaN, Infinity, -Infinity);
 * DECIMAL -> BigDecimal.toPlainString(); CHAR/VARCHAR -> string; BINARY/VARBINARY -> base64;
 * DATE -> epoch days; TIME -> millis of day;
 * TIMESTAMP / TIMESTAMP_LTZ -> integer epoch nanoseconds (arbitrary precision, so no overflow);
 * ARRAY -> list; MAP / MULTISET -> list of [key, value] pairs; ROW -> list of field values.
 * </pre>
 *
 * Inputs are read leniently: numbers may also come as strings and floats as JSON numbers.
 */
public final class PaimonOracle {

    static final ObjectMapper MAPPER = new ObjectMapper();
    private static final BigInteger NANOS_PER_MILLI = BigInteger.valueOf(1_000_000L);

    private PaimonOracle() {}

    // ------------------------------------------------------------------ catalog access

    /**
     * Extra catalog options per warehouse (a store's endpoint and credentials, e.g. the s3.*
     * keys of paimon-s3), set once by {@link #setCatalogOptions} so that every method keeps its
     * plain warehouse-string signature.
     */
    private static final Map<String, Map<String, String>> CATALOG_OPTIONS =
            new ConcurrentHashMap<>();

    /** Every later catalog of this warehouse gets these options ({"key": "value", ...}). */
    public static void setCatalogOptions(String warehouse, String optionsJson) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        MAPPER.readTree(optionsJson)
                .fields()
                .forEachRemaining(e -> options.put(e.getKey(), e.getValue().asText()));
        CATALOG_OPTIONS.put(warehouse, options);
    }

    /** A fresh catalog per call, so files written by other engines are never hidden by caches. */
    static Catalog catalog(String warehouse) {
        Options options = new Options();
        CATALOG_OPTIONS.getOrDefault(warehouse, Collections.emptyMap()).forEach(options::set);
        options.set("warehouse", warehouse);
        options.set("cache-enabled", "false");
        return CatalogFactory.createCatalog(CatalogContext.create(options));
    }

    static FileStoreTable table(Catalog catalog, String db, String name) throws Exception {
        return (FileStoreTable) catalog.getTable(Identifier.create(db, name));
    }

    // ------------------------------------------------------------------ reads

    /** All rows of the table (latest snapshot if snapshotId < 0) read by Java Paimon's reader. */
    public static String readTable(String warehouse, String db, String name, long snapshotId)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table = table(catalog, db, name);
            if (snapshotId >= 0) {
                table = table.copy(
                        Collections.singletonMap("scan.snapshot-id", Long.toString(snapshotId)));
            }
            RowType rowType = table.rowType();
            ObjectNode out = MAPPER.createObjectNode();
            ArrayNode fields = out.putArray("fields");
            ArrayNode types = out.putArray("types");
            for (DataField field : rowType.getFields()) {
                fields.add(field.name());
                types.add(MAPPER.readTree(JsonSerdeUtil.toJson(field.type())));
            }
            ArrayNode rows = out.putArray("rows");
            ReadBuilder builder = table.newReadBuilder();
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(encodeRow(row, rowType)));
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * Java's own snapshot expiration ({@code table.newExpireSnapshots()}, ExpireSnapshotsImpl)
     * with an ExpireConfig of these retain counts and time retention; returns the number of
     * snapshots expired.
     */
    public static int expireSnapshots(
            String warehouse,
            String db,
            String name,
            int retainMax,
            int retainMin,
            int maxDeletes,
            long timeRetainedMillis)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            org.apache.paimon.options.ExpireConfig config =
                    org.apache.paimon.options.ExpireConfig.builder()
                            .snapshotRetainMax(retainMax)
                            .snapshotRetainMin(retainMin)
                            .snapshotTimeRetain(java.time.Duration.ofMillis(timeRetainedMillis))
                            .snapshotMaxDeletes(maxDeletes)
                            .build();
            return table.newExpireSnapshots().config(config).expire();
        }
    }

    /** Java's {@code FileStoreTable.createTag(tagName, snapshotId)}: writes tag/tag-name. */
    public static void createTag(String warehouse, String db, String name, String tag, long id)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            table(catalog, db, name).createTag(tag, id);
        }
    }

    /** All rows of the table at a tag ({@code scan.tag-name}), read by Java. */
    public static String readTag(String warehouse, String db, String name, String tag)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table =
                    table(catalog, db, name).copy(Collections.singletonMap("scan.tag-name", tag));
            RowType rowType = table.rowType();
            ArrayNode rows = MAPPER.createArrayNode();
            ReadBuilder builder = table.newReadBuilder();
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(encodeRow(row, rowType)));
            }
            return MAPPER.writeValueAsString(rows);
        }
    }

    /**
     * Names of the data files Java's scan keeps for a one-leaf filter ({@code op} is equal,
     * greaterOrEqual, lessThan or isNull): shows that Java can decode our value stats and prune
     * with them.
     */
    public static String planFiles(
            String warehouse, String db, String name, String field, String op, String literalJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table = table(catalog, db, name);
            RowType rowType = table.rowType();
            int index = rowType.getFieldIndex(field);
            DataType type = rowType.getTypeAt(index);
            org.apache.paimon.predicate.PredicateBuilder pb =
                    new org.apache.paimon.predicate.PredicateBuilder(rowType);
            Object literal = decodeValue(MAPPER.readTree(literalJson), type);
            org.apache.paimon.predicate.Predicate predicate;
            switch (op) {
                case "equal":
                    predicate = pb.equal(index, literal);
                    break;
                case "greaterOrEqual":
                    predicate = pb.greaterOrEqual(index, literal);
                    break;
                case "lessThan":
                    predicate = pb.lessThan(index, literal);
                    break;
                case "isNull":
                    predicate = pb.isNull(index);
                    break;
                default:
                    throw new IllegalArgumentException("unknown op " + op);
            }
            ArrayNode out = MAPPER.createArrayNode();
            for (org.apache.paimon.table.source.Split split :
                    table.newReadBuilder().withFilter(predicate).newScan().plan().splits()) {
                for (org.apache.paimon.io.DataFileMeta f :
                        ((org.apache.paimon.table.source.DataSplit) split).dataFiles()) {
                    out.add(f.fileName());
                }
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /** Latest snapshot id, or -1 when the table has no snapshot yet. */
    public static long latestSnapshotId(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Long id = table(catalog, db, name).snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /** JSON list of {"id", "schemaId", "commitKind", "totalRecordCount"}, oldest first. */
    public static String snapshots(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            SnapshotManager manager = table(catalog, db, name).snapshotManager();
            List<org.apache.paimon.Snapshot> all = new ArrayList<>();
            Iterator<org.apache.paimon.Snapshot> it = manager.snapshots();
            while (it.hasNext()) {
                all.add(it.next());
            }
            all.sort((a, b) -> Long.compare(a.id(), b.id()));
            ArrayNode out = MAPPER.createArrayNode();
            for (org.apache.paimon.Snapshot s : all) {
                ObjectNode node = out.addObject();
                node.put("id", s.id());
                node.put("schemaId", s.schemaId());
                node.put("commitKind", s.commitKind().name());
                node.put("totalRecordCount", s.totalRecordCount());
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /** The table's current row type as Paimon schema-file JSON (list of fields with ids). */
    public static String tableFields(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            return JsonSerdeUtil.toJson(table(catalog, db, name).rowType().getFields());
        }
    }

    // ------------------------------------------------------------------ writes

    /**
     * Creates database (if needed) and table from {"fields":[{"name","type"}], "partitionKeys",
     * "primaryKeys", "options", "comment"}; "type" is Paimon schema-file type JSON.
     */
    public static void createTable(String warehouse, String db, String name, String schemaJson)
            throws Exception {
        JsonNode spec = MAPPER.readTree(schemaJson);
        Schema.Builder builder = Schema.newBuilder();
        for (JsonNode field : spec.get("fields")) {
            JsonNode description = field.get("description");
            builder.column(
                    field.get("name").asText(),
                    DataTypeJsonParser.parseDataType(field.get("type")),
                    description == null || description.isNull() ? null : description.asText());
        }
        builder.partitionKeys(stringList(spec.get("partitionKeys")));
        builder.primaryKey(stringList(spec.get("primaryKeys")));
        JsonNode options = spec.get("options");
        if (options != null) {
            options.fields().forEachRemaining(e -> builder.option(e.getKey(), e.getValue().asText()));
        }
        JsonNode comment = spec.get("comment");
        if (comment != null && !comment.isNull()) {
            builder.comment(comment.asText());
        }
        try (Catalog catalog = catalog(warehouse)) {
            catalog.createDatabase(db, true);
            catalog.createTable(Identifier.create(db, name), builder.build(), false);
        }
    }

    /**
     * One batch write + commit of canonical-encoded rows; returns the latest snapshot id after it
     * (a primary-key table may add a COMPACT snapshot after the APPEND one).
     */
    public static long writeRows(String warehouse, String db, String name, String rowsJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            return writeBatch(table(catalog, db, name), rowsJson, null);
        }
    }

    /**
     * {@link #writeRows} with a RowKind per row ({@code kindsJson}: ["+I", "-U", "+U", "-D",
     * ...], one per row), so primary-key tables take upserts and deletes; a cross-partition
     * (KEY_DYNAMIC) table is routed as {@link #writeCrossPartition} routes it. Returns the
     * latest snapshot id afterwards.
     */
    public static long writeRowsKinds(
            String warehouse, String db, String name, String rowsJson, String kindsJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            if (table.bucketMode() == BucketMode.KEY_DYNAMIC) {
                return crossPartition(table, rowsJson, kindsJson, null);
            }
            return writeBatch(table, rowsJson, kindsJson);
        }
    }

    static long writeBatch(FileStoreTable table, String rowsJson, String kindsJson)
            throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        // lookup compaction at commit (first-row, force-lookup) builds local files on disk
        IOManager io =
                table.coreOptions().needLookup()
                        ? IOManager.create(System.getProperty("java.io.tmpdir"))
                        : null;
        try (BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit()) {
            if (io != null) {
                write.withIOManager(io);
            }
            writeAll(table, write, rowsJson, kindsJson);
            commit.commit(write.prepareCommit());
        } finally {
            if (io != null) {
                io.close();
            }
        }
        Long id = table.snapshotManager().latestSnapshotId();
        return id == null ? -1L : id;
    }

    /**
     * Java's own compaction of every bucket with files in the latest snapshot, as one batch
     * commit: {@code TableWrite.compact(partition, bucket, full)} (full: every run to the top
     * level; otherwise the universal pick), with {@code write-only} off. Returns the latest
     * snapshot id afterwards (unchanged when nothing needed compacting).
     */
    public static long compactTable(String warehouse, String db, String name, boolean full)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table =
                    table(catalog, db, name)
                            .copy(Collections.singletonMap("write-only", "false"));
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            // lookup compactions (first-row, changelog producers) spill to a temp directory
            try (org.apache.paimon.disk.IOManager io =
                            org.apache.paimon.disk.IOManager.create(
                                    System.getProperty("java.io.tmpdir"));
                    BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                write.withIOManager(io);
                for (org.apache.paimon.manifest.BucketEntry entry :
                        table.newSnapshotReader().bucketEntries()) {
                    write.compact(entry.partition(), entry.bucket(), full);
                }
                commit.commit(write.prepareCommit());
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /**
     * Java's postpone-bucket compaction, as SparkPostponeCompactProcedure does it with core
     * classes (the procedure itself is in the Spark connector, which Maven Central lacks for
     * 1.4): the postpone files of each partition are read file by file in creation-time order
     * (PostponeBucketCompactSplitSource), every row goes to {@code write(row, bucket)} of a
     * {@code bucket = 1} copy with the partition's bucket count (PostponeUtils known buckets,
     * else {@code postpone.default-bucket-num}), the writers' messages get that count as total
     * buckets, the postpone files are retired as compact-before, BucketFiles folds both into
     * one message per bucket, and one commit lands them. Returns the latest snapshot id.
     */
    public static long compactPostpone(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            List<org.apache.paimon.table.source.DataSplit> splits =
                    table.newSnapshotReader()
                            .withBucket(BucketMode.POSTPONE_BUCKET)
                            .read()
                            .dataSplits();
            Map<BinaryRow, Integer> known =
                    org.apache.paimon.table.PostponeUtils.getKnownNumBuckets(table);
            int defaultNum = table.coreOptions().postponeDefaultBucketNum();
            FileStoreTable realTable = table.copy(Collections.singletonMap("bucket", "1"));
            org.apache.paimon.schema.TableSchema schema = table.schema();
            BucketFunction bucketFunction =
                    BucketFunction.create(table.coreOptions(), schema.logicalBucketKeyType());
            org.apache.paimon.codegen.Projection bucketKey =
                    org.apache.paimon.codegen.CodeGenUtils.newProjection(
                            schema.logicalRowType(), schema.projection(schema.bucketKeys()));
            List<org.apache.paimon.table.sink.CommitMessageImpl> messages = new ArrayList<>();
            BatchWriteBuilder builder = realTable.newBatchWriteBuilder();
            try (IOManager io = IOManager.create(System.getProperty("java.io.tmpdir"));
                    BatchTableWrite write = builder.newWrite()) {
                write.withIOManager(io);
                ((org.apache.paimon.table.sink.TableWriteImpl<?>) write)
                        .getWrite()
                        .withIgnoreNumBucketCheck(true);
                org.apache.paimon.table.source.TableRead read = table.newRead();
                for (org.apache.paimon.table.source.DataSplit split : splits) {
                    int numBuckets = known.getOrDefault(split.partition(), defaultNum);
                    List<org.apache.paimon.io.DataFileMeta> files =
                            new ArrayList<>(split.dataFiles());
                    files.sort(
                            java.util.Comparator.comparing(
                                    org.apache.paimon.io.DataFileMeta::creationTime));
                    for (org.apache.paimon.io.DataFileMeta file : files) {
                        org.apache.paimon.table.source.DataSplit one =
                                org.apache.paimon.table.source.DataSplit.builder()
                                        .withSnapshot(split.snapshotId())
                                        .withPartition(split.partition())
                                        .withBucket(split.bucket())
                                        .withBucketPath(split.bucketPath())
                                        .withTotalBuckets(split.totalBuckets())
                                        .withDataFiles(Collections.singletonList(file))
                                        .isStreaming(false)
                                        .build();
                        try (RecordReader<InternalRow> reader = read.createReader(one)) {
                            RecordReader.RecordIterator<InternalRow> batch;
                            while ((batch = reader.readBatch()) != null) {
                                InternalRow row;
                                while ((row = batch.next()) != null) {
                                    int bucket =
                                            bucketFunction.bucket(
                                                    bucketKey.apply(row), numBuckets);
                                    write.write(row, bucket);
                                }
                                batch.releaseBatch();
                            }
                        }
                    }
                    messages.add(
                            new org.apache.paimon.table.sink.CommitMessageImpl(
                                    split.partition(),
                                    split.bucket(),
                                    split.totalBuckets(),
                                    org.apache.paimon.io.DataIncrement.emptyIncrement(),
                                    new org.apache.paimon.io.CompactIncrement(
                                            split.dataFiles(),
                                            Collections.emptyList(),
                                            Collections.emptyList())));
                }
                for (CommitMessage m : write.prepareCommit()) {
                    org.apache.paimon.table.sink.CommitMessageImpl c =
                            (org.apache.paimon.table.sink.CommitMessageImpl) m;
                    messages.add(
                            new org.apache.paimon.table.sink.CommitMessageImpl(
                                    c.partition(),
                                    c.bucket(),
                                    known.getOrDefault(c.partition(), defaultNum),
                                    c.newFilesIncrement(),
                                    c.compactIncrement()));
                }
            }
            Map<BinaryRow, Map<Integer, org.apache.paimon.postpone.BucketFiles>> buckets =
                    new LinkedHashMap<>();
            for (org.apache.paimon.table.sink.CommitMessageImpl m : messages) {
                buckets.computeIfAbsent(m.partition(), p -> new LinkedHashMap<>())
                        .computeIfAbsent(
                                m.bucket(),
                                b ->
                                        new org.apache.paimon.postpone.BucketFiles(
                                                table.store()
                                                        .pathFactory()
                                                        .createDataFilePathFactory(
                                                                m.partition(), b),
                                                table.fileIO()))
                        .update(m);
            }
            List<CommitMessage> result = new ArrayList<>();
            for (Map.Entry<BinaryRow, Map<Integer, org.apache.paimon.postpone.BucketFiles>> p :
                    buckets.entrySet()) {
                for (Map.Entry<Integer, org.apache.paimon.postpone.BucketFiles> b :
                        p.getValue().entrySet()) {
                    result.add(b.getValue().makeMessage(p.getKey(), b.getKey()));
                }
            }
            if (!result.isEmpty()) {
                try (BatchTableCommit commit = realTable.newBatchWriteBuilder().newCommit()) {
                    commit.commit(result);
                }
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /**
     * One batch write + commit of a cross-partition upsert (KEY_DYNAMIC) table, routed as Java's
     * sinks route it (Flink's GlobalDynamicBucketSink, Spark's PaimonSparkWriter with one
     * assigner): IndexBootstrap's keys of the latest snapshot into a GlobalIndexAssigner, then
     * every row through it, each (row, bucket) it emits (-D records of keys leaving a partition
     * included) to {@code write(row, bucket)}. {@code overwriteJson}: null for an append, else
     * the static partition of {@code withOverwrite} as a JSON object ({} for none). Returns the
     * latest snapshot id afterwards.
     */
    public static long writeCrossPartition(
            String warehouse, String db, String name, String rowsJson, String overwriteJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            return crossPartition(table(catalog, db, name), rowsJson, null, overwriteJson);
        }
    }

    private static long crossPartition(
            FileStoreTable table, String rowsJson, String kindsJson, String overwriteJson)
            throws Exception {
        BatchWriteBuilder builder = table.newBatchWriteBuilder();
        if (overwriteJson != null) {
            Map<String, String> spec = new LinkedHashMap<>();
            MAPPER.readTree(overwriteJson)
                    .fields()
                    .forEachRemaining(e -> spec.put(e.getKey(), e.getValue().asText()));
            builder = builder.withOverwrite(spec);
        }
        RowType rowType = table.rowType();
        try (IOManager io = IOManager.create(System.getProperty("java.io.tmpdir"));
                BatchTableWrite write = builder.newWrite();
                BatchTableCommit commit = builder.newCommit();
                org.apache.paimon.crosspartition.GlobalIndexAssigner assigner =
                        new org.apache.paimon.crosspartition.GlobalIndexAssigner(table)) {
            write.withIOManager(io);
            assigner.open(
                    0L,
                    io,
                    1,
                    0,
                    (row, bucket) -> {
                        try {
                            write.write(row, bucket);
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    });
            try (RecordReader<InternalRow> keys =
                    new org.apache.paimon.crosspartition.IndexBootstrap(table)
                            .bootstrap(1, 0)) {
                keys.forEachRemaining(
                        key -> {
                            try {
                                assigner.bootstrapKey(key);
                            } catch (java.io.IOException e) {
                                throw new RuntimeException(e);
                            }
                        });
            }
            JsonNode rows = MAPPER.readTree(rowsJson);
            JsonNode kinds = kindsJson == null ? null : MAPPER.readTree(kindsJson);
            for (int i = 0; i < rows.size(); i++) {
                assigner.processInput(decodeWithKind(rows, kinds, i, rowType));
            }
            assigner.endBoostrap(true);
            commit.commit(write.prepareCommit());
        }
        Long id = table.snapshotManager().latestSnapshotId();
        return id == null ? -1L : id;
    }

    /** Java's CommitMessageSerializer.CURRENT_VERSION (what {@link #writeRowsAndSerialize} writes). */
    public static int commitMessageVersion() {
        return new CommitMessageSerializer().getVersion();
    }

    /**
     * One Java batch write of canonical-encoded rows, not committed: the prepared commit messages
     * as CommitMessageSerializer.serializeList bytes (version {@link #commitMessageVersion}).
     */
    public static byte[] writeRowsAndSerialize(
            String warehouse, String db, String name, String rowsJson) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            try (BatchTableWrite write = table.newBatchWriteBuilder().newWrite()) {
                writeAll(table, write, rowsJson);
                List<CommitMessage> messages = write.prepareCommit();
                ByteArrayOutputStream out = new ByteArrayOutputStream();
                new CommitMessageSerializer()
                        .serializeList(messages, new DataOutputViewStreamWrapper(out));
                return out.toByteArray();
            }
        }
    }

    /**
     * Deserializes a CommitMessageSerializer.serializeList byte array of the given version (all
     * bytes must be consumed) and commits the messages with a Java BatchTableCommit; returns the
     * latest snapshot id afterwards.
     */
    public static long commitSerializedMessages(
            String warehouse, String db, String name, int version, byte[] listBytes)
            throws Exception {
        DataInputDeserializer in = new DataInputDeserializer(listBytes);
        List<CommitMessage> messages = new CommitMessageSerializer().deserializeList(version, in);
        if (in.available() != 0) {
            throw new IllegalArgumentException(
                    in.available() + " trailing bytes after the commit messages");
        }
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                commit.commit(messages);
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /** Writes canonical-encoded rows, assigning dynamic buckets the way Java's writers do. */
    static void writeAll(FileStoreTable table, BatchTableWrite write, String rowsJson)
            throws Exception {
        writeAll(table, write, rowsJson, null);
    }

    /** A row of {@code rows} with the RowKind at the same index of {@code kinds} (null: +I). */
    static GenericRow decodeWithKind(
            JsonNode rows, JsonNode kinds, int i, RowType rowType) {
        GenericRow row = (GenericRow) decode(rows.get(i), rowType);
        if (kinds != null) {
            row.setRowKind(org.apache.paimon.types.RowKind.fromShortString(kinds.get(i).asText()));
        }
        return row;
    }

    /** Writes canonical-encoded rows (with RowKinds when {@code kindsJson} is not null). */
    private static void writeAll(
            FileStoreTable table, BatchTableWrite write, String rowsJson, String kindsJson)
            throws Exception {
        JsonNode rows = MAPPER.readTree(rowsJson);
        JsonNode kinds = kindsJson == null ? null : MAPPER.readTree(kindsJson);
        if (kinds != null && kinds.size() != rows.size()) {
            throw new IllegalArgumentException(
                    kinds.size() + " row kinds for " + rows.size() + " rows");
        }
        RowType rowType = table.rowType();
        BucketMode mode = table.bucketMode();
        if (mode == BucketMode.KEY_DYNAMIC) {
            throw new UnsupportedOperationException(
                    "cross-partition upsert (KEY_DYNAMIC) tables are not supported");
        }
        HashBucketAssigner assigner = null;
        DynamicBucketRowKeyExtractor extractor = null;
        if (mode == BucketMode.HASH_DYNAMIC) {
            assigner = new HashBucketAssigner(
                    table.snapshotManager(),
                    UUID.randomUUID().toString(),
                    table.store().newIndexFileHandler(),
                    1,
                    1,
                    0,
                    table.coreOptions().dynamicBucketTargetRowNum(),
                    maxBuckets(table.coreOptions().dynamicBucketMaxBuckets()));
            extractor = new DynamicBucketRowKeyExtractor(table.schema());
        }
        for (int i = 0; i < rows.size(); i++) {
            GenericRow internal = decodeWithKind(rows, kinds, i, rowType);
            if (assigner == null) {
                write.write(internal);
            } else {
                extractor.setRecord(internal);
                int hash = extractor.trimmedPrimaryKey().hashCode();
                write.write(internal, assigner.assign(extractor.partition(), hash));
            }
        }
    }

    private static int maxBuckets(Integer configured) {
        return configured == null ? -1 : configured;
    }

    // ------------------------------------------------------------------ bucketing

    /**
     * Hash of the BinaryRow built by Java's serializer for each key row, and the bucket Java's
     * fixed-bucket writer assigns it (DEFAULT bucket function) for each bucket count.
     * Returns {"hashes": [...], "buckets": {"<n>": [...]}}.
     */
    public static String buckets(String keyTypesJson, String keyRowsJson, String numBucketsJson)
            throws Exception {
        List<DataType> keyTypes = new ArrayList<>();
        for (JsonNode type : MAPPER.readTree(keyTypesJson)) {
            keyTypes.add(DataTypeJsonParser.parseDataType(type));
        }
        RowType keyType = RowType.of(keyTypes.toArray(new DataType[0]));
        InternalRowSerializer serializer = new InternalRowSerializer(keyType);
        BucketFunction function =
                BucketFunction.create(
                        org.apache.paimon.CoreOptions.BucketFunctionType.DEFAULT, keyType);
        List<BinaryRow> keys = new ArrayList<>();
        ObjectNode out = MAPPER.createObjectNode();
        ArrayNode hashes = out.putArray("hashes");
        for (JsonNode row : MAPPER.readTree(keyRowsJson)) {
            BinaryRow key = serializer.toBinaryRow(decode(row, keyType)).copy();
            keys.add(key);
            hashes.add(key.hashCode());
        }
        ObjectNode buckets = out.putObject("buckets");
        for (JsonNode n : MAPPER.readTree(numBucketsJson)) {
            ArrayNode list = buckets.putArray(Integer.toString(n.asInt()));
            for (BinaryRow key : keys) {
                list.add(function.bucket(key, n.asInt()));
            }
        }
        return MAPPER.writeValueAsString(out);
    }

    // ------------------------------------------------------------------ encoding (Java -> JSON)

    static ArrayNode encodeRow(InternalRow row, RowType rowType) {
        ArrayNode out = MAPPER.createArrayNode();
        List<DataType> types = rowType.getFieldTypes();
        for (int i = 0; i < types.size(); i++) {
            out.add(encode(row, i, types.get(i)));
        }
        return out;
    }

    private static JsonNode encode(DataGetters data, int pos, DataType type) {
        if (data.isNullAt(pos)) {
            return MAPPER.nullNode();
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return MAPPER.getNodeFactory().booleanNode(data.getBoolean(pos));
            case TINYINT:
                return MAPPER.getNodeFactory().numberNode(data.getByte(pos));
            case SMALLINT:
                return MAPPER.getNodeFactory().numberNode(data.getShort(pos));
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return MAPPER.getNodeFactory().numberNode(data.getInt(pos));
            case BIGINT:
                return MAPPER.getNodeFactory().numberNode(data.getLong(pos));
            case FLOAT:
                return MAPPER.getNodeFactory().textNode(Double.toString(data.getFloat(pos)));
            case DOUBLE:
                return MAPPER.getNodeFactory().textNode(Double.toString(data.getDouble(pos)));
            case DECIMAL:
                DecimalType dt = (DecimalType) type;
                return MAPPER.getNodeFactory()
                        .textNode(
                                data.getDecimal(pos, dt.getPrecision(), dt.getScale())
                                        .toBigDecimal()
                                        .toPlainString());
            case CHAR:
            case VARCHAR:
                return MAPPER.getNodeFactory().textNode(data.getString(pos).toString());
            case BINARY:
            case VARBINARY:
                return MAPPER.getNodeFactory()
                        .textNode(Base64.getEncoder().encodeToString(data.getBinary(pos)));
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                Timestamp ts = data.getTimestamp(pos, timestampPrecision(type));
                return MAPPER.getNodeFactory()
                        .numberNode(
                                BigInteger.valueOf(ts.getMillisecond())
                                        .multiply(NANOS_PER_MILLI)
                                        .add(BigInteger.valueOf(ts.getNanoOfMillisecond())));
            case ARRAY:
                return encodeArray(data.getArray(pos), ((ArrayType) type).getElementType());
            case MAP:
                MapType mt = (MapType) type;
                return encodeMap(data.getMap(pos), mt.getKeyType(), mt.getValueType());
            case MULTISET:
                return encodeMap(
                        data.getMap(pos),
                        ((MultisetType) type).getElementType(),
                        new org.apache.paimon.types.IntType(false));
            case ROW:
                RowType rt = (RowType) type;
                return encodeRow(data.getRow(pos, rt.getFieldCount()), rt);
            default:
                throw new UnsupportedOperationException("oracle cannot encode " + type);
        }
    }

    private static ArrayNode encodeArray(InternalArray array, DataType elementType) {
        ArrayNode out = MAPPER.createArrayNode();
        for (int i = 0; i < array.size(); i++) {
            out.add(encode(array, i, elementType));
        }
        return out;
    }

    private static ArrayNode encodeMap(InternalMap map, DataType keyType, DataType valueType) {
        ArrayNode out = MAPPER.createArrayNode();
        InternalArray keys = map.keyArray();
        InternalArray values = map.valueArray();
        for (int i = 0; i < map.size(); i++) {
            ArrayNode pair = out.addArray();
            pair.add(encode(keys, i, keyType));
            pair.add(encode(values, i, valueType));
        }
        return out;
    }

    private static int timestampPrecision(DataType type) {
        return type instanceof TimestampType
                ? ((TimestampType) type).getPrecision()
                : ((LocalZonedTimestampType) type).getPrecision();
    }

    // ------------------------------------------------------------------ decoding (JSON -> Java)

    static InternalRow decode(JsonNode row, RowType rowType) {
        List<DataType> types = rowType.getFieldTypes();
        if (!row.isArray() || row.size() != types.size()) {
            throw new IllegalArgumentException(
                    "row " + row + " does not have " + types.size() + " fields");
        }
        GenericRow out = new GenericRow(types.size());
        for (int i = 0; i < types.size(); i++) {
            out.setField(i, decodeValue(row.get(i), types.get(i)));
        }
        return out;
    }

    static Object decodeValue(JsonNode v, DataType type) {
        if (v == null || v.isNull()) {
            return null;
        }
        switch (type.getTypeRoot()) {
            case BOOLEAN:
                return v.isBoolean() ? v.booleanValue() : Boolean.parseBoolean(v.asText());
            case TINYINT:
                return Byte.parseByte(v.asText());
            case SMALLINT:
                return Short.parseShort(v.asText());
            case INTEGER:
            case DATE:
            case TIME_WITHOUT_TIME_ZONE:
                return Integer.parseInt(v.asText());
            case BIGINT:
                return Long.parseLong(v.asText());
            case FLOAT:
                return Float.parseFloat(v.asText());
            case DOUBLE:
                return Double.parseDouble(v.asText());
            case DECIMAL:
                DecimalType dt = (DecimalType) type;
                Decimal d =
                        Decimal.fromBigDecimal(
                                new BigDecimal(v.asText()), dt.getPrecision(), dt.getScale());
                if (d == null) {
                    throw new IllegalArgumentException(v.asText() + " does not fit " + type);
                }
                return d;
            case CHAR:
            case VARCHAR:
                return BinaryString.fromString(v.asText());
            case BINARY:
            case VARBINARY:
                return Base64.getDecoder().decode(v.asText());
            case TIMESTAMP_WITHOUT_TIME_ZONE:
            case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
                BigInteger nanos = new BigInteger(v.asText());
                BigInteger[] qr = nanos.divideAndRemainder(NANOS_PER_MILLI);
                if (qr[1].signum() < 0) {
                    qr[0] = qr[0].subtract(BigInteger.ONE);
                    qr[1] = qr[1].add(NANOS_PER_MILLI);
                }
                return Timestamp.fromEpochMillis(qr[0].longValueExact(), qr[1].intValue());
            case ARRAY:
                DataType elementType = ((ArrayType) type).getElementType();
                Object[] elements = new Object[v.size()];
                for (int i = 0; i < v.size(); i++) {
                    elements[i] = decodeValue(v.get(i), elementType);
                }
                return new GenericArray(elements);
            case MAP:
                MapType mt = (MapType) type;
                return decodeMap(v, mt.getKeyType(), mt.getValueType());
            case MULTISET:
                return decodeMap(
                        v,
                        ((MultisetType) type).getElementType(),
                        new org.apache.paimon.types.IntType(false));
            case ROW:
                return decode(v, (RowType) type);
            default:
                throw new UnsupportedOperationException("oracle cannot decode " + type);
        }
    }

    private static GenericMap decodeMap(JsonNode pairs, DataType keyType, DataType valueType) {
        Map<Object, Object> map = new LinkedHashMap<>();
        for (JsonNode pair : pairs) {
            map.put(decodeValue(pair.get(0), keyType), decodeValue(pair.get(1), valueType));
        }
        return new GenericMap(map);
    }

    static List<String> stringList(JsonNode node) {
        List<String> out = new ArrayList<>();
        if (node != null) {
            for (JsonNode item : node) {
                out.add(item.asText());
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ H3 float keys

    /**
     * Like {@link #writeRows} for fixed-bucket tables, but a FLOAT/DOUBLE value may be given as
     * {"bits": "<hex>"} (raw IEEE bits: NaN payloads, -0.0), placed with intBitsToFloat /
     * longBitsToDouble so BinaryRowWriter stores exactly those bits. Returns the latest
     * snapshot id afterwards.
     */
    public static long writeRowsFloatBits(
            String warehouse, String db, String name, String rowsJson) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            RowType rowType = table.rowType();
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                for (JsonNode row : MAPPER.readTree(rowsJson)) {
                    write.write(decodeFloatBits(row, rowType));
                }
                commit.commit(write.prepareCommit());
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /**
     * Java's BinaryRow hash and DEFAULT-function bucket per key row, FLOAT/DOUBLE values allowed
     * as {"bits": "<hex>"}; same output as {@link #buckets}.
     */
    public static String bucketsFloatBits(
            String keyTypesJson, String keyRowsJson, String numBucketsJson) throws Exception {
        List<DataType> keyTypes = new ArrayList<>();
        for (JsonNode type : MAPPER.readTree(keyTypesJson)) {
            keyTypes.add(DataTypeJsonParser.parseDataType(type));
        }
        RowType keyType = RowType.of(keyTypes.toArray(new DataType[0]));
        List<InternalRow> decoded = new ArrayList<>();
        for (JsonNode row : MAPPER.readTree(keyRowsJson)) {
            decoded.add(decodeFloatBits(row, keyType));
        }
        InternalRowSerializer serializer = new InternalRowSerializer(keyType);
        BucketFunction function =
                BucketFunction.create(
                        org.apache.paimon.CoreOptions.BucketFunctionType.DEFAULT, keyType);
        ObjectNode out = MAPPER.createObjectNode();
        ArrayNode hashes = out.putArray("hashes");
        List<BinaryRow> keys = new ArrayList<>();
        for (InternalRow row : decoded) {
            BinaryRow key = serializer.toBinaryRow(row).copy();
            keys.add(key);
            hashes.add(key.hashCode());
        }
        ObjectNode buckets = out.putObject("buckets");
        for (JsonNode n : MAPPER.readTree(numBucketsJson)) {
            ArrayNode list = buckets.putArray(Integer.toString(n.asInt()));
            for (BinaryRow key : keys) {
                list.add(function.bucket(key, n.asInt()));
            }
        }
        return MAPPER.writeValueAsString(out);
    }

    /**
     * The latest snapshot read split by split: {"types": [...], "splits": [{"partition": [...],
     * "bucket": b, "files": [[name, level, rowCount], ...], "rows": [...], "bits": [...]}]};
     * "bits" holds per row the raw IEEE bits (hex) of each top-level FLOAT/DOUBLE field (null
     * for other fields and nulls), since the canonical row encoding cannot tell NaN payloads
     * or -0.0 apart.
     */
    public static String readTableByBucket(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            RowType rowType = table.rowType();
            RowType partitionType = table.schema().logicalPartitionType();
            ObjectNode result = MAPPER.createObjectNode();
            ArrayNode types = result.putArray("types");
            for (DataField field : rowType.getFields()) {
                types.add(MAPPER.readTree(JsonSerdeUtil.toJson(field.type())));
            }
            ArrayNode out = result.putArray("splits");
            ReadBuilder builder = table.newReadBuilder();
            for (org.apache.paimon.table.source.Split s : builder.newScan().plan().splits()) {
                org.apache.paimon.table.source.DataSplit split =
                        (org.apache.paimon.table.source.DataSplit) s;
                ObjectNode node = out.addObject();
                node.set("partition", encodeRow(split.partition(), partitionType));
                node.put("bucket", split.bucket());
                ArrayNode files = node.putArray("files");
                for (org.apache.paimon.io.DataFileMeta f : split.dataFiles()) {
                    ArrayNode file = files.addArray();
                    file.add(f.fileName());
                    file.add(f.level());
                    file.add(f.rowCount());
                }
                ArrayNode rows = node.putArray("rows");
                ArrayNode bits = node.putArray("bits");
                try (RecordReader<InternalRow> reader = builder.newRead().createReader(split)) {
                    reader.forEachRemaining(
                            row -> {
                                rows.add(encodeRow(row, rowType));
                                bits.add(floatBits(row, rowType));
                            });
                }
            }
            return MAPPER.writeValueAsString(result);
        }
    }

    private static InternalRow decodeFloatBits(JsonNode row, RowType rowType) {
        ArrayNode plain = row.deepCopy();
        Map<Integer, String> raw = new LinkedHashMap<>();
        for (int i = 0; i < plain.size(); i++) {
            JsonNode v = plain.get(i);
            if (v != null && v.isObject() && v.has("bits")) {
                raw.put(i, v.get("bits").asText());
                plain.set(i, MAPPER.getNodeFactory().textNode("0"));
            }
        }
        GenericRow out = (GenericRow) decode(plain, rowType);
        for (Map.Entry<Integer, String> e : raw.entrySet()) {
            long bits = Long.parseUnsignedLong(e.getValue(), 16);
            switch (rowType.getTypeAt(e.getKey()).getTypeRoot()) {
                case FLOAT:
                    out.setField(e.getKey(), Float.intBitsToFloat((int) bits));
                    break;
                case DOUBLE:
                    out.setField(e.getKey(), Double.longBitsToDouble(bits));
                    break;
                default:
                    throw new IllegalArgumentException(
                            "bits given for " + rowType.getTypeAt(e.getKey()));
            }
        }
        return out;
    }

    private static ArrayNode floatBits(InternalRow row, RowType rowType) {
        ArrayNode out = MAPPER.createArrayNode();
        for (int i = 0; i < rowType.getFieldCount(); i++) {
            org.apache.paimon.types.DataTypeRoot root = rowType.getTypeAt(i).getTypeRoot();
            if (row.isNullAt(i)) {
                out.addNull();
            } else if (root == org.apache.paimon.types.DataTypeRoot.FLOAT) {
                out.add(Integer.toHexString(Float.floatToRawIntBits(row.getFloat(i))));
            } else if (root == org.apache.paimon.types.DataTypeRoot.DOUBLE) {
                out.add(Long.toHexString(Double.doubleToRawLongBits(row.getDouble(i))));
            } else {
                out.addNull();
            }
        }
        return out;
    }
    // ------------------------------------------------------------------ end H3 float keys

    // ------------------------------------------------------------------ H5 orphan files

    /**
     * Java's own orphan-file cleanup of one table, {@code LocalOrphanFilesClean} (what {@code
     * CALL sys.remove_orphan_files(mode => 'local')} runs), with this cutoff in epoch millis (the
     * procedure only takes one before now; the class takes any): {"count", "bytes", "paths"}.
     */
    public static String removeOrphanFiles(
            String warehouse, String db, String name, long olderThanMillis, boolean dryRun)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            org.apache.paimon.operation.CleanOrphanFilesResult result =
                    new org.apache.paimon.operation.LocalOrphanFilesClean(
                                    table, olderThanMillis, dryRun)
                            .clean();
            ObjectNode out = MAPPER.createObjectNode();
            out.put("count", result.getDeletedFileCount());
            out.put("bytes", result.getDeletedFileTotalLenInBytes());
            ArrayNode paths = out.putArray("paths");
            if (result.getDeletedFilesPath() != null) {
                for (org.apache.paimon.fs.Path path : result.getDeletedFilesPath()) {
                    paths.add(path.toString());
                }
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * {@code LocalOrphanFilesClean.executeDatabaseOrphanFiles} over every table of {@code db}
     * (the procedure's {@code 'db.*'}): {"count", "bytes"}.
     */
    public static String removeDatabaseOrphanFiles(
            String warehouse, String db, long olderThanMillis, boolean dryRun) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            org.apache.paimon.operation.CleanOrphanFilesResult result =
                    org.apache.paimon.operation.LocalOrphanFilesClean.executeDatabaseOrphanFiles(
                            catalog, db, null, olderThanMillis, null, dryRun);
            ObjectNode out = MAPPER.createObjectNode();
            out.put("count", result.getDeletedFileCount());
            out.put("bytes", result.getDeletedFileTotalLenInBytes());
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * {@code createBranch(branch, tag)}, then one batch write of canonical-encoded rows into the
     * branch (its data files and manifests land in the table's own directories); returns the
     * branch's latest snapshot id.
     */
    public static long writeRowsToNewBranch(
            String warehouse, String db, String name, String branch, String tag, String rowsJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            table(catalog, db, name).createBranch(branch, tag);
            FileStoreTable table = table(catalog, db, name).switchToBranch(branch);
            BatchWriteBuilder builder = table.newBatchWriteBuilder();
            try (BatchTableWrite write = builder.newWrite();
                    BatchTableCommit commit = builder.newCommit()) {
                writeAll(table, write, rowsJson);
                commit.commit(write.prepareCommit());
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /** All rows of a branch's latest snapshot, read by Java (a JSON list of encoded rows). */
    public static String readBranch(String warehouse, String db, String name, String branch)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name).switchToBranch(branch);
            RowType rowType = table.rowType();
            ArrayNode rows = MAPPER.createArrayNode();
            ReadBuilder builder = table.newReadBuilder();
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(encodeRow(row, rowType)));
            }
            return MAPPER.writeValueAsString(rows);
        }
    }
    // ------------------------------------------------------------------ end H5 orphan files

    // ------------------------------------------------------------------ ALTER TABLE options

    /**
     * Java's {@code Catalog.alterTable} with the changes [{"action": "setOption", "key", "value"}
     * | {"action": "removeOption", "key"}, ...]; returns {"schemaId": id} of the table after it,
     * or {"error": "ExceptionClass: message"} when Java refuses the change.
     */
    public static String alterTableOptions(
            String warehouse, String db, String name, String changesJson) throws Exception {
        List<org.apache.paimon.schema.SchemaChange> changes = new ArrayList<>();
        for (JsonNode change : MAPPER.readTree(changesJson)) {
            String key = change.get("key").asText();
            if ("setOption".equals(change.get("action").asText())) {
                changes.add(
                        org.apache.paimon.schema.SchemaChange.setOption(
                                key, change.get("value").asText()));
            } else {
                changes.add(org.apache.paimon.schema.SchemaChange.removeOption(key));
            }
        }
        ObjectNode out = MAPPER.createObjectNode();
        try (Catalog catalog = catalog(warehouse)) {
            try {
                catalog.alterTable(Identifier.create(db, name), changes, false);
            } catch (Exception e) {
                Throwable cause = e;
                while (cause.getCause() != null) {
                    cause = cause.getCause();
                }
                out.put("error", cause.getClass().getSimpleName() + ": " + cause.getMessage());
                return MAPPER.writeValueAsString(out);
            }
            out.put("schemaId", table(catalog, db, name).schema().id());
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * The table's current schema as Java loads it: {"id", "options", "primaryKeys", ...}, without
     * the "path" option Java's catalog adds at load.
     */
    public static String tableSchema(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            org.apache.paimon.schema.TableSchema schema = table(catalog, db, name).schema();
            ObjectNode out = MAPPER.createObjectNode();
            out.put("id", schema.id());
            ObjectNode options = out.putObject("options");
            schema.options().forEach((k, v) -> {
                if (!"path".equals(k)) {
                    options.put(k, v);
                }
            });
            ArrayNode primaryKeys = out.putArray("primaryKeys");
            schema.primaryKeys().forEach(primaryKeys::add);
            ArrayNode partitionKeys = out.putArray("partitionKeys");
            schema.partitionKeys().forEach(partitionKeys::add);
            return MAPPER.writeValueAsString(out);
        }
    }

    // ------------------------------------------------------------------ tags

    /**
     * Java's {@code createTag(tag, snapshotId, timeRetained)}: a tag file with tagCreateTime and
     * tagTimeRetained ({@code timeRetained} as TimeUtils.parseDuration reads it).
     */
    public static void createTagRetained(
            String warehouse, String db, String name, String tag, long id, String timeRetained)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            table(catalog, db, name)
                    .createTag(tag, id, org.apache.paimon.utils.TimeUtils.parseDuration(timeRetained));
        }
    }

    /**
     * Java's TagManager: {"names": allTagNames() as SHOW TAGS sorts them, "ids": tag name to its
     * snapshot id}.
     */
    public static String listTags(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            org.apache.paimon.utils.TagManager tags = table(catalog, db, name).tagManager();
            ObjectNode out = MAPPER.createObjectNode();
            ArrayNode names = out.putArray("names");
            List<String> sorted = new ArrayList<>(tags.allTagNames());
            Collections.sort(sorted);
            sorted.forEach(names::add);
            ObjectNode ids = out.putObject("ids");
            tags.tags().forEach((snapshot, tagNames) -> tagNames.forEach(t -> ids.put(t, snapshot.id())));
            return MAPPER.writeValueAsString(out);
        }
    }

    /** Java's {@code deleteTags(tags)}: comma-separated names, as DeleteTagProcedure passes them. */
    public static void deleteTags(String warehouse, String db, String name, String tags)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            table(catalog, db, name).deleteTags(tags);
        }
    }

    /**
     * Java's rollback as Spark's RollbackProcedure reads {@code version}: all digits is a
     * snapshot id ({@code rollbackTo(long)}), anything else a tag ({@code rollbackTo(String)}).
     */
    public static void rollbackTo(String warehouse, String db, String name, String version)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            if (!version.isEmpty() && version.chars().allMatch(Character::isDigit)) {
                table.rollbackTo(Long.parseLong(version));
            } else {
                table.rollbackTo(version);
            }
        }
    }

    /**
     * Rows of a system table ({@code t$snapshots}, {@code t$files}, ...) as Java's catalog
     * resolves the {@code $} name and its reader returns them; same JSON as readTable.
     */
    public static String readSystemTable(String warehouse, String db, String name)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            Table table = catalog.getTable(Identifier.create(db, name));
            RowType rowType = table.rowType();
            ObjectNode out = MAPPER.createObjectNode();
            ArrayNode fields = out.putArray("fields");
            ArrayNode types = out.putArray("types");
            for (DataField field : rowType.getFields()) {
                fields.add(field.name());
                types.add(MAPPER.readTree(JsonSerdeUtil.toJson(field.type())));
            }
            ArrayNode rows = out.putArray("rows");
            ReadBuilder builder = table.newReadBuilder();
            try (RecordReader<InternalRow> reader =
                    builder.newRead().createReader(builder.newScan().plan())) {
                reader.forEachRemaining(row -> rows.add(encodeRow(row, rowType)));
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    // ------------------------------------------------------------------ deletion vectors

    /**
     * What Spark's {@code DELETE FROM t WHERE field IN (values)} does to an append table with
     * deletion vectors in Java 1.4.2 (DeleteFromPaimonTableCommand with deletion vectors on):
     * every data file of the latest snapshot is read by itself without its vector, counting row
     * positions in the file; the positions of rows still visible (not in the file's current
     * vector) whose {@code field} equals one of {@code valuesJson} (a JSON list, canonical
     * encoding) go into a new vector per file; one BaseAppendDeleteFileMaintainer per partition
     * (unaware bucket) or per (partition, bucket) merges them with the old vectors and persists
     * the index files (PaimonSparkWriter.persistDeletionVectors), and one batch commit lands the
     * index changes. Nothing is committed when no row matches. Returns the latest snapshot id.
     */
    public static long deleteWhere(
            String warehouse, String db, String name, String field, String valuesJson)
            throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            if (!table.primaryKeys().isEmpty() || !table.coreOptions().deletionVectorsEnabled()) {
                throw new IllegalArgumentException(
                        name + ": deleteWhere needs an append table with deletion vectors");
            }
            org.apache.paimon.Snapshot snapshot = table.snapshotManager().latestSnapshot();
            if (snapshot == null) {
                return -1L;
            }
            RowType rowType = table.rowType();
            int index = rowType.getFieldIndex(field);
            if (index < 0) {
                throw new IllegalArgumentException(name + " has no field " + field);
            }
            DataType type = rowType.getTypeAt(index);
            java.util.Set<JsonNode> targets = new java.util.HashSet<>();
            for (JsonNode value : MAPPER.readTree(valuesJson)) {
                targets.add(encode(GenericRow.of(decodeValue(value, type)), 0, type));
            }
            boolean unaware = table.bucketMode() == BucketMode.BUCKET_UNAWARE;
            boolean bitmap64 = table.coreOptions().deletionVectorBitmap64();
            org.apache.paimon.index.IndexFileHandler handler =
                    table.store().newIndexFileHandler();
            Map<List<Object>, org.apache.paimon.deletionvectors.append.BaseAppendDeleteFileMaintainer>
                    maintainers = new LinkedHashMap<>();
            org.apache.paimon.table.source.TableRead read = table.newRead();
            for (org.apache.paimon.table.source.DataSplit split :
                    table.newSnapshotReader().withSnapshot(snapshot).read().dataSplits()) {
                List<org.apache.paimon.table.source.DeletionFile> deletionFiles =
                        split.deletionFiles().orElse(null);
                for (int i = 0; i < split.dataFiles().size(); i++) {
                    org.apache.paimon.io.DataFileMeta file = split.dataFiles().get(i);
                    org.apache.paimon.table.source.DeletionFile deletionFile =
                            deletionFiles == null ? null : deletionFiles.get(i);
                    org.apache.paimon.deletionvectors.DeletionVector current =
                            deletionFile == null
                                    ? null
                                    : org.apache.paimon.deletionvectors.DeletionVector.read(
                                            table.fileIO(), deletionFile);
                    org.apache.paimon.deletionvectors.DeletionVector vector =
                            bitmap64
                                    ? new org.apache.paimon.deletionvectors
                                            .Bitmap64DeletionVector()
                                    : new org.apache.paimon.deletionvectors
                                            .BitmapDeletionVector();
                    org.apache.paimon.table.source.DataSplit one =
                            org.apache.paimon.table.source.DataSplit.builder()
                                    .withSnapshot(split.snapshotId())
                                    .withPartition(split.partition())
                                    .withBucket(split.bucket())
                                    .withBucketPath(split.bucketPath())
                                    .withTotalBuckets(split.totalBuckets())
                                    .withDataFiles(Collections.singletonList(file))
                                    .isStreaming(false)
                                    .rawConvertible(true)
                                    .build();
                    long position = 0;
                    try (RecordReader<InternalRow> reader = read.createReader(one)) {
                        RecordReader.RecordIterator<InternalRow> batch;
                        while ((batch = reader.readBatch()) != null) {
                            InternalRow row;
                            while ((row = batch.next()) != null) {
                                if ((current == null || !current.isDeleted(position))
                                        && targets.contains(encode(row, index, type))) {
                                    vector.delete(position);
                                }
                                position++;
                            }
                            batch.releaseBatch();
                        }
                    }
                    if (position != file.rowCount()) {
                        throw new IllegalStateException(
                                file.fileName() + ": read " + position + " rows of "
                                        + file.rowCount());
                    }
                    if (vector.isEmpty()) {
                        continue;
                    }
                    int bucket = split.bucket();
                    org.apache.paimon.data.BinaryRow partition = split.partition();
                    maintainers
                            .computeIfAbsent(
                                    java.util.Arrays.asList(partition, bucket),
                                    k ->
                                            unaware
                                                    ? org.apache.paimon.deletionvectors.append
                                                            .BaseAppendDeleteFileMaintainer
                                                            .forUnawareAppend(
                                                                    handler, snapshot, partition)
                                                    : org.apache.paimon.deletionvectors.append
                                                            .BaseAppendDeleteFileMaintainer
                                                            .forBucketedAppend(
                                                                    handler,
                                                                    snapshot,
                                                                    partition,
                                                                    bucket))
                            .notifyNewDeletionVector(file.fileName(), vector);
                }
            }
            if (maintainers.isEmpty()) {
                return snapshot.id();
            }
            List<CommitMessage> messages = new ArrayList<>();
            for (org.apache.paimon.deletionvectors.append.BaseAppendDeleteFileMaintainer m :
                    maintainers.values()) {
                List<org.apache.paimon.index.IndexFileMeta> added = new ArrayList<>();
                List<org.apache.paimon.index.IndexFileMeta> deleted = new ArrayList<>();
                for (org.apache.paimon.manifest.IndexManifestEntry e : m.persist()) {
                    (e.kind() == org.apache.paimon.manifest.FileKind.ADD ? added : deleted)
                            .add(e.indexFile());
                }
                messages.add(
                        new org.apache.paimon.table.sink.CommitMessageImpl(
                                m.getPartition(),
                                m.getBucket(),
                                null,
                                new org.apache.paimon.io.DataIncrement(
                                        Collections.emptyList(),
                                        Collections.emptyList(),
                                        Collections.emptyList(),
                                        added,
                                        deleted),
                                org.apache.paimon.io.CompactIncrement.emptyIncrement()));
            }
            try (BatchTableCommit commit = table.newBatchWriteBuilder().newCommit()) {
                commit.commit(messages);
            }
            Long id = table.snapshotManager().latestSnapshotId();
            return id == null ? -1L : id;
        }
    }

    /**
     * The latest snapshot's DELETION_VECTORS index manifest entries and data files: {"snapshot_id",
     * "entries": [{"partition": [values], "partition_hex": BinaryRow bytes, "bucket", "file_name",
     * "path", "file_size", "row_count", "external_path", "ranges": [{"data_file", "offset",
     * "length", "cardinality"}] in the file's order, "vectors": {data file: [deleted positions as
     * readAllDeletionVectors reads them]}}], "files": [{"partition", "bucket", "file_name",
     * "level", "row_count"}]}. Empty lists before the first snapshot.
     */
    public static String dvIndex(String warehouse, String db, String name) throws Exception {
        try (Catalog catalog = catalog(warehouse)) {
            FileStoreTable table = table(catalog, db, name);
            RowType partitionType = table.schema().logicalPartitionType();
            org.apache.paimon.Snapshot snapshot = table.snapshotManager().latestSnapshot();
            ObjectNode out = MAPPER.createObjectNode();
            ArrayNode entries = out.putArray("entries");
            ArrayNode files = out.putArray("files");
            if (snapshot == null) {
                out.putNull("snapshot_id");
                return MAPPER.writeValueAsString(out);
            }
            out.put("snapshot_id", snapshot.id());
            Map<String, Long> rowCounts = new LinkedHashMap<>();
            for (org.apache.paimon.manifest.ManifestEntry e :
                    table.store().newScan().withSnapshot(snapshot).plan().files()) {
                ObjectNode node = files.addObject();
                node.set("partition", encodeRow(e.partition(), partitionType));
                node.put("bucket", e.bucket());
                node.put("file_name", e.file().fileName());
                node.put("level", e.file().level());
                node.put("row_count", e.file().rowCount());
                rowCounts.put(e.file().fileName(), e.file().rowCount());
            }
            org.apache.paimon.index.IndexFileHandler handler =
                    table.store().newIndexFileHandler();
            for (org.apache.paimon.manifest.IndexManifestEntry e :
                    handler.scan(
                            snapshot,
                            org.apache.paimon.deletionvectors.DeletionVectorsIndexFile
                                    .DELETION_VECTORS_INDEX)) {
                org.apache.paimon.index.IndexFileMeta meta = e.indexFile();
                ObjectNode node = entries.addObject();
                node.set("partition", encodeRow(e.partition(), partitionType));
                node.put("partition_hex", hex(e.partition().toBytes()));
                node.put("bucket", e.bucket());
                node.put("file_name", meta.fileName());
                node.put("path", handler.filePath(e).toString());
                node.put("file_size", meta.fileSize());
                node.put("row_count", meta.rowCount());
                node.put("external_path", meta.externalPath());
                ArrayNode ranges = node.putArray("ranges");
                for (org.apache.paimon.index.DeletionVectorMeta range : meta.dvRanges().values()) {
                    ObjectNode r = ranges.addObject();
                    r.put("data_file", range.dataFileName());
                    r.put("offset", range.offset());
                    r.put("length", range.length());
                    r.put("cardinality", range.cardinality());
                }
                ObjectNode vectors = node.putObject("vectors");
                Map<String, org.apache.paimon.deletionvectors.DeletionVector> read =
                        handler.readAllDeletionVectors(e);
                for (String dataFile : meta.dvRanges().keySet()) {
                    vectors.set(dataFile, positions(read.get(dataFile), rowCounts.get(dataFile)));
                }
            }
            return MAPPER.writeValueAsString(out);
        }
    }

    /**
     * A vector's deleted positions, ascending: a 32-bit vector's bitmap iterated, a 64-bit one
     * (no public iterator) probed up to its data file's row count, and checked against its
     * cardinality.
     */
    private static ArrayNode positions(
            org.apache.paimon.deletionvectors.DeletionVector vector, Long rowCount) {
        ArrayNode out = MAPPER.createArrayNode();
        if (vector instanceof org.apache.paimon.deletionvectors.BitmapDeletionVector) {
            Iterator<Integer> it =
                    ((org.apache.paimon.deletionvectors.BitmapDeletionVector) vector)
                            .get()
                            .iterator();
            while (it.hasNext()) {
                out.add(Integer.toUnsignedLong(it.next()));
            }
        } else {
            long limit = rowCount == null ? 0L : rowCount;
            for (long p = 0; p < limit; p++) {
                if (vector.isDeleted(p)) {
                    out.add(p);
                }
            }
        }
        if (out.size() != vector.getCardinality()) {
            throw new IllegalStateException(
                    "vector of " + vector.getCardinality() + " positions, " + out.size()
                            + " found within its data file's " + rowCount + " rows");
        }
        return out;
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            out.append(String.format("%02x", b & 0xff));
        }
        return out.toString();
    }
}
