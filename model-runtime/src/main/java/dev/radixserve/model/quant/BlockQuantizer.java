package dev.radixserve.model.quant;

import dev.radixserve.model.weights.Tensor;

/**
 * Round-to-nearest block quantization into {@link QuantizedWeight}'s MatMulNBits layout, with the
 * rules of ONNX Runtime's own quantizer ({@code quantize_matmul_4bits/8bits}, MLAS's blockwise
 * quantizer), so a model quantized here is the model its tools would produce:
 *
 * <ul>
 *   <li>symmetric: m = the block's value of largest magnitude (its sign kept), scale = m / −2^(b−1),
 *       q = clamp(round(w / scale) + 2^(b−1)): the extreme lands on code 0, the whole code range
 *       is used (llama.cpp's Q4_0 picks its scale the same way); no zero points are stored;
 *   <li>with zero points: lo = min(0, min w), hi = max(0, max w) (zero stays exact), scale =
 *       (hi − lo) / (2^b − 1), zp = clamp(round(−lo / scale)), q = clamp(round(w / scale) + zp).
 * </ul>
 *
 * Rounding is half away from zero (C's {@code roundf}, as MLAS). Error per weight: at most
 * |scale| / 2, except the one clamped end of a symmetric block (at most |scale|).
 */
public final class BlockQuantizer {

  /** How much of a mapped [N, K] tensor is read before its pages are dropped (see quantize). */
  private static final int RELEASE_BYTES = 16 << 20;

  private BlockQuantizer() {}

  /** Quantizes a 2-D checkpoint tensor (F32, F16 or BF16) stored in {@code layout}. */
  public static QuantizedWeight quantize(Tensor weight, WeightLayout layout, int bits,
      int blockSize, boolean zeroPoints) {
    return quantize(weight, layout, bits, blockSize, zeroPoints, RELEASE_BYTES);
  }

  /** As above, a mapped [N, K] tensor's pages dropped every {@code releaseBytes} read (tests). */
  static QuantizedWeight quantize(Tensor weight, WeightLayout layout, int bits, int blockSize,
      boolean zeroPoints, int releaseBytes) {
    return quantize(weight, layout, bits, blockSize, zeroPoints, releaseBytes,
        RowRanges.MIN_WEIGHTS);
  }

  /** As above, an [N, K] tensor's outputs made in ranges of {@code rangeWeights} (tests). */
  static QuantizedWeight quantize(Tensor weight, WeightLayout layout, int bits, int blockSize,
      boolean zeroPoints, int releaseBytes, long rangeWeights) {
    long[] kn = layout.kn(weight.shape());
    int k = Math.toIntExact(kn[0]);
    int n = Math.toIntExact(kn[1]);
    if (k % blockSize != 0) {
      throw new IllegalArgumentException("cannot quantize " + weight.name() + ": K " + k
          + " is not a multiple of block " + blockSize);
    }
    int blocks = k / blockSize;
    int blob = blockSize * bits / 8;
    byte[] packed = new byte[Math.multiplyExact(Math.multiplyExact(n, blocks), blob)];
    float[] scales = new float[Math.multiplyExact(n, blocks)];
    int zpRow = QuantizedWeight.zeroPointRow(blocks, bits);
    byte[] zps = zeroPoints ? new byte[Math.multiplyExact(n, zpRow)] : null;
    if (layout == WeightLayout.OUT_IN) {
      // a large table (a 128k-row embedding: 525 MB of bf16) read whole would be resident on
      // top of its quantized copy: its pages go behind the reader, a slice at a time
      int slice = Math.max(1, releaseBytes / (k * weight.dtype().bytes()));
      RowRanges.Range outputs = (from, to) -> {
        // output n is row n of [N, K]: read it once (a decoded tensor decodes rows, not elements)
        float[] row = new float[k];
        int[] codes = new int[blockSize];
        float[] values = new float[blockSize];
        int released = from;
        for (int col = from; col < to; col++) {
          if (col - released == slice) {
            weight.releaseRows(released, col);
            released = col;
          }
          weight.readRow(col, row);
          for (int block = 0; block < blocks; block++) {
            System.arraycopy(row, block * blockSize, values, 0, blockSize);
            quantizeBlock(values, bits, zeroPoints, codes, scales, zps, zpRow, packed, blob, col,
                blocks, block);
          }
        }
        weight.releaseRows(released, to);
      };
      RowRanges.forEach(weight, n, k, rangeWeights, outputs);
      return new QuantizedWeight(k, n, bits, blockSize, packed, scales, zps);
    }
    int[] codes = new int[blockSize];
    float[] values = new float[blockSize];
    float[] tile = new float[blockSize * n];
    for (int block = 0; block < blocks; block++) {
      long k0 = (long) block * blockSize;
      // rows k0 .. k0+B of [K, N] are contiguous: read them once, not N strided columns
      for (int j = 0; j < blockSize; j++) {
        long row = (k0 + j) * n;
        for (int col = 0; col < n; col++) {
          tile[j * n + col] = weight.get(row + col);
        }
      }
      for (int col = 0; col < n; col++) {
        for (int j = 0; j < blockSize; j++) {
          values[j] = tile[j * n + col];
        }
        quantizeBlock(values, bits, zeroPoints, codes, scales, zps, zpRow, packed, blob, col,
            blocks, block);
      }
    }
    return new QuantizedWeight(k, n, bits, blockSize, packed, scales, zps);
  }

