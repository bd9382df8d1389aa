package dev.radixserve.model.graph;

import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.WeightsDigest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.security.MessageDigest;
import java.util.HexFormat;

/**
 * What the data of one external initializer is made from at session creation: a checkpoint
 * tensor as fp32, one part of that tensor quantized for MatMulNBits, or a table computed here.
 */
public sealed interface WeightSource {

  /** The checkpoint tensor this comes from (a {@link Table}: its own name). */
  String tensor();

  /** The tensor widened to fp32 (or wrapped as it is when it already is fp32). */
  record Dense(String tensor) implements WeightSource {}

  /**
   * An fp32 table this code computes rather than reads from the checkpoint (the rotary cos/sin
   * tables), written into the weights file like the checkpoint's tensors: ONNX Runtime maps it,
   * and only the pages of the rows a step reads become resident, where an inline graph constant
   * was copied into the session whole (2 × 16 MiB for Llama-3.2-1B's 131,072 positions, 2 × 32
   * MiB at a head of 128). {@code tensor} is the initializer's own name; {@code digest} names the
   * values, for the weights cache's key and for sharing equal tables in the file (so neither
   * {@link #toString} nor equality reads the array).
   */
  record Table(String tensor, String digest, float[] values) implements WeightSource {

    /** Floats digested at a time. */
    private static final int DIGEST_CHUNK = 16_384;

    /** A table of {@code values}, its digest computed here. */
    public static Table of(String name, float[] values) {
      MessageDigest sha = WeightsDigest.sha256();
      // a chunk at a time: a copy of the whole table (16 MiB on Llama-3.2-1B) would add to the
      // load's heap what moving the tables out of the graph took off it
      ByteBuffer chunk = ByteBuffer.allocate(DIGEST_CHUNK * Float.BYTES)
          .order(ByteOrder.LITTLE_ENDIAN);
      for (int from = 0; from < values.length; from += DIGEST_CHUNK) {
        int n = Math.min(DIGEST_CHUNK, values.length - from);
        chunk.clear();
        chunk.asFloatBuffer().put(values, from, n);
        chunk.limit(n * Float.BYTES);
        sha.update(chunk);
      }
      return new Table(name, HexFormat.of().formatHex(sha.digest(), 0, 16), values);
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Table t && t.tensor.equals(tensor) && t.digest.equals(digest);
    }

    @Override
    public int hashCode() {
      return tensor.hashCode() * 31 + digest.hashCode();
    }

    @Override
    public String toString() {
      return "Table[" + digest + ", " + values.length + "]";
    }
  }

  /**
   * One of the MatMulNBits inputs of {@code tensor} quantized under {@code spec}.
   *
   * @param outputOrder null, or (GPTQ act-order) the module whose input order the weight's
   *     outputs are written in ({@link ActOrder#outputOrders})
   */
  record Quantized(String tensor, WeightLayout layout, QuantSpec spec, Part part,
      String outputOrder) implements WeightSource {

    public Quantized(String tensor, WeightLayout layout, QuantSpec spec, Part part) {
      this(tensor, layout, spec, part, null);
    }
  }

  /**
   * MatMulNBits' inputs 1 (B), 2 (scales) and 3 (zero_points); for a GPTQ act-order layer the
   * order its inputs are gathered into first (int64 [K]); for a GGUF Q4_K layer the offset per
   * block ([K/32, N], {@link dev.radixserve.model.quant.OffsetWeight}).
   */
  enum Part {
    WEIGHT,
    SCALES,
    ZERO_POINTS,
    INPUT_ORDER,
    OFFSETS
  }
}
