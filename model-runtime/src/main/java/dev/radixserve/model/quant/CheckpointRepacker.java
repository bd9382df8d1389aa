package dev.radixserve.model.quant;

import dev.radixserve.model.weights.Tensor;
import java.util.Map;

/**
 * A GPTQ or AWQ layer's int32-packed codes and zero points, and its scales, rewritten into
 * MatMulNBits' layout ({@link QuantizedWeight}) without changing one number: both formats already
 * hold, per output and per group of inputs, integer codes, one zero point and one scale, with the
 * weight {@code (code − zero) · scale}, as MatMulNBits does. Only the packing differs:
 *
 * <pre>
 *   GPTQ  qweight int32 [K/f, N]  code(k, n) = qweight[k/f][n] >> (bits·(k mod f)), f = 32/bits
 *         qzeros  int32 [G, N/f]  zero(g, n) = qzeros[g][n/f] >> (bits·(n mod f)), + 1 under v1
 *                                 (AutoGPTQ stores zero − 1, and adds it back masked to bits)
 *         g_idx   int32 [K]       the group of input k (k / G unless act-order: then the
 *                                 inputs are read in group order, {@link #inputOrder})
 *   AWQ   qweight int32 [K, N/8]  code(k, n) = nibble AWQ_REVERSE[n mod 8] of qweight[k][n/8]
 *         qzeros  int32 [G, N/8]  the same interleaved nibble order (AutoAWQ's GEMM packing)
 *   both  scales  float [G, N]    fp16 in the checkpoint, widened exactly
 * </pre>
 *
 * The checks against the upstream code's own packing are fixtures written by
 * {@code model-runtime/src/test/resources/prequantized/make_fixtures.py}.
 */
public final class CheckpointRepacker {

  /** AutoAWQ's AWQ_ORDER: nibble i of a word holds column AWQ_ORDER[i] of its eight. */
  private static final int[] AWQ_ORDER = {0, 2, 4, 6, 1, 3, 5, 7};
  /** Its inverse, reverse_awq_order: column c of the eight sits in nibble AWQ_REVERSE[c]. */
  private static final int[] AWQ_REVERSE = {0, 4, 1, 5, 2, 6, 3, 7};

  private CheckpointRepacker() {}

  /**
   * The layer under module {@code prefix} (e.g. {@code layers.0.mlp.down_proj}) of
   * {@code tensors}, whose shapes the loader has checked against
   * {@link CheckpointQuantization#tensorShapes}, as it is served: a MatMulNBits block per group
   * ({@link CheckpointQuantization#groupSize}), the same weights bit for bit.
   *
   * @param layout how the family stores the float weight: a GGUF file's blocks stand under its
   *     name and shape (GPTQ and AWQ pack theirs one way for every family)
   * @throws QuantizationException for a GPTQ layer whose {@code g_idx} is not a grouping of its
   *     inputs ({@link #inputOrder})
   */
  public static QuantizedWeight repack(CheckpointQuantization q, String prefix,
      WeightLayout layout, Map<String, Tensor> tensors) {
    if (q.method() == CheckpointQuantization.Method.GGUF) {
      return GgmlBlockRepacker.repack(tensor(tensors, prefix + ".weight"), layout);
    }
    return groups(q, prefix, tensors);
  }

  /** The layer in MatMulNBits blocks of its own groups, with the zero points as stored. */
  private static QuantizedWeight groups(CheckpointQuantization q, String prefix,
      Map<String, Tensor> tensors) {
    int[] order = check(q, prefix, tensors);
    Tensor scales = tensors.get(prefix + ".scales");
    int groups = (int) scales.shape()[0];
    int n = (int) scales.shape()[1];
    int k = groups * q.groupSize();
    Tensor qweight = tensors.get(prefix + ".qweight");
    Tensor qzeros = tensors.get(prefix + ".qzeros");
    int bits = q.bits();
    int mask = (1 << bits) - 1;
    int f = q.packFactor();
    int blob = q.groupSize() * bits / 8;
    int rowStride = groups * blob;
    // the byte of input `in` (the checkpoint's numbering) within an output's packed row, and its
    // shift there: its place in MatMulNBits' order, worked out once per layer
    int[] byteAt = new int[k];
    int[] shiftAt = new int[k];
    for (int place = 0; place < k; place++) {
      int j = place % q.groupSize();
      byteAt[order[place]] = (place / q.groupSize()) * blob + j * bits / 8;
      shiftAt[order[place]] = bits == 4 ? 4 * (j & 1) : 0;
    }
    byte[] packed = new byte[n * rowStride];
    // word by word, each read once: a 7B checkpoint holds billions of codes
    if (q.method() == CheckpointQuantization.Method.AWQ) {
      int words = n / 8;
      for (int in = 0; in < k; in++) {
        int at = byteAt[in];
        int shift = shiftAt[in];
        for (int w = 0; w < words; w++) {
          int word = qweight.getInt((long) in * words + w);
          for (int i = 0; i < 8; i++) {
            packed[(8 * w + AWQ_ORDER[i]) * rowStride + at] |=
                (byte) (((word >>> (4 * i)) & mask) << shift);
          }
        }
      }
    } else {
      for (int r = 0; r < k / f; r++) {
        for (int out = 0; out < n; out++) {
          int word = qweight.getInt((long) r * n + out);
          int row = out * rowStride;
          for (int i = 0; i < f; i++) {
            int in = r * f + i;
            packed[row + byteAt[in]] |= (byte) (((word >>> (bits * i)) & mask) << shiftAt[in]);
          }
        }
      }
    }
    float[] floatScales = new float[n * groups];
    int zpRow = QuantizedWeight.zeroPointRow(groups, bits);
    byte[] zeroPoints = new byte[n * zpRow];
    for (int g = 0; g < groups; g++) {
      for (int nn = 0; nn < n; nn++) {
        floatScales[nn * groups + g] = scales.get((long) g * n + nn);
        int zero = zero(q, qzeros, g, nn, n);
        if (bits == 8) {
          zeroPoints[nn * zpRow + g] = (byte) zero;
        } else {
          zeroPoints[nn * zpRow + g / 2] |= (byte) (zero << (4 * (g & 1)));
        }
      }
    }
    return new QuantizedWeight(k, n, bits, q.groupSize(), packed, floatScales, zeroPoints);
  }

