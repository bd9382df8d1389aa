package dev.radixserve.model.graph;

import dev.radixserve.model.ort.ElementType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The floating-point type a decoder graph computes and stores its KV cache in: the one place that
 * knows how each type is written (graph constants, converted weights, cache rows). A graph built
 * for {@link #FLOAT16} or {@link #BFLOAT16} takes weights and caches in that type and casts only
 * at its boundary: the logits leave as fp32, since sampling reads them on the host.
 *
 * <p>Any family's graph builder uses it the same way: declare tensors with {@link #onnxType()},
 * constants with {@link GraphBuilder#scalar(float, GraphDtype)}, and hand the runner weights
 * converted by {@link #store}.
 */
public enum GraphDtype {
  FLOAT32(ElementType.FLOAT),
  FLOAT16(ElementType.FLOAT16),
  BFLOAT16(ElementType.BFLOAT16);

  private final ElementType element;

  GraphDtype(ElementType element) {
    this.element = element;
  }

  public ElementType element() {
    return element;
  }

  /** The ONNX {@code TensorProto.DataType} code. */
  public int onnxType() {
    return element.code();
  }

  public int bytes() {
    return element.bytes();
  }

  /** The name the settings use: {@code float32}, {@code float16}, {@code bfloat16}. */
  public String settingName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Writes {@code value}, rounded to this type (to nearest, ties to even), at element {@code i}. */
  public void store(MemorySegment dst, long i, float value) {
    switch (this) {
      case FLOAT32 -> dst.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, value);
      case FLOAT16 -> dst.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i,
          Float.floatToFloat16(value));
      case BFLOAT16 -> dst.setAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i, toBfloat16(value));
    }
  }

  /** Reads element {@code i} as a float (exact: every value of these types is a float). */
  public float load(MemorySegment src, long i) {
    return switch (this) {
      case FLOAT32 -> src.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i);
      case FLOAT16 -> Float.float16ToFloat(src.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i));
      case BFLOAT16 -> Float.intBitsToFloat(
          (src.getAtIndex(ValueLayout.JAVA_SHORT_UNALIGNED, i) & 0xFFFF) << 16);
    };
  }

  /** {@code value} rounded to this type and back. */
  public float round(float value) {
    return switch (this) {
      case FLOAT32 -> value;
      case FLOAT16 -> Float.float16ToFloat(Float.floatToFloat16(value));
      case BFLOAT16 -> Float.intBitsToFloat((toBfloat16(value) & 0xFFFF) << 16);
    };
  }

  /** The type a setting names ({@code float32}, {@code float16}, {@code bfloat16}). */
  public static GraphDtype ofSetting(String name) {
    for (GraphDtype t : values()) {
      if (t.settingName().equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("unknown dtype " + name
        + " (float32, float16 or bfloat16)");
  }

  private static short toBfloat16(float value) {
    int bits = Float.floatToRawIntBits(value);
    if (Float.isNaN(value)) {
      return (short) ((bits >>> 16) | 0x40); // stay a (quiet) NaN
    }
    int rounding = 0x7FFF + ((bits >>> 16) & 1);
    return (short) ((bits + rounding) >>> 16);
  }
}
