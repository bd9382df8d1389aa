package dev.radixserve.model;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.weights.Tensor;
import java.util.Map;
import java.util.Set;

/**
 * One model family's weights under its canonical names, with the paged graph that computes it:
 * what {@link OnnxModelRunner} runs, whatever the family. Owns the weights' memory.
 */
public interface ModelWeights extends AutoCloseable {

  /** The family's hyper-parameters (a {@link ModelConfig}, a {@link LlamaConfig}). */
  ModelShape config();

  /** The family's graph builder, reading {@link #tensor}s under its initializer names. */
  PagedGraph graph();

  /** The tensor of one canonical name; an {@link IllegalArgumentException} when there is none. */
  Tensor tensor(String name);

  /** Every tensor, by canonical name. */
  Map<String, Tensor> tensors();

  /** One or two lines on the architecture, for {@code check-model}. */
  String describe();

  /**
   * The checkpoint's own quantization (GPTQ, AWQ), whose blocks the layers are served in; null
   * for float weights.
   */
  default CheckpointQuantization checkpointQuantization() {
    return null;
  }

  /**
   * The mode the layers are quantized in when the configuration asks for none: {@link
   * QuantMode#NONE} for weights that are floats or come in blocks served as they are ({@link
   * #checkpointQuantization}); for weights in blocks no MatMulNBits mode takes bit for bit (a
   * GGUF file's K-quants), the nearest mode, so they are served at about their own bytes rather
   * than widened to fp32 ({@link QuantSpec#forModel}).
   */
  default QuantMode requantizeAs() {
    return QuantMode.NONE;
  }

  /**
   * Projections served, where {@link #requantizeAs} applies, on their own 4-bit codes with a
   * float offset per block rather than requantized (a GGUF file's Q4_K layers, {@link
   * dev.radixserve.model.quant.Q4KRepacker}); empty for every other checkpoint.
   */
  default Set<String> offsetWeights() {
    return Set.of();
  }

  /**
   * The token embedding and LM head tables (canonical names) held in blocks an int8 head reads
   * as they are: a GGUF file's Q8_0 ones ({@link QuantSpec#q8Tables}); empty for every other
   * checkpoint.
   */
  default Set<String> q8Tables() {
    return Set.of();
  }

  /** Releases (or unmaps) the weights. */
  @Override
  void close();
}