  /**
   * What the loader checks of each layer before anything is built: the tensors' types (codes,
   * zero points and group indices I32, scales floats) and, under GPTQ, its {@code g_idx} (see
   * {@link #inputOrder}).
   *
   * @return the layer's {@link #inputOrder}
   * @throws QuantizationException naming the tensor
   */
  public static int[] check(CheckpointQuantization q, String prefix,
      Map<String, Tensor> tensors) {
    requireType(tensor(tensors, prefix + ".scales"), true);
    requireType(tensor(tensors, prefix + ".qweight"), false);
    requireType(tensor(tensors, prefix + ".qzeros"), false);
    return inputOrder(q, prefix, tensors);
  }

  /**
   * The order MatMulNBits reads the layer's inputs in: its block b is the inputs {@code
   * order[b·G .. (b+1)·G)}, which are the checkpoint's group b. Without act-order that is every
   * input in place (G consecutive inputs a group, as MatMulNBits' blocks are). GPTQ's act-order
   * quantizes the inputs in the order of the Hessian's diagonal, so its group b holds the inputs
   * k with {@code g_idx[k] = b}, anywhere in K; sorting the inputs by group (stable) makes the
   * groups consecutive again, and the graph gathers each product's activations into the same
   * order ({@code Gather} along K, a copy of T×K floats beside a T×K×N product). ONNX Runtime's
   * own answer, MatMulNBits' {@code g_idx} input, dequantizes the whole matrix on the CPU at
   * every call.
   *
   * @throws QuantizationException when {@code g_idx} is not a grouping of the inputs into groups
   *     of G
   */
  public static int[] inputOrder(CheckpointQuantization q, String prefix,
      Map<String, Tensor> tensors) {
    if (q.method() == CheckpointQuantization.Method.GGUF) {
      // ggml's blocks are consecutive inputs; the weight is [N, K]
      int[] order = new int[Math.toIntExact(tensor(tensors, prefix + ".weight").shape()[1])];
      java.util.Arrays.setAll(order, i -> i);
      return order;
    }
    Tensor scales = tensor(tensors, prefix + ".scales");
    int groups = (int) scales.shape()[0];
    int k = groups * q.groupSize();
    int[] order = new int[k];
    if (q.method() != CheckpointQuantization.Method.GPTQ) {
      java.util.Arrays.setAll(order, i -> i);
      return order;
    }
    Tensor gIdx = requireType(tensor(tensors, prefix + ".g_idx"), false);
    int[] filled = new int[groups];
    for (int i = 0; i < k; i++) {
      int g = gIdx.getInt(i);
      if (g < 0 || g >= groups || filled[g] == q.groupSize()) {
        throw new QuantizationException(prefix + ".g_idx puts input " + i + " in group " + g
            + ": the layer has " + groups + " groups of " + q.groupSize() + " inputs");
      }
      order[g * q.groupSize() + filled[g]++] = i;
    }
    return order;
  }

  private static int zero(CheckpointQuantization q, Tensor qzeros, int g, int n, int width) {
    int mask = (1 << q.bits()) - 1;
    int f = q.packFactor();
    int word = qzeros.getInt((long) g * (width / f) + n / f);
    int shift = q.method() == CheckpointQuantization.Method.AWQ ? 4 * AWQ_REVERSE[n % 8]
        : q.bits() * (n % f);
    return ((word >>> shift) + q.zeroOffset()) & mask;
  }

  /**
   * The module of a projection's weight name ({@code layers.0.mlp.up_proj} of {@code
   * layers.0.mlp.up_proj.weight}): the prefix of its packed tensors.
   */
  public static String moduleOf(String weight) {
    if (!weight.endsWith(".weight")) {
      throw new IllegalArgumentException("no module of " + weight);
    }
    return weight.substring(0, weight.length() - ".weight".length());
  }

  /** Whether {@code order} leaves every input in place. */
  public static boolean inPlace(int[] order) {
    for (int i = 0; i < order.length; i++) {
      if (order[i] != i) {
        return false;
      }
    }
    return true;
  }

  /** Packed codes, zero points and group indices are I32; scales floats. */
  private static Tensor requireType(Tensor t, boolean isFloat) {
    if (t.dtype().isFloat() != isFloat) {
      throw new QuantizationException("tensor " + t.name() + " holds " + t.dtype() + ", expected "
          + (isFloat ? "F16, BF16 or F32" : "I32"));
    }
    return t;
  }

  private static Tensor tensor(Map<String, Tensor> tensors, String name) {
    Tensor t = tensors.get(name);
    if (t == null) {
      throw new IllegalArgumentException("no tensor named " + name);
    }
    return t;
  }
}
