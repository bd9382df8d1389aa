package dev.radixserve.model.gguf;

import java.util.HashMap;
import java.util.Map;

/**
 * ggml's tensor types as a GGUF file numbers them, with their blocks: {@code blockSize} elements
 * stored in {@code typeSize} bytes (gguf-py's {@code GGMLQuantizationType} and {@code
 * GGML_QUANT_SIZES}; {@code GgufTablesTest} holds this table against them). What radixserve does
 * with each is {@link GgufTensors}' business.
 */
public enum GgmlType {
  F32(0, 1, 4),
  F16(1, 1, 2),
  Q4_0(2, 32, 18),
  Q4_1(3, 32, 20),
  Q5_0(6, 32, 22),
  Q5_1(7, 32, 24),
  Q8_0(8, 32, 34),
  Q8_1(9, 32, 36),
  Q2_K(10, 256, 84),
  Q3_K(11, 256, 110),
  Q4_K(12, 256, 144),
  Q5_K(13, 256, 176),
  Q6_K(14, 256, 210),
  Q8_K(15, 256, 292),
  IQ2_XXS(16, 256, 66),
  IQ2_XS(17, 256, 74),
  IQ3_XXS(18, 256, 98),
  IQ1_S(19, 256, 50),
  IQ4_NL(20, 32, 18),
  IQ3_S(21, 256, 110),
  IQ2_S(22, 256, 82),
  IQ4_XS(23, 256, 136),
  I8(24, 1, 1),
  I16(25, 1, 2),
  I32(26, 1, 4),
  I64(27, 1, 8),
  F64(28, 1, 8),
  IQ1_M(29, 256, 56),
  BF16(30, 1, 2),
  TQ1_0(34, 256, 54),
  TQ2_0(35, 256, 66),
  MXFP4(39, 32, 17);

  private static final Map<Integer, GgmlType> BY_ID = new HashMap<>();

  static {
    for (GgmlType t : values()) {
      BY_ID.put(t.id, t);
    }
  }

  private final int id;
  private final int blockSize;
  private final int typeSize;

  GgmlType(int id, int blockSize, int typeSize) {
    this.id = id;
    this.blockSize = blockSize;
    this.typeSize = typeSize;
  }

  /** The type numbered {@code id}, or null for a number this table does not know. */
  public static GgmlType ofId(int id) {
    return BY_ID.get(id);
  }

  public int id() {
    return id;
  }

  /** Elements per block (1 for the plain types). */
  public int blockSize() {
    return blockSize;
  }

  /** Bytes per block. */
  public int typeSize() {
    return typeSize;
  }

  /** Bytes of a row of {@code elements} (a multiple of {@link #blockSize}). */
  public long rowBytes(long elements) {
    return elements / blockSize * typeSize;
  }
}
