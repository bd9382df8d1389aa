package dev.radixserve.model.quant;

import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.MemorySegment;

/**
 * A GGUF projection in Q4_K blocks served on the file's own 4-bit codes, nothing rounded again.
 * Q4_K holds super-blocks of 256 weights, eight sub-blocks of 32 with a 6-bit scale {@code sc}
 * and a 6-bit min {@code m} each, and an fp16 {@code d} and {@code dmin} per super-block (ggml's
 * {@code dequantize_row_q4_K}):
 *
 * <pre>
 *   w = d·sc·q − dmin·m                       q in 0..15
 *     = s·(q − 8) + o,   s = d·sc,  o = 8·s − dmin·m
 * </pre>
 *
 * The sub-blocks are MatMulNBits' blocks of 32: {@code (q − 8)·s} is its symmetric int4 block
 * with the default zero point 8 (no zero-point input; ONNX Runtime pre-packs it as it does the
 * file's Q4_0 blocks), and the offset, a fraction of the scale no integer zero point can carry,
 * is one float per block and output ({@link OffsetWeight}), which the graph adds back. {@code s} is
 * ggml's own float product; {@code s·(q − 8) + o} differs from ggml's {@code d·sc·q − dmin·m}
 * only where {@code o} rounds (bit for bit on the fixtures, GgufQ4KBlocksTest).
 */
public final class Q4KRepacker {

  /** Weights per sub-block: MatMulNBits' block size for these weights. */
  public static final int BLOCK = 32;
  /** The zero point MatMulNBits assumes for int4 without a zero-point input. */
  static final int ZERO = 8;

  /**
   * The decoder of a tensor whose rows lie in Q4_K blocks: one output's K weights at a time,
   * rows numbered as the tensor's (after any reordering of the file's).
   */
  public interface Rows {

    /**
     * Output {@code n}'s K weights in the tensor's {@code data}: the codes into {@code codes}
     * (K / 2 bytes, MatMulNBits' order: weight 2j in the low nibble of byte j, 2j + 1 in the
     * high one), and per block of 32 its scale {@code d·sc} into {@code scales} and its minimum
     * {@code dmin·m} into {@code mins} (K / 32 each), both as ggml computes them.
     */
    void readQ4K(MemorySegment data, long n, byte[] codes, float[] scales, float[] mins);
  }

  private Q4KRepacker() {}

  /** {@code weight} (its decoder {@link Rows}, stored in {@code layout}) as codes + offsets. */
  public static OffsetWeight repack(Tensor weight, WeightLayout layout) {
    if (!(weight.decoder() instanceof Rows rows)) {
      throw new IllegalStateException(weight.name() + " is not stored in Q4_K blocks");
    }
    long[] kn = layout.kn(weight.shape());
    int k = Math.toIntExact(kn[0]);
    int n = Math.toIntExact(kn[1]);
    int blocks = k / BLOCK;
    int blob = BLOCK / 2;
    byte[] packed = new byte[n * blocks * blob];
    float[] scales = new float[n * blocks];
    float[] offsets = new float[blocks * n];
    byte[] codes = new byte[blocks * blob];
    float[] rowScales = new float[blocks];
    float[] mins = new float[blocks];
    for (int out = 0; out < n; out++) {
      rows.readQ4K(weight.data(), out, codes, rowScales, mins);
      System.arraycopy(codes, 0, packed, out * blocks * blob, codes.length);
      System.arraycopy(rowScales, 0, scales, out * blocks, blocks);
      for (int b = 0; b < blocks; b++) {
        offsets[b * n + out] = ZERO * rowScales[b] - mins[b]; // 8·s is exact
      }
    }
    return new OffsetWeight(new QuantizedWeight(k, n, 4, BLOCK, packed, scales, null), offsets);
  }
}
