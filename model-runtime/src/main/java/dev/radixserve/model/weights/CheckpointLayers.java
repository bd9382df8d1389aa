package dev.radixserve.model.weights;

import dev.radixserve.model.graph.ActOrder;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.WeightLayout;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * What a GPTQ/AWQ checkpoint holds in place of a family's float projections, and how the graph
 * gets an act-order checkpoint's inputs into group order: the family-neutral half of {@link
 * GptWeights} and {@link LlamaWeights} for pre-quantized checkpoints.
 */
final class CheckpointLayers {

  private CheckpointLayers() {}

  /** A decoder layer's linear weight under the Llama and Gemma families' canonical names. */
  static final Predicate<String> LAYER_PROJECTION =
      name -> name.startsWith("layers.") && name.endsWith("_proj.weight");

  /**
   * {@code graph} (the float model's tensors and shapes) with each projection's {@code .weight},
   * as {@code projection} picks them, replaced by the packed tensors of {@code quantization}
   * ({@link CheckpointQuantization#tensorShapes}); biases, norms, embeddings and the LM head stay
   * floats. {@code graph} itself when {@code quantization} is null.
   *
   * @param layout how the family stores a projection's weight, which says its K and N
   * @throws IllegalArgumentException when a projection's width does not fit the format
   */
  static Map<String, long[]> storedShapes(Map<String, long[]> graph,
      CheckpointQuantization quantization, Predicate<String> projection, WeightLayout layout) {
    if (quantization == null) {
      return graph;
    }
    Map<String, long[]> m = new LinkedHashMap<>();
    graph.forEach((name, shape) -> {
      if (projection.test(name)) {
        long[] kn = layout.kn(shape);
        m.putAll(quantization.tensorShapes(CheckpointRepacker.moduleOf(name), kn[0], kn[1],
            layout));
      } else {
        m.put(name, shape);
      }
    });
    return m;
  }

  /**
   * Plans {@link ActOrder} from the layers' {@code g_idx} ({@link CheckpointRepacker#inputOrder}):
   * a product whose groups are runs of consecutive inputs gets no gather; products of one input
   * whose orders agree (GPTQ quantizes them from the same Hessian) share one gather; everything
   * else gets its own.
   */
  static final class ActOrderPlanner {

    private final CheckpointQuantization quantization;
    private final Map<String, Tensor> tensors;
    private final Map<String, String> owners = new LinkedHashMap<>();
    private final Map<String, String> outputOrders = new LinkedHashMap<>();

    ActOrderPlanner(CheckpointQuantization quantization, Map<String, Tensor> tensors) {
      this.quantization = quantization;
      this.tensors = tensors;
    }

    /** Whether {@code module}'s groups are its inputs in order already. */
    boolean inPlace(String module) {
      return CheckpointRepacker.inPlace(order(module));
    }

    /**
     * Each of {@code modules} (products of one input): needing no gather when its order leaves
     * every input in place, else sharing the gather of an earlier one with the same order, else
     * gathering on its own.
     */
    void share(String... modules) {
      List<int[]> orders = new ArrayList<>();
      for (String m : modules) {
        int[] order = order(m);
        if (CheckpointRepacker.inPlace(order)) {
          owners.put(m + ".weight", ActOrder.IN_ORDER);
        }
        for (int j = 0; j < orders.size() && !owners.containsKey(m + ".weight"); j++) {
          if (Arrays.equals(orders.get(j), order)) {
            owners.put(m + ".weight", modules[j] + ".weight");
          }
        }
        orders.add(order);
      }
    }

    /**
     * {@code producers} write their outputs in {@code consumer}'s input order (their rows are
     * permuted at load), so {@code consumer}'s input arrives in its order with no gather: right
     * when only elementwise operations lie between them.
     */
    void outputsInOrderOf(String consumer, String... producers) {
      owners.put(consumer + ".weight", ActOrder.IN_ORDER);
      for (String p : producers) {
        outputOrders.put(p + ".weight", consumer);
      }
    }

    ActOrder plan() {
      return new ActOrder(owners, outputOrders);
    }

    private int[] order(String module) {
      return CheckpointRepacker.inputOrder(quantization, module, tensors);
    }
  }
}
