/*
 * Java Paimon's sketch and bitmap helpers behind the aggregate functions hll_sketch,
 * theta_sketch, rbm32 and rbm64 (HllSketchUtil, ThetaSketch, RoaringBitmap32, RoaringBitmap64),
 * for tests/interop/test_aggregate_functions_java.py through tests/interop/agg_oracle.py.
 */

package paimonoracle;

import org.apache.paimon.utils.HllSketchUtil;
import org.apache.paimon.utils.RoaringBitmap32;
import org.apache.paimon.utils.RoaringBitmap64;
import org.apache.paimon.utils.ThetaSketch;

import java.nio.ByteBuffer;
import java.util.Base64;

/** Static entry points taking comma-separated values or base64 and answering base64. */
public final class AggOracle {

    private AggOracle() {}

    private static int[] ints(String csv) {
        if (csv.isEmpty()) {
            return new int[0];
        }
        String[] parts = csv.split(",");
        int[] out = new int[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Integer.parseInt(parts[i].trim());
        }
        return out;
    }

    private static long[] longs(String csv) {
        if (csv.isEmpty()) {
            return new long[0];
        }
        String[] parts = csv.split(",");
        long[] out = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            out[i] = Long.parseLong(parts[i].trim());
        }
        return out;
    }

    private static String b64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    private static byte[] raw(String b64) {
        return Base64.getDecoder().decode(b64);
    }

    /** HllSketchUtil.sketchOf: a default HllSketch (lgK 12, HLL_4) of these ints, compact. */
    public static String hllOf(String csv) {
        return b64(HllSketchUtil.sketchOf(ints(csv)));
    }

    /** FieldHllSketchAgg.agg(acc, input). */
    public static String hllUnion(String acc, String input) {
        return b64(HllSketchUtil.union(raw(acc), raw(input)));
    }

    /** ThetaSketch.sketchOf: a default UpdateSketch of these ints, compacted. */
    public static String thetaOf(String csv) {
        return b64(ThetaSketch.sketchOf(ints(csv)));
    }

    /** FieldThetaSketchAgg.agg(acc, input). */
    public static String thetaUnion(String acc, String input) {
        return b64(ThetaSketch.union(raw(acc), raw(input)));
    }

    /** RoaringBitmap32.bitmapOf(values).serialize(). */
    public static String rbm32Of(String csv) {
        return b64(RoaringBitmap32.bitmapOf(ints(csv)).serialize());
    }

    /** FieldRoaringBitmap32Agg.agg(acc, input). */
    public static String rbm32Union(String acc, String input) throws Exception {
        RoaringBitmap32 a = new RoaringBitmap32();
        RoaringBitmap32 b = new RoaringBitmap32();
        a.deserialize(ByteBuffer.wrap(raw(acc)));
        b.deserialize(ByteBuffer.wrap(raw(input)));
        a.or(b);
        return b64(a.serialize());
    }

    /** RoaringBitmap64.bitmapOf(values).serialize(). */
    public static String rbm64Of(String csv) throws Exception {
        return b64(RoaringBitmap64.bitmapOf(longs(csv)).serialize());
    }

    /** FieldRoaringBitmap64Agg.agg(acc, input). */
    public static String rbm64Union(String acc, String input) throws Exception {
        RoaringBitmap64 a = new RoaringBitmap64();
        RoaringBitmap64 b = new RoaringBitmap64();
        a.deserialize(raw(acc));
        b.deserialize(raw(input));
        a.or(b);
        return b64(a.serialize());
    }
}
