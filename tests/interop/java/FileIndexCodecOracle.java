/*
 * Golden bytes and verdicts of Java Paimon's file index codecs (bitmap, bsi, range-bitmap, and
 * any other FileIndexerFactory identifier), one column at a time, for
 * tests/interop/test_file_index_codecs_java.py.
 */

package paimonoracle;

import org.apache.paimon.fileindex.FileIndexReader;
import org.apache.paimon.fileindex.FileIndexWriter;
import org.apache.paimon.fileindex.FileIndexer;
import org.apache.paimon.fs.ByteArraySeekableStream;
import org.apache.paimon.options.Options;
import org.apache.paimon.predicate.FieldRef;
import org.apache.paimon.shade.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.paimon.types.DataType;
import org.apache.paimon.types.DataTypeJsonParser;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

public final class FileIndexCodecOracle {

    private FileIndexCodecOracle() {}

    private static DataType type(String typeJson) throws Exception {
        return DataTypeJsonParser.parseDataType(PaimonOracle.MAPPER.readTree(typeJson));
    }

    private static Options options(String optionsJson) throws Exception {
        Options options = new Options();
        PaimonOracle.MAPPER
                .readTree(optionsJson)
                .fields()
                .forEachRemaining(e -> options.set(e.getKey(), e.getValue().asText()));
        return options;
    }

    /**
     * Java's serialized index of one column: {@code valuesJson} is a JSON list decoded as
     * PaimonOracle.decodeValue does (timestamps as epoch nanos, decimals as text). Base64; or
     * "ERROR: message" when Java refuses the type, the options or the values.
     */
    public static String build(
            String indexType, String typeJson, String optionsJson, String valuesJson)
            throws Exception {
        DataType type = type(typeJson);
        try {
            FileIndexWriter writer =
                    FileIndexer.create(indexType, type, options(optionsJson)).createWriter();
            for (JsonNode v : PaimonOracle.MAPPER.readTree(valuesJson)) {
                writer.writeRecord(PaimonOracle.decodeValue(v, type));
            }
            return Base64.getEncoder().encodeToString(writer.serializedBytes());
        } catch (RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            return "ERROR: " + root;
        }
    }

    /**
     * Whether Java's reader keeps the file (FileIndexResult.remain()) for {@code op} on the
     * column: equal, not_equal, in, not_in, less_than, less_or_equal, greater_than,
     * greater_or_equal, is_null, is_not_null, between; {@code literalsJson} a JSON list.
     */
    public static boolean remain(
            String indexType,
            String typeJson,
            String optionsJson,
            String base64,
            String op,
            String literalsJson)
            throws Exception {
        DataType type = type(typeJson);
        byte[] bytes = Base64.getDecoder().decode(base64);
        FileIndexReader reader =
                FileIndexer.create(indexType, type, options(optionsJson))
                        .createReader(new ByteArraySeekableStream(bytes), 0, bytes.length);
        FieldRef ref = new FieldRef(0, "f", type);
        List<Object> literals = new ArrayList<>();
        for (JsonNode v : PaimonOracle.MAPPER.readTree(literalsJson)) {
            literals.add(PaimonOracle.decodeValue(v, type));
        }
        switch (op) {
            case "equal":
                return reader.visitEqual(ref, literals.get(0)).remain();
            case "not_equal":
                return reader.visitNotEqual(ref, literals.get(0)).remain();
            case "in":
                return reader.visitIn(ref, literals).remain();
            case "not_in":
                return reader.visitNotIn(ref, literals).remain();
            case "less_than":
                return reader.visitLessThan(ref, literals.get(0)).remain();
            case "less_or_equal":
                return reader.visitLessOrEqual(ref, literals.get(0)).remain();
            case "greater_than":
                return reader.visitGreaterThan(ref, literals.get(0)).remain();
            case "greater_or_equal":
                return reader.visitGreaterOrEqual(ref, literals.get(0)).remain();
            case "is_null":
                return reader.visitIsNull(ref).remain();
            case "is_not_null":
                return reader.visitIsNotNull(ref).remain();
            case "between":
                return reader.visitBetween(ref, literals.get(0), literals.get(1)).remain();
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }
}
