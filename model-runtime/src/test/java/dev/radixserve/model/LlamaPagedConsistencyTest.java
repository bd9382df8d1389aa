package dev.radixserve.model;

import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;

/**
 * {@link PagedConsistencyCases} on a Llama with grouped-query attention (6 query heads over 2 kv
 * heads) and q/k/v biases: chunks, batches, reused prefix blocks and copied blocks carry rotated
 * keys at their absolute positions.
 */
class LlamaPagedConsistencyTest extends PagedConsistencyCases {

  @Override
  ModelWeights createWeights() {
    LlamaConfig c = LlamaConfig.llama(2, 48, 6, 2, 64, 64, 97).withAttentionBias();
    return RandomLlama.create(c, 11);
  }

  @Override
  double[][] reference(ModelWeights weights, int[] tokens) {
    return new ReferenceLlama((LlamaWeights) weights).logits(tokens);
  }
}
