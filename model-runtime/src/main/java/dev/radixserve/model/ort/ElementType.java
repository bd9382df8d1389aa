package dev.radixserve.model.ort;

/** Tensor element types this runtime uses, with their {@code ONNXTensorElementDataType} codes. */
public enum ElementType {
  FLOAT(1, 4),
  UINT8(2, 1),
  INT8(3, 1),
  INT32(6, 4),
  INT64(7, 8),
  FLOAT16(10, 2),
  BFLOAT16(16, 2);

  private final int code;
  private final int bytes;

  ElementType(int code, int bytes) {
    this.code = code;
    this.bytes = bytes;
  }

  /** The ONNX / ONNX Runtime code (same numbering as {@code TensorProto.DataType}). */
  public int code() {
    return code;
  }

  public int bytes() {
    return bytes;
  }

  /** The type of ONNX code {@code code}. */
  public static ElementType ofCode(int code) {
    for (ElementType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    throw new IllegalStateException("unsupported ONNX element type " + code);
  }
}
