package dev.radixserve.model.quant;

/**
 * A weight of K inputs and N outputs in {@code com.microsoft.MatMulNBits}' layout:
 *
 * <pre>
 *   packed       uint8 [N, kBlocks, blob]   blob = blockSize·bits/8; output row n's weights along
 *                                           K, block after block; 4 bits: element 2j in the low
 *                                           nibble of byte j, element 2j+1 in the high nibble
 *   scales       float [N, kBlocks]
 *   zeroPoints   uint8 [N, zpRow]           zpRow = ceil(kBlocks·bits/8), packed like B; absent:
 *                                           every zero point is 2^(bits-1) (8 for int4, 128 for int8)
 * </pre>
 *
 * and w(k, n) ≈ (q(k, n) − zp(n, k / blockSize)) · scale(n, k / blockSize).
 */
public record QuantizedWeight(int k, int n, int bits, int blockSize, byte[] packed, float[] scales,
    byte[] zeroPoints) {

  public QuantizedWeight {
    if (bits != 4 && bits != 8) {
      throw new IllegalArgumentException("bits must be 4 or 8, got " + bits);
    }
    if (k % blockSize != 0) {
      throw new IllegalArgumentException("K " + k + " is not a multiple of block " + blockSize);
    }
    int blocks = k / blockSize;
    require(packed.length == (long) n * blocks * (blockSize * bits / 8), "packed", packed.length);
    require(scales.length == (long) n * blocks, "scales", scales.length);
    require(zeroPoints == null || zeroPoints.length == (long) n * zeroPointRow(blocks, bits),
        "zero points", zeroPoints == null ? 0 : zeroPoints.length);
  }

  private static void require(boolean ok, String what, int length) {
    if (!ok) {
      throw new IllegalArgumentException(what + " have the wrong length " + length);
    }
  }

  static int zeroPointRow(int kBlocks, int bits) {
    return (kBlocks * bits + 7) / 8;
  }

  public int kBlocks() {
    return k / blockSize;
  }

  /** Bytes of one block's packed weights. */
  public int blobSize() {
    return blockSize * bits / 8;
  }

  public long[] packedShape() {
    return new long[] {n, kBlocks(), blobSize()};
  }

  public long[] scalesShape() {
    return new long[] {n, kBlocks()};
  }

  public long[] zeroPointsShape() {
    return new long[] {n, zeroPointRow(kBlocks(), bits)};
  }

  /** The stored code of weight (k, n), 0 .. 2^bits − 1. */
  public int code(int kk, int nn) {
    int block = kk / blockSize;
    int j = kk % blockSize;
    int at = (nn * kBlocks() + block) * blobSize();
    if (bits == 8) {
      return packed[at + j] & 0xff;
    }
    return (packed[at + j / 2] >>> (4 * (j & 1))) & 0xf;
  }

  /** Zero point of block {@code block} of output row {@code nn}. */
  public int zeroPoint(int nn, int block) {
    if (zeroPoints == null) {
      return 1 << (bits - 1);
    }
    int row = nn * zeroPointRow(kBlocks(), bits);
    if (bits == 8) {
      return zeroPoints[row + block] & 0xff;
    }
    return (zeroPoints[row + block / 2] >>> (4 * (block & 1))) & 0xf;
  }

  public float scale(int nn, int block) {
    return scales[nn * kBlocks() + block];
  }

  /** The weight as MatMulNBits reads it back. */
  public float dequantized(int kk, int nn) {
    int block = kk / blockSize;
    return (code(kk, nn) - zeroPoint(nn, block)) * scale(nn, block);
  }

  /**
   * This weight with its outputs reordered: output i of the result is output {@code order[i]}
   * of this one (packed rows, scales and zero points move together).
   */
  public QuantizedWeight outputsIn(int[] order) {
    if (order.length != n) {
      throw new IllegalArgumentException(order.length + " outputs for " + n);
    }
    int row = kBlocks() * blobSize();
    int zpRow = zeroPointRow(kBlocks(), bits);
    byte[] p = new byte[packed.length];
    float[] s = new float[scales.length];
    byte[] z = zeroPoints == null ? null : new byte[zeroPoints.length];
    for (int i = 0; i < n; i++) {
      System.arraycopy(packed, order[i] * row, p, i * row, row);
      System.arraycopy(scales, order[i] * kBlocks(), s, i * kBlocks(), kBlocks());
      if (z != null) {
        System.arraycopy(zeroPoints, order[i] * zpRow, z, i * zpRow, zpRow);
      }
    }
    return new QuantizedWeight(k, n, bits, blockSize, p, s, z);
  }

  /** Bytes of the three tensors together (what a step reads instead of the fp32 weight). */
  public long bytes() {
    return packed.length + 4L * scales.length + (zeroPoints == null ? 0 : zeroPoints.length);
  }
}
