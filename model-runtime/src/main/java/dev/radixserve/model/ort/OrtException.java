package dev.radixserve.model.ort;

/** A call into ONNX Runtime failed; carries ONNX Runtime's error code and message. */
public final class OrtException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final int code;

  OrtException(int code, String message) {
    super("ONNX Runtime error " + codeName(code) + ": " + message);
    this.code = code;
  }

  /** {@code OrtErrorCode} value (1 = ORT_FAIL, 2 = ORT_INVALID_ARGUMENT, ...). */
  public int code() {
    return code;
  }

  private static String codeName(int code) {
    return switch (code) {
      case 1 -> "FAIL";
      case 2 -> "INVALID_ARGUMENT";
      case 3 -> "NO_SUCHFILE";
      case 4 -> "NO_MODEL";
      case 5 -> "ENGINE_ERROR";
      case 6 -> "RUNTIME_EXCEPTION";
      case 7 -> "INVALID_PROTOBUF";
      case 8 -> "MODEL_LOADED";
      case 9 -> "NOT_IMPLEMENTED";
      case 10 -> "INVALID_GRAPH";
      case 11 -> "EP_FAIL";
      default -> String.valueOf(code);
    };
  }
}
