package dev.radixserve.model.graph;

import java.util.Map;

/**
 * How a GPTQ act-order checkpoint's quantized products get their inputs in group order
 * ({@code CheckpointRepacker.inputOrder}), as {@code LlamaWeights.graph} plans it from the
 * layers' {@code g_idx}:
 *
 * @param inputOrderOwners weight → the weight of the same input whose order it shares, so the
 *     input is gathered once (q/k/v, gate/up); "" when its inputs arrive in order already
 *     (a layer whose groups are consecutive inputs; down_proj, whose input gate/up write in its
 *     order; GPT-2's MLP c_proj, whose input c_fc writes in its order); absent: its own gather
 * @param outputOrders weight → the module whose input order its outputs are written in (gate
 *     and up for down_proj: SwiGLU is elementwise, so its product then comes out in down_proj's
 *     order and needs no gather; their biases are permuted alike)
 */
public record ActOrder(Map<String, String> inputOrderOwners, Map<String, String> outputOrders) {

  /** No act-order: every product reads its input as it is. */
  public static final ActOrder NONE = new ActOrder(Map.of(), Map.of());

  /** Marks a weight whose inputs arrive in its order already. */
  public static final String IN_ORDER = "";

  public ActOrder {
    inputOrderOwners = Map.copyOf(inputOrderOwners);
    outputOrders = Map.copyOf(outputOrders);
  }
}
