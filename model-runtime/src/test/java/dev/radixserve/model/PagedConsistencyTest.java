package dev.radixserve.model;

import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;

/** {@link PagedConsistencyCases} on GPT-2. */
class PagedConsistencyTest extends PagedConsistencyCases {

  @Override
  ModelWeights createWeights() {
    return RandomGpt2.create(OnnxModelRunnerTest.TINY, 11);
  }

  @Override
  double[][] reference(ModelWeights weights, int[] tokens) {
    return new ReferenceGpt2((GptWeights) weights).logits(tokens);
  }
}
