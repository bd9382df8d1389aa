package dev.radixserve.model.graph;

import dev.radixserve.model.ort.ElementType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The type the KV pool stores keys and values in, apart from the type the graph computes in
 * ({@code --kv-cache-dtype}). The one place that knows how a cached head row is laid out, written
 * and read back.
 *
 * <pre>
 *   cache tensor  [numBlocks, B, kvHeads, lastDim] of {@link #element()}
 *   head row      float32/bfloat16/float16: D values              (lastDim = D)
 *                 int8/fp8: a float32 scale, then D one-byte codes (lastDim = D + 4 bytes)
 *                 value d = code[d] * scale; int8 codes in [-127, 127] (scale = max|x| / 127),
 *                 fp8 codes are OCP e4m3fn (scale = max|x| / 448, the largest finite e4m3fn)
 * </pre>
 *
 * <p>Why a scale per token and kv head, stored in the row: a block fills one slot per decode
 * step, so a per-block scale fixed at its first slot would clip the later tokens, and one chosen
 * later would rewrite slots already written; a row's scale is known when the row is written and
 * never changes, so a slot is written exactly once and a cached block stays bit-stable. In the row
 * (rather than in tensors beside the caches) the block's bytes carry their own scales: the
 * copy-on-write of a partial block, the tiers' export and import and the disk format move scales
 * with the values and need no second buffer. ONNX Runtime's optional {@code k_scale}/{@code
 * v_scale} inputs (14, 15) mean static per-tensor or per-channel scales fixed before the run (a
 * calibration), not scales the op writes, so this layout does not borrow them. Cost: 4 bytes per
 * row of D codes (3% at D = 128, 6% at D = 64).
 *
 * <p>Every encoding is a deterministic function of the row (round to nearest, ties to even), and
 * every decoding is exact up to the one rounding of {@code code * scale}: the kernel's fixed
 * summation order then gives the same bits cold and warm.
 */
public enum KvDtype {
  FLOAT32(ElementType.FLOAT, 4, 0),
  BFLOAT16(ElementType.BFLOAT16, 2, 0),
  FLOAT16(ElementType.FLOAT16, 2, 0),
  INT8(ElementType.INT8, 1, Float.BYTES),
  /** OCP float8 e4m3fn codes in a uint8 tensor (with the row's scale). */
  FP8(ElementType.UINT8, 1, Float.BYTES);

  /** The largest finite e4m3fn value. */
  public static final float FP8_MAX = 448f;
  private static final float[] FP8_VALUES = new float[256];

  static {
    for (int c = 0; c < 256; c++) {
      FP8_VALUES[c] = fp8Value(c);
    }
  }

  private static final ValueLayout.OfFloat F = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfShort S = ValueLayout.JAVA_SHORT_UNALIGNED;

  private final ElementType element;
  private final int valueBytes;
  private final int scaleBytes;

  KvDtype(ElementType element, int valueBytes, int scaleBytes) {
    this.element = element;
    this.valueBytes = valueBytes;
    this.scaleBytes = scaleBytes;
  }

  /** The cache tensors' element type. */
  public ElementType element() {
    return element;
  }

  public int onnxType() {
    return element.code();
  }

  /** Whether a head row starts with a float32 scale (int8, fp8). */
  public boolean scaled() {
    return scaleBytes > 0;
  }

  /** Bytes of one head row of {@code headDim} values, its scale included. */
  public long headRowBytes(int headDim) {
    return scaleBytes + (long) headDim * valueBytes;
  }

  /** The cache tensors' last dimension: {@code headDim}, or its bytes with the scale. */
  public long cacheLastDim(int headDim) {
    return headRowBytes(headDim) / element.bytes();
  }

  /** Byte offset of value 0 inside a head row. */
  public int valueOffset() {
    return scaleBytes;
  }