  /** Block {@code block} of output {@code col}: its codes, scale and zero point written. */
  private static void quantizeBlock(float[] values, int bits, boolean zeroPoints, int[] codes,
      float[] scales, byte[] zps, int zpRow, byte[] packed, int blob, int col, int blocks,
      int block) {
    int at = col * blocks + block;
    if (zeroPoints) {
      int zp = asymmetric(values, bits, codes, scales, at);
      int shift = bits == 8 ? 0 : 4 * (block & 1);
      zps[col * zpRow + (bits == 8 ? block : block / 2)] |= (byte) (zp << shift);
    } else {
      symmetric(values, bits, codes, scales, at);
    }
    pack(codes, bits, packed, at * blob);
  }

  private static void symmetric(float[] v, int bits, int[] codes, float[] scales, int at) {
    float min = 0;
    float max = 0;
    for (float x : v) {
      min = Math.min(min, x);
      max = Math.max(max, x);
    }
    int mid = 1 << (bits - 1);
    float extreme = Math.abs(max) > Math.abs(min) ? max : min;
    float scale = extreme / -mid;
    scales[at] = scale;
    for (int j = 0; j < v.length; j++) {
      codes[j] = scale == 0 ? mid : clamp(round(v[j] / scale) + mid, bits);
    }
  }

  private static int asymmetric(float[] v, int bits, int[] codes, float[] scales, int at) {
    float lo = 0;
    float hi = 0;
    for (float x : v) {
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
    }
    int qmax = (1 << bits) - 1;
    float scale = (hi - lo) / qmax;
    scales[at] = scale;
    if (scale == 0) {
      java.util.Arrays.fill(codes, 0);
      return 0;
    }
    int zp = clamp(round(-lo / scale), bits);
    for (int j = 0; j < v.length; j++) {
      codes[j] = clamp(round(v[j] / scale) + zp, bits);
    }
    return zp;
  }

  private static void pack(int[] codes, int bits, byte[] packed, int offset) {
    if (bits == 8) {
      for (int j = 0; j < codes.length; j++) {
        packed[offset + j] = (byte) codes[j];
      }
    } else {
      for (int j = 0; j < codes.length; j += 2) {
        packed[offset + j / 2] = (byte) (codes[j] | codes[j + 1] << 4);
      }
    }
  }

  /** C's {@code roundf}: halves away from zero. */
  static int round(float x) {
    return (int) Math.copySign(Math.floor(Math.abs(x) + 0.5f), x);
  }

  private static int clamp(int q, int bits) {
    return Math.max(0, Math.min((1 << bits) - 1, q));
  }
}
