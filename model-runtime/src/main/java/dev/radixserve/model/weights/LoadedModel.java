package dev.radixserve.model.weights;

import dev.radixserve.model.Tokenizer;

/** A model directory's weights and tokenizer. Closing releases (unmaps) the weights. */
public record LoadedModel(GptWeights weights, Tokenizer tokenizer) implements AutoCloseable {

  @Override
  public void close() {
    weights.close();
  }
}
