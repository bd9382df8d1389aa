package dev.radixserve.model.quant;

/**
 * A weight served as MatMulNBits' symmetric int4 blocks plus one float offset per block and
 * output, which the graph adds back as {@code BlockSums(x) · offsets} ({@code Linear}):
 *
 * <pre>
 *   codes     int4 blocks of 32, no zero points (the default 8): (q − 8) · s
 *   offsets   float [kBlocks, N]   the layout the [T, kBlocks] block sums multiply
 * </pre>
 *
 * and w(k, n) = (q(k, n) − 8) · s(n, k / 32) + o(k / 32, n). A GGUF Q4_K block ({@code d·sc·q −
 * dmin·m}) is exactly this with its own codes ({@link Q4KRepacker}).
 */
public record OffsetWeight(QuantizedWeight codes, float[] offsets) {

  public OffsetWeight {
    if (codes.bits() != 4 || codes.zeroPoints() != null) {
      throw new IllegalArgumentException("offsets go with symmetric int4 codes, not "
          + codes.bits() + "-bit" + (codes.zeroPoints() != null ? " with zero points" : ""));
    }
    if (offsets.length != (long) codes.kBlocks() * codes.n()) {
      throw new IllegalArgumentException("offsets have the wrong length " + offsets.length);
    }
  }

  /** The offset of block {@code block} (along K) of output {@code n}. */
  public float offset(int block, int n) {
    return offsets[block * codes.n() + n];
  }

  /** The weight as the graph computes it: the codes as MatMulNBits reads them, plus the offset. */
  public float dequantized(int k, int n) {
    return codes.dequantized(k, n) + offset(k / codes.blockSize(), n);
  }

  public long[] offsetsShape() {
    return new long[] {codes.kBlocks(), codes.n()};
  }

  /** Bytes of the codes, scales and offsets together. */
  public long bytes() {
    return codes.bytes() + 4L * offsets.length;
  }
}
