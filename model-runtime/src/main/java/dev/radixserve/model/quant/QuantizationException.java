package dev.radixserve.model.quant;

/**
 * A quantization setting this model cannot take (e.g. a block size that does not divide a
 * layer's input width): the message names the layer, the numbers and what would work. Raised
 * while the runner is being built, before any weight is quantized, so the server refuses to
 * start instead of serving something else.
 */
public final class QuantizationException extends IllegalArgumentException {

  public QuantizationException(String message) {
    super(message);
  }
}
