package dev.radixserve.model.weights;

import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.ChatTemplate;
import java.nio.file.Path;
import java.util.List;

/**
 * A model directory's weights, tokenizer and EOS ids. Closing releases (unmaps) the weights.
 *
 * @param weightFiles the safetensors files the weights were mapped from
 * @param chatTemplate the model's own chat template, or ChatML-like when it has none
 */
public record LoadedModel(ModelWeights weights, Tokenizer tokenizer, EosTokens eos,
    List<Path> weightFiles, ChatTemplate chatTemplate) implements AutoCloseable {

  public LoadedModel {
    weightFiles = List.copyOf(weightFiles);
  }

  @Override
  public void close() {
    weights.close();
  }
}
