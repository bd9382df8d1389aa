package dev.radixserve.model.graph;

import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.WeightLayout;

/**
 * What the data of one external initializer is made from at session creation: a checkpoint
 * tensor as fp32, or one part of that tensor quantized for MatMulNBits.
 */
public sealed interface WeightSource {

  /** The checkpoint tensor this comes from. */
  String tensor();

  /** The tensor widened to fp32 (or wrapped as it is when it already is fp32). */
  record Dense(String tensor) implements WeightSource {}

  /**
   * One of the MatMulNBits inputs of {@code tensor} quantized under {@code spec}.
   *
   * @param outputOrder null, or (GPTQ act-order) the module whose input order the weight's
   *     outputs are written in ({@link ActOrder#outputOrders})
   */
  record Quantized(String tensor, WeightLayout layout, QuantSpec spec, Part part,
      String outputOrder) implements WeightSource {

    public Quantized(String tensor, WeightLayout layout, QuantSpec spec, Part part) {
      this(tensor, layout, spec, part, null);
    }
  }

  /**
   * MatMulNBits' inputs 1 (B), 2 (scales) and 3 (zero_points); for a GPTQ act-order layer the
   * order its inputs are gathered into first (int64 [K]); for a GGUF Q4_K layer the offset per
   * block ([K/32, N], {@link dev.radixserve.model.quant.OffsetWeight}).
   */
  enum Part {
    WEIGHT,
    SCALES,
    ZERO_POINTS,
    INPUT_ORDER,
    OFFSETS
  }
}
