package dev.radixserve.model.weights;

/**
 * Element types a weight tensor may hold (safetensors names). Data is little-endian. I32 holds
 * the packed codes, zero points and group indices of pre-quantized (GPTQ, AWQ) checkpoints:
 * integers, never read as floats.
 */
public enum DType {
  F32(4),
  F16(2),
  BF16(2),
  I32(4);

  private final int bytes;

  DType(int bytes) {
    this.bytes = bytes;
  }

  public int bytes() {
    return bytes;
  }

  /** Whether elements are floats ({@link Tensor#get}); I32 is read by {@link Tensor#getInt}. */
  public boolean isFloat() {
    return this != I32;
  }
}