  /**
   * The setting's spelling: {@code float32}, {@code bfloat16}, {@code float16}, {@code int8},
   * {@code fp8}.
   */
  public String settingName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The type a setting names (not {@code auto}: {@code Device#kvDtype} resolves that). */
  public static KvDtype ofSetting(String name) {
    for (KvDtype t : values()) {
      if (t.settingName().equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("unknown KV cache dtype " + name
        + " (auto, float32, bfloat16, float16, int8 or fp8)");
  }

  /** The cache type a graph of {@code dtype} stores in when nothing else is asked. */
  public static KvDtype of(GraphDtype dtype) {
    return switch (dtype) {
      case FLOAT32 -> FLOAT32;
      case FLOAT16 -> FLOAT16;
      case BFLOAT16 -> BFLOAT16;
    };
  }

  /**
   * Writes the head row of {@code headDim} floats at byte {@code src} of {@code from} (fp32) into
   * the cache row at byte {@code dst} of {@code to}: rounded to nearest (ties to even); int8 and
   * fp8 with the row's scale first. A non-finite value makes the scale NaN, so the row reads back
   * as NaN as an fp32 row would propagate it.
   */
  public void encodeRow(MemorySegment from, long src, MemorySegment to, long dst, int headDim) {
    switch (this) {
      case FLOAT32 -> MemorySegment.copy(from, src, to, dst, (long) headDim * Float.BYTES);
      case BFLOAT16, FLOAT16 -> {
        GraphDtype g = this == BFLOAT16 ? GraphDtype.BFLOAT16 : GraphDtype.FLOAT16;
        for (int d = 0; d < headDim; d++) {
          g.store(to.asSlice(dst), d, from.get(F, src + (long) d * Float.BYTES));
        }
      }
      case INT8, FP8 -> {
        float amax = 0f;
        for (int d = 0; d < headDim; d++) {
          float x = Math.abs(from.get(F, src + (long) d * Float.BYTES));
          amax = Float.isNaN(x) || Float.isInfinite(x) ? Float.NaN : Math.max(amax, x);
        }
        float scale = amax / (this == INT8 ? 127f : FP8_MAX);
        to.set(F, dst, scale);
        for (int d = 0; d < headDim; d++) {
          float x = from.get(F, src + (long) d * Float.BYTES);
          byte code = !(scale > 0f) ? 0 // zero row, or non-finite: the scale carries it
              : this == INT8 ? (byte) Math.clamp(Math.rint(x / scale), -127, 127)
              : fp8Code(x / scale);
          to.set(ValueLayout.JAVA_BYTE, dst + scaleBytes + d, code);
        }
      }
    }
  }

  /** Value {@code d} of the cache row at byte {@code row} of {@code cache}, as a float. */
  public float decode(MemorySegment cache, long row, int d) {
    return switch (this) {
      case FLOAT32 -> cache.get(F, row + (long) d * Float.BYTES);
      case BFLOAT16 -> Float.intBitsToFloat((cache.get(S, row + 2L * d) & 0xFFFF) << 16);
      case FLOAT16 -> Float.float16ToFloat(cache.get(S, row + 2L * d));
      case INT8 -> cache.get(ValueLayout.JAVA_BYTE, row + Float.BYTES + d) * cache.get(F, row);
      case FP8 -> FP8_VALUES[cache.get(ValueLayout.JAVA_BYTE, row + Float.BYTES + d) & 0xFF]
          * cache.get(F, row);
    };
  }

  /** {@code x} rounded to this type as the cache would store it alone (no scale: 16-bit types). */
  public float round(float x) {
    return switch (this) {
      case FLOAT32 -> x;
      case BFLOAT16 -> GraphDtype.BFLOAT16.round(x);
      case FLOAT16 -> GraphDtype.FLOAT16.round(x);
      case INT8, FP8 -> throw new IllegalStateException(this + " rounds a row, with its scale");
    };
  }

  /**
   * The e4m3fn code nearest {@code x} (ties to even), saturated to ±448; NaN gives the NaN code.
   * e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; no infinities; 0x7F/0xFF are NaN.
   */
  public static byte fp8Code(float x) {
    if (Float.isNaN(x)) {
      return 0x7F;
    }
    int sign = x < 0 || (x == 0 && 1 / x < 0) ? 0x80 : 0;
    float a = Math.min(Math.abs(x), FP8_MAX);
    int code;
    if (a < 0x1p-6f) { // subnormal: multiples of 2^-9; 8 of them is the smallest normal's code
      code = (int) Math.rint(a * 0x1p9f);
    } else {
      int e = Math.getExponent(a);
      int m = (int) Math.rint(Math.scalb(a, 3 - e)); // 8 .. 16, exact scaling
      if (m == 16) {
        e++;
        m = 8;
      }
      code = ((e + 7) << 3) | (m - 8);
    }
    return (byte) (sign | code);
  }

  /** The value of e4m3fn code {@code c} (0..255). */
  public static float fp8Value(int c) {
    int e = (c >>> 3) & 0xF;
    int m = c & 7;
    float v;
    if (e == 0xF && m == 7) {
      v = Float.NaN;
    } else if (e == 0) {
      v = m * 0x1p-9f;
    } else {
      v = Math.scalb(1f + m / 8f, e - 7);
    }
    return (c & 0x80) != 0 ? -v : v;
  }
}
