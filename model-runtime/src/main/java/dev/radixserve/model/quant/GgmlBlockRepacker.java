package dev.radixserve.model.quant;

import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * A GGUF projection in Q8_0 or Q4_0 blocks written into MatMulNBits' layout ({@link
 * QuantizedWeight}) straight from the file's mapped blocks, an output row at a time, without
 * changing one number: both are 32 symmetric codes and one fp16 scale a block.
 *
 * <pre>
 *   Q8_0  fp16 d, int8 qs[32]   w[j] = d · qs[j]         → code qs[j] + 128, zero point 128
 *   Q4_0  fp16 d, u8 qs[16]     w[j] = d · ((qs[j] &amp; 15) − 8), w[j+16] = d · ((qs[j] &gt;&gt; 4) − 8)
 *                                                        → byte j: codes 2j (low), 2j+1 (high);
 *                                                          zero point 8
 * </pre>
 *
 * No other copy of the layer is made: the load keeps the file's blocks in its mapping, and
 * this runs once per tensor while the session's weights file is written.
 */
public final class GgmlBlockRepacker {

  /** ggml's block: 32 weights along K. */
  public static final int BLOCK = 32;

  private static final ValueLayout.OfShort U16 =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  /**
   * The decoder of a tensor whose rows lie in Q8_0 or Q4_0 blocks: where the K weights of each
   * output (the tensor's numbering, after any reordering of the file's) start in its data,
   * whichever layout its floats are read in.
   */
  public interface BlockRows {

    /** 8 (Q8_0) or 4 (Q4_0). */
    int bits();

    /** Byte offset of output {@code row}'s first block in the tensor's data. */
    long rowOffset(long row);
  }

  private GgmlBlockRepacker() {}

  /**
   * {@code weight} (its decoder a {@link BlockRows}, its shape that of a float weight stored in
   * {@code layout}: GPT-2's Conv1D reads the file's rows as [K, N]) as MatMulNBits' blocks of 32.
   */
  public static QuantizedWeight repack(Tensor weight, WeightLayout layout) {
    return repack(weight, layout, RowRanges.MIN_WEIGHTS);
  }

  /** As above, its outputs made in ranges of {@code rangeWeights} (tests). */
  public static QuantizedWeight repack(Tensor weight, WeightLayout layout, long rangeWeights) {
    if (!(weight.decoder() instanceof BlockRows rows)) {
      throw new IllegalStateException(weight.name() + " is not stored in Q8_0/Q4_0 blocks");
    }
    long[] kn = layout.kn(weight.shape());
    int k = Math.toIntExact(kn[0]);
    int n = Math.toIntExact(kn[1]);
    int bits = rows.bits();
    int groups = k / BLOCK;
    int blob = BLOCK * bits / 8;
    int typeSize = 2 + blob;
    MemorySegment data = weight.data();
    byte[] packed = new byte[n * groups * blob];
    float[] scales = new float[n * groups];
    RowRanges.Range outputs = (from, to) -> {
      byte[] block = new byte[blob];
      for (int out = from; out < to; out++) {
        long rowAt = rows.rowOffset(out);
        for (int g = 0; g < groups; g++) {
          long at = rowAt + (long) g * typeSize;
          int dst = (out * groups + g) * blob;
          scales[out * groups + g] = Float.float16ToFloat(data.get(U16, at));
          MemorySegment.copy(data, ValueLayout.JAVA_BYTE, at + 2, block, 0, blob);
          if (bits == 8) {
            for (int j = 0; j < BLOCK; j++) {
              packed[dst + j] = (byte) (block[j] + 128);
            }
          } else {
            for (int j = 0; j < BLOCK / 2; j++) {
              packed[dst + j] = (byte) (code4(block, 2 * j) | code4(block, 2 * j + 1) << 4);
            }
          }
        }
      }
    };
    RowRanges.forEach(weight, n, k, rangeWeights, outputs);
    return new QuantizedWeight(k, n, bits, BLOCK, packed, scales, null);
  }

  /** Q4_0's code of weight j of a block: low nibbles hold weights 0..15, high 16..31. */
  private static int code4(byte[] qs, int j) {
    int b = qs[j & 15] & 0xff;
    return j < 16 ? b & 15 : b >>> 4;
  }
}
