package dev.radixserve.model.gguf;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.GgmlBlockRepacker;
import dev.radixserve.model.quant.Q4KRepacker;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * ggml's 32-weight blocks, as llama.cpp's {@code ggml-quants.c} (and gguf-py's {@code quants.py})
 * define them:
 *
 * <pre>
 *   Q8_0   fp16 d, int8 qs[32]                      w[j] = d · qs[j]
 *   Q4_0   fp16 d, u8 qs[16]                        w[j] = d · ((qs[j] &amp; 15) − 8),
 *                                                   w[j+16] = d · ((qs[j] &gt;&gt; 4) − 8)
 *   Q4_1   fp16 d, fp16 m, u8 qs[16]                w = d · nibble + m
 *   Q5_0   fp16 d, u32 qh, u8 qs[16]                w = d · ((nibble | high bit &lt;&lt; 4) − 16)
 *   Q5_1   fp16 d, fp16 m, u32 qh, u8 qs[16]        w = d · (nibble | high bit &lt;&lt; 4) + m
 * </pre>
 *
 * Q8_0 and Q4_0 are MatMulNBits' own blocks (32 symmetric codes, one scale, zero point 128 or 8),
 * so a projection stored in them stays in the file's mapping and is written, code for code and
 * scale for scale, into MatMulNBits' layout when the session's weights are written ({@link
 * GgmlBlockRepacker}), nothing dequantized. Everything else here is dequantized to fp32
 * a row at a time when it is read ({@link #decoded}), exactly as ggml's {@code dequantize_row_*}
 * and gguf-py compute it (fp16 widened, products and sums in float, unfused), including the
 * K-quants' super-blocks of 256 (Q4_K, Q5_K, Q6_K).
 */
final class GgufBlocks {

  static final int BLOCK = 32;
  private static final ValueLayout.OfShort U16 =
      ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfInt U32 =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  private static final ValueLayout.OfFloat F32 =
      ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

  private GgufBlocks() {}

  /** Whether a projection in {@code type} is repacked rather than dequantized. */
  static boolean repackable(GgmlType type) {
    return type == GgmlType.Q8_0 || type == GgmlType.Q4_0;
  }

  /** The checkpoint quantization a file's {@link #repackable} projections are served in. */
  static CheckpointQuantization quantization(GgmlType type) {
    return type == GgmlType.Q8_0 ? CheckpointQuantization.GGUF_Q8_0
        : new CheckpointQuantization(CheckpointQuantization.Method.GGUF, 4, BLOCK, 0);
  }

  /**
   * Row {@code row} of the file's tensor (after un-permuting: {@code rowOf}) for output n of the
   * canonical weight.
   */
  interface RowMap {
    int sourceRow(int canonicalRow);
  }

  /** Q4_0/Q4_1's code j of a block whose 16 bytes of nibbles start at {@code qs}. */
  private static int nibble(MemorySegment s, long qs, int j) {
    int b = s.get(ValueLayout.JAVA_BYTE, qs + (j & 15)) & 0xff;
    return j < 16 ? b & 15 : b >>> 4;
  }

  /** Whether {@link #dequantize} reads {@code type}. */
  static boolean dequantizable(GgmlType type) {
    return switch (type) {
      case F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS -> true;
      default -> false;
    };
  }

  /**
   * The tensor in its own blocks, read as fp32 [rows, K] a row at a time (canonical row r is the
   * file's {@code rows.sourceRow(r)}): no float copy exists until someone asks for the rows
   * (requantizing them one tensor at a time, or widening them for an fp32 session).
   */
  static Tensor decoded(String name, GgufFile.TensorInfo t, RowMap rows) {
    return new Tensor(name, DType.F32, t.shape(), t.data(),
        new Rows(t.type(), t.ne()[0], rows));
  }

  /**
   * A tensor's rows in the file's blocks, decoded on read; Q8_0 and Q4_0 rows are also handed to
   * {@link GgmlBlockRepacker} as they lie (a repacked projection is never decoded).
   */
  private record Rows(GgmlType type, long k, RowMap rows) implements Tensor.Decoder,
      GgmlBlockRepacker.BlockRows, Q4KRepacker.Rows {

    @Override
    public long bytes(long n, long k) {
      return n * type.rowBytes(k);
    }

    @Override
    public void decodeRow(MemorySegment data, long row, float[] out) {
      dequantizeRow(type, data, rows.sourceRow(Math.toIntExact(row)), out);
    }

    @Override
    public int bits() {
      return blockBits(type);
    }

    @Override
    public long rowOffset(long row) {
      return rows.sourceRow(Math.toIntExact(row)) * type.rowBytes(k);
    }

    @Override
    public void readQ4K(MemorySegment data, long n, byte[] codes, float[] scales, float[] mins) {
      q4KRow(type, data, rowOffset(n), codes, scales, mins);
    }
  }

  /**
   * A 2-D tensor of N rows of K read as [K, N] (GPT-2's Conv1D layout; column n is the file's
   * row n), in the file's blocks: row k decodes the block holding input k in each of the N file
   * rows, and keeps that column of blocks for the next rows of the same block, so reading the
   * rows in order dequantizes each block once. No float copy of the tensor is made. A repacker
   * reads output n as the file's row n, as it lies (Q8_0 and Q4_0: {@link GgmlBlockRepacker};
   * Q4_K: {@link Q4KRepacker}), told the layout by the graph.
   */
  static Tensor transposedView(String name, GgufFile.TensorInfo t) {
    return new Tensor(name, DType.F32, new long[] {t.ne()[0], t.ne()[1]}, t.data(),
        new Columns(t.type(), (int) t.ne()[0], (int) t.ne()[1]));
  }

  /**
   * {@link #transposedView}'s decoder: one column of blocks cached (N × block floats). Output n
   * of a Q8_0, Q4_0 or Q4_K tensor is the file's row n, read as it lies.
   */
  private static final class Columns implements Tensor.Decoder, GgmlBlockRepacker.BlockRows,
      Q4KRepacker.Rows {

    private final GgmlType type;
    private final int k;
    private final int n;
    private final float[] cache;
    private final float[] block;
    private long cached = -1;

    Columns(GgmlType type, int k, int n) {
      this.type = type;
      this.k = k;
      this.n = n;
      this.block = new float[type.blockSize()];
      this.cache = new float[n * type.blockSize()];
    }

    @Override
    public long bytes(long rows, long cols) {
      return cols * type.rowBytes(rows); // the file's N rows of K
    }

    @Override
    public boolean rowsInParallel() {
      return false; // one block of columns is kept for the next call: read in order
    }

    @Override
    public synchronized void decodeRow(MemorySegment data, long row, float[] out) {
      int size = block.length;
      long b = row / size;
      if (b != cached) {
        int blocksPerRow = k / size;
        for (int r = 0; r < n; r++) {
          // block b of file row r, read as "row" r·(K/size) + b of size-element rows
          dequantizeRow(type, data, (long) r * blocksPerRow + b, block);
          System.arraycopy(block, 0, cache, r * size, size);
        }
        cached = b;
      }
      int at = (int) (row % size);
      for (int r = 0; r < n; r++) {
        out[r] = cache[r * size + at];
      }
    }

    @Override
    public int bits() {
      return blockBits(type);
    }

    @Override
    public long rowOffset(long row) {
      return row * type.rowBytes(k); // output n is the file's row n
    }

    @Override
    public void readQ4K(MemorySegment data, long row, byte[] codes, float[] scales,
        float[] mins) {
      q4KRow(type, data, rowOffset(row), codes, scales, mins);
    }
  }

  /** MatMulNBits' width of Q8_0 (8) and Q4_0 (4) blocks; no other type's blocks are its own. */
  private static int blockBits(GgmlType type) {
    if (!repackable(type)) {
      throw new IllegalStateException(type + " blocks are not MatMulNBits'");
    }
    return type == GgmlType.Q8_0 ? 8 : 4;
  }

  /**
   * A row of Q4_K super-blocks at {@code rowAt} as {@link Q4KRepacker.Rows} hands it out: codes
   * in MatMulNBits' nibble order, and per sub-block of 32 the scale {@code d·sc} and min
   * {@code dmin·m} as {@link #kBlock45} computes them. Sub-block 2i holds the low nibbles of the
   * i-th 32 bytes of {@code qs}, sub-block 2i + 1 their high nibbles.
   */
  private static void q4KRow(GgmlType type, MemorySegment s, long rowAt, byte[] codes,
      float[] scales, float[] mins) {
    if (type != GgmlType.Q4_K) {
      throw new IllegalStateException(type + " blocks are not Q4_K");
    }
    int superBlocks = scales.length / 8;
    for (int b = 0; b < superBlocks; b++) {
      long at = rowAt + (long) b * type.typeSize();
      float d = Float.float16ToFloat(s.get(U16, at));
      float min = Float.float16ToFloat(s.get(U16, at + 2));
      long sm = at + 4;
      long qs = at + 16;
      for (int is = 0; is < 8; is++) {
        int block = b * 8 + is;
        scales[block] = d * scale(s, sm, is);
        mins[block] = min * mins(s, sm, is);
        long from = qs + 32L * (is / 2);
        int shift = 4 * (is & 1);
        for (int j = 0; j < 16; j++) {
          int lo = (b(s, from + 2 * j) >>> shift) & 15;
          int hi = (b(s, from + 2 * j + 1) >>> shift) & 15;
          codes[block * 16 + j] = (byte) (lo | hi << 4);
        }
      }
    }
  }

  /** Row {@code r} of {@code t} (ne[0] elements) into {@code out}. */
  static void dequantizeRow(GgufFile.TensorInfo t, long r, float[] out) {
    dequantizeRow(t.type(), t.data(), r, out);
  }

  /** Row {@code r} of {@code type} rows of {@code out.length} elements in {@code s}. */
  static void dequantizeRow(GgmlType type, MemorySegment s, long r, float[] out) {
    int k = out.length;
    long rowAt = type.rowBytes(k) * r;
    switch (type) {
      case F32 -> {
        for (int i = 0; i < k; i++) {
          out[i] = s.get(F32, rowAt + 4L * i);
        }
      }
      case F16 -> {
        for (int i = 0; i < k; i++) {
          out[i] = Float.float16ToFloat(s.get(U16, rowAt + 2L * i));
        }
      }
      case BF16 -> {
        for (int i = 0; i < k; i++) {
          out[i] = Float.intBitsToFloat((s.get(U16, rowAt + 2L * i) & 0xffff) << 16);
        }
      }
      case Q4_K, Q5_K -> {
        for (int b = 0; b < k / type.blockSize(); b++) {
          kBlock45(type, s, rowAt + (long) b * type.typeSize(), out, b * type.blockSize());
        }
      }
      case Q6_K -> {
        for (int b = 0; b < k / type.blockSize(); b++) {
          q6K(s, rowAt + (long) b * type.typeSize(), out, b * type.blockSize());
        }
      }
      case IQ4_XS -> {
        for (int b = 0; b < k / type.blockSize(); b++) {
          iq4Xs(s, rowAt + (long) b * type.typeSize(), out, b * type.blockSize());
        }
      }
      default -> {
        for (int b = 0; b < k / BLOCK; b++) {
          block(type, s, rowAt + (long) b * type.typeSize(), out, b * BLOCK);
        }
      }
    }
  }

  /**
   * Q4_K / Q5_K super-blocks of 256: fp16 d, fp16 dmin, 12 bytes of 6-bit scales and mins
   * ({@code get_scale_min_k4}), (Q5_K: 32 bytes of high bits), 128 bytes of low nibbles; eight
   * sub-blocks of 32, w = d·sc·q − dmin·m.
   */
  private static void kBlock45(GgmlType type, MemorySegment s, long at, float[] out, int o) {
    float d = Float.float16ToFloat(s.get(U16, at));
    float min = Float.float16ToFloat(s.get(U16, at + 2));
    long scales = at + 4;
    boolean five = type == GgmlType.Q5_K;
    long qh = at + 16;
    long qs = five ? at + 48 : at + 16;
    int y = o;
    for (int j = 0, is = 0; j < 256; j += 64, is += 2) {
      float d1 = d * scale(s, scales, is);
      float m1 = min * mins(s, scales, is);
      float d2 = d * scale(s, scales, is + 1);
      float m2 = min * mins(s, scales, is + 1);
      int u1 = 1 << (is);
      int u2 = 2 << (is);
      for (int l = 0; l < 32; l++) {
        int q = s.get(ValueLayout.JAVA_BYTE, qs + l) & 15;
        int high = five && (s.get(ValueLayout.JAVA_BYTE, qh + l) & u1) != 0 ? 16 : 0;
        out[y++] = d1 * (q + high) - m1;
      }
      for (int l = 0; l < 32; l++) {
        int q = (s.get(ValueLayout.JAVA_BYTE, qs + l) & 0xff) >>> 4;
        int high = five && (s.get(ValueLayout.JAVA_BYTE, qh + l) & u2) != 0 ? 16 : 0;
        out[y++] = d2 * (q + high) - m2;
      }
      qs += 32;
    }
  }

  /**
   * IQ4_NL's and IQ4_XS's 16 levels ({@code kvalues_iq4nl}): a 4-bit code picks one, not a step
   * of a uniform grid, which is why no MatMulNBits mode takes these blocks as they are.
   */
  private static final int[] IQ4_LEVELS =
      {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

  /**
   * 32 IQ4 codes (16 bytes of nibbles at {@code qs}: low nibbles first, then high ones) times
   * {@code d}, as ggml's {@code dequantize_row_iq4_nl} / {@code _xs}.
   */
  private static void iq4Run(MemorySegment s, long qs, float d, float[] out, int o) {
    for (int j = 0; j < BLOCK; j++) {
      out[o + j] = d * IQ4_LEVELS[nibble(s, qs, j)];
    }
  }

  /**
   * IQ4_XS super-blocks of 256: fp16 d, a 16-bit word of the scales' high bits, 4 bytes of their
   * low nibbles, 128 bytes of codes; eight sub-blocks of 32 at d·(scale − 32), scale 6 bits.
   */
  private static void iq4Xs(MemorySegment s, long at, float[] out, int o) {
    float d = Float.float16ToFloat(s.get(U16, at));
    int high = s.get(U16, at + 2) & 0xffff;
    for (int ib = 0; ib < 8; ib++) {
      int low = (s.get(ValueLayout.JAVA_BYTE, at + 4 + ib / 2) & 0xff) >>> (4 * (ib % 2)) & 15;
      int scale = low | ((high >>> (2 * ib)) & 3) << 4;
      iq4Run(s, at + 8 + 16L * ib, d * (scale - 32), out, o + 32 * ib);
    }
  }

  /** {@code get_scale_min_k4}'s scale of sub-block j. */
  private static int scale(MemorySegment s, long q, int j) {
    return j < 4 ? b(s, q + j) & 63 : (b(s, q + j + 4) & 0xF) | ((b(s, q + j - 4) >>> 6) << 4);
  }

  /** {@code get_scale_min_k4}'s min of sub-block j. */
  private static int mins(MemorySegment s, long q, int j) {
    return j < 4 ? b(s, q + j + 4) & 63 : (b(s, q + j + 4) >>> 4) | ((b(s, q + j) >>> 6) << 4);
  }

  private static int b(MemorySegment s, long at) {
    return s.get(ValueLayout.JAVA_BYTE, at) & 0xff;
  }

  /**
   * Q6_K super-blocks of 256: 128 bytes of low nibbles, 64 of 2-bit highs, 16 int8 scales, fp16
   * d; w = d·sc·(q − 32) over sixteen sub-blocks of 16.
   */
  private static void q6K(MemorySegment s, long at, float[] out, int o) {
    float d = Float.float16ToFloat(s.get(U16, at + 208));
    long ql = at;
    long qh = at + 128;
    long sc = at + 192;
    int y = o;
    for (int n = 0; n < 256; n += 128) {
      for (int l = 0; l < 32; l++) {
        int is = l / 16;
        int h = b(s, qh + l);
        int q1 = ((b(s, ql + l) & 0xF) | ((h & 3) << 4)) - 32;
        int q2 = ((b(s, ql + l + 32) & 0xF) | (((h >>> 2) & 3) << 4)) - 32;
        int q3 = ((b(s, ql + l) >>> 4) | (((h >>> 4) & 3) << 4)) - 32;
        int q4 = ((b(s, ql + l + 32) >>> 4) | (((h >>> 6) & 3) << 4)) - 32;
        out[y + l] = d * s.get(ValueLayout.JAVA_BYTE, sc + is) * q1;
        out[y + l + 32] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 2) * q2;
        out[y + l + 64] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 4) * q3;
        out[y + l + 96] = d * s.get(ValueLayout.JAVA_BYTE, sc + is + 6) * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }

  private static void block(GgmlType type, MemorySegment s, long at, float[] out, int o) {
    float d = Float.float16ToFloat(s.get(U16, at));
    switch (type) {
      case Q8_0 -> {
        for (int j = 0; j < BLOCK; j++) {
          out[o + j] = d * s.get(ValueLayout.JAVA_BYTE, at + 2 + j);
        }
      }
      case Q4_0 -> {
        for (int j = 0; j < BLOCK; j++) {
          out[o + j] = d * (nibble(s, at + 2, j) - 8);
        }
      }
      case Q4_1 -> {
        float m = Float.float16ToFloat(s.get(U16, at + 2));
        for (int j = 0; j < BLOCK; j++) {
          out[o + j] = d * nibble(s, at + 4, j) + m;
        }
      }
      case Q5_0 -> {
        int qh = s.get(U32, at + 2);
        for (int j = 0; j < BLOCK; j++) {
          out[o + j] = d * ((nibble(s, at + 6, j) | ((qh >>> j) & 1) << 4) - 16);
        }
      }
      case Q5_1 -> {
        float m = Float.float16ToFloat(s.get(U16, at + 2));
        int qh = s.get(U32, at + 4);
        for (int j = 0; j < BLOCK; j++) {
          out[o + j] = d * (nibble(s, at + 8, j) | ((qh >>> j) & 1) << 4) + m;
        }
      }
      case IQ4_NL -> iq4Run(s, at + 2, d, out, o);
      default -> throw new IllegalArgumentException("no dequantization of " + type);
    }
  }

  /**
   * llama.cpp's converter permutes Llama's q/k rows so its interleaved rope (pairs 2i, 2i+1)
   * computes transformers' half-split one (pairs i, i + D/2): per head, canonical row s·D/2 + j
   * is stored as row 2j + s. The inverse, as llama.cpp's own reverse ({@code
   * LlamaModel.permute}'s inverse) and transformers' GGUF loader compute it.
   */
  static RowMap unpermute(int rows, int heads) {
    int d = rows / heads;
    return r -> {
      int h = r / d;
      int rem = r % d;
      return h * d + 2 * (rem % (d / 2)) + rem / (d / 2);
    };
  }

  static final RowMap IN_PLACE = r -> r;
}
