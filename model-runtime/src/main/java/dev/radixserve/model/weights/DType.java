package dev.radixserve.model.weights;

/** Element types a weight tensor may hold (safetensors names). Data is little-endian. */
public enum DType {
  F32(4),
  F16(2),
  BF16(2);

  private final int bytes;

  DType(int bytes) {
    this.bytes = bytes;
  }

  public int bytes() {
    return bytes;
  }
}
