package dev.radixserve.model.weights;

import dev.radixserve.model.ModelShape;
import dev.radixserve.model.Tokenizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The token ids that end generation, and the file they came from. The first of these that names
 * any wins (Hugging Face's {@code generate} reads the generation config, which defaults to the
 * model config): {@code generation_config.json}'s {@code eos_token_id}, then {@code config.json}'s,
 * then the tokenizer's {@code <|endoftext|>}. Each may be one id or a list.
 *
 * @param ids at least one id, in the order the file lists them
 * @param source where they came from ({@code generation_config.json}, {@code config.json} or
 *     {@code tokenizer})
 */
public record EosTokens(Set<Integer> ids, String source) {

  public static final String GENERATION_CONFIG_JSON = "generation_config.json";

  public EosTokens {
    if (ids.isEmpty()) {
      throw new IllegalArgumentException("no EOS token id");
    }
    ids = Collections.unmodifiableSet(new LinkedHashSet<>(ids));
  }

  /** The tokenizer's end-of-text token alone (models without config files). */
  public static EosTokens of(Tokenizer tokenizer) {
    return new EosTokens(Set.of(tokenizer.eosTokenId()), "tokenizer");
  }

  static EosTokens resolve(Path dir, HfConfig config, Tokenizer tokenizer) {
    Path generation = dir.resolve(GENERATION_CONFIG_JSON);
    if (Files.isRegularFile(generation)) {
      List<Integer> ids = HfConfig.tokenIds(JsonFile.readObject(generation), generation, "eos_token_id");
      if (!ids.isEmpty()) {
        return checked(ids, generation, config.model());
      }
    }
    if (!config.eosTokenIds().isEmpty()) {
      return checked(config.eosTokenIds(), dir.resolve(HfModelLoader.CONFIG_JSON), config.model());
    }
    return of(tokenizer);
  }

  private static EosTokens checked(List<Integer> ids, Path file, ModelShape model) {
    for (int id : ids) {
      if (id >= model.vocabSize()) {
        throw new ModelLoadException(file, "eos_token_id " + id + " is outside the vocabulary"
            + " (vocab_size " + model.vocabSize() + ")");
      }
    }
    return new EosTokens(new LinkedHashSet<>(ids), file.getFileName().toString());
  }
}
