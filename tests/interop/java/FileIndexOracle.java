/*
 * Java Paimon's file indexes, for tests/interop/test_file_index_java.py through
 * tests/interop/file_index_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.catalog.Catalog;
import org.apache.paimon.fileindex.FileIndexPredicate;
import org.apache.paimon.fileindex.FileIndexWriter;
import org.apache.paimon.fileindex.FileIndexer;
import org.apache.paimon.fs.Path;
import org.apache.paimon.io.DataFileMeta;
import org.apache.paimon.io.DataFilePathFactory;
import org.apache.paimon.manifest.ManifestEntry;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.Predicate;
import org.apache.paimon.predicate.PredicateBuilder;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.paimon.table.FileStoreTable;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;
import org.apache.paimon.types.RowType;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Java Paimon's file indexes for the interop tests of issue 38: the bytes an index writer
 * produces for given values, and, for every data file of a table's latest snapshot, whether
 * Java's own FileIndexPredicate over that file's index (embedded in the manifest or in its
 * separate {@code .index} file) keeps it for a predicate.
 */
public final class FileIndexOracle {

    private FileIndexOracle() {}

    /**
     * Hex of the index {@code indexType} built over {@code valuesJson} (wire-encoded values of
     * the Paimon type {@code typeJson}, nulls included) with the index's {@code optionsJson}.
     */
    public static String indexBytes(
            String indexType, String typeJson, String optionsJson, String valuesJson)
            throws Exception {
        DataType type = DataTypeJsonParser.parseDataType(PaimonOracle.MAPPER.readTree(typeJson));
        Options options = new Options();
        Iterator<Map.Entry<String, JsonNode>> it =
                PaimonOracle.MAPPER.readTree(optionsJson).fields();
        while (it.hasNext()) {
            Map.Entry<String, JsonNode> e = it.next();
            options.set(e.getKey(), e.getValue().asText());
        }
        FileIndexWriter writer = FileIndexer.create(indexType, type, options).createWriter();
        for (JsonNode v : PaimonOracle.MAPPER.readTree(valuesJson)) {
            writer.writeRecord(PaimonOracle.decodeValue(v, type));
        }
        return hex(writer.serializedBytes());
    }

    /**
     * For each data file of the latest snapshot: {"file": {"remain": bool, "index":
     * "embedded"|"file"|"none", "extra_files": [...]}}, {@code remain} being Java's
     * FileIndexPredicate verdict for the AND of the leaves in {@code predicateJson}: a list of
     * [op, field, [literals]] (op: equal, notEqual, lessThan, lessOrEqual, greaterThan,
     * greaterOrEqual, in, notIn, isNull, isNotNull, between).
     */
    public static String decisions(String warehouse, String db, String name, String predicateJson)
            throws Exception {
        try (Catalog catalog = PaimonOracle.catalog(warehouse)) {
            FileStoreTable table = PaimonOracle.table(catalog, db, name);
            ObjectNode out = PaimonOracle.MAPPER.createObjectNode();
            for (ManifestEntry e : table.store().newScan().plan().files()) {
                DataFileMeta file = e.file();
                RowType rowType = table.schemaManager().schema(file.schemaId()).logicalRowType();
                Predicate predicate = predicate(rowType, predicateJson);
                ObjectNode node = out.putObject(file.fileName());
                node.putPOJO("extra_files", file.extraFiles());
                byte[] embedded = file.embeddedIndex();
                List<String> indexFiles = new ArrayList<>();
                for (String x : file.extraFiles()) {
                    if (x.endsWith(DataFilePathFactory.INDEX_PATH_SUFFIX)) {
                        indexFiles.add(x);
                    }
                }
                if (embedded != null) {
                    node.put("index", "embedded");
                    try (FileIndexPredicate p = new FileIndexPredicate(embedded, rowType)) {
                        node.put("remain", p.evaluate(predicate).remain());
                    }
                } else if (!indexFiles.isEmpty()) {
                    node.put("index", "file");
                    DataFilePathFactory paths =
                            table.store()
                                    .pathFactory()
                                    .createDataFilePathFactory(e.partition(), e.bucket());
                    Path path = paths.toAlignedPath(indexFiles.get(0), file);
                    try (FileIndexPredicate p =
                            new FileIndexPredicate(path, table.fileIO(), rowType)) {
                        node.put("remain", p.evaluate(predicate).remain());
                    }
                } else {
                    node.put("index", "none");
                    node.put("remain", true);
                }
            }
            return PaimonOracle.MAPPER.writeValueAsString(out);
        }
    }

    private static Predicate predicate(RowType rowType, String predicateJson) throws Exception {
        PredicateBuilder pb = new PredicateBuilder(rowType);
        List<Predicate> leaves = new ArrayList<>();
        for (JsonNode leaf : PaimonOracle.MAPPER.readTree(predicateJson)) {
            String op = leaf.get(0).asText();
            int index = rowType.getFieldIndex(leaf.get(1).asText());
            DataType type = rowType.getTypeAt(index);
            List<Object> literals = new ArrayList<>();
            for (JsonNode v : leaf.get(2)) {
                literals.add(PaimonOracle.decodeValue(v, type));
            }
            switch (op) {
                case "equal":
                    leaves.add(pb.equal(index, literals.get(0)));
                    break;
                case "notEqual":
                    leaves.add(pb.notEqual(index, literals.get(0)));
                    break;
                case "lessThan":
                    leaves.add(pb.lessThan(index, literals.get(0)));
                    break;
                case "lessOrEqual":
                    leaves.add(pb.lessOrEqual(index, literals.get(0)));
                    break;
                case "greaterThan":
                    leaves.add(pb.greaterThan(index, literals.get(0)));
                    break;
                case "greaterOrEqual":
                    leaves.add(pb.greaterOrEqual(index, literals.get(0)));
                    break;
                case "in":
                    leaves.add(pb.in(index, literals));
                    break;
                case "notIn":
                    leaves.add(pb.notIn(index, literals));
                    break;
                case "isNull":
                    leaves.add(pb.isNull(index));
                    break;
                case "isNotNull":
                    leaves.add(pb.isNotNull(index));
                    break;
                case "between":
                    leaves.add(pb.between(index, literals.get(0), literals.get(1)));
                    break;
                default:
                    throw new IllegalArgumentException("unknown op " + op);
            }
        }
        return PredicateBuilder.and(leaves);
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.toString();
    }
}
