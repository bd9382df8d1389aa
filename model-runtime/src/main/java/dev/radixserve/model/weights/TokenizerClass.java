package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * {@code tokenizer_config.json}'s {@code tokenizer_class}, as transformers 5 reads it: {@code
 * TokenizersBackend} (what transformers 5 writes) and {@code PreTrainedTokenizerFast} run {@code
 * tokenizer.json} as it is, and so does radixserve. A family class ({@code LlamaTokenizerFast},
 * {@code Qwen2Tokenizer}, ...) makes transformers 5 rebuild the pipeline from the file's vocabulary
 * and merges in the family's own way; for the classes below the fixtures written by transformers
 * ({@code transformers-checkpoints/*-v4}) show the same ids as the file's pipeline. Any other
 * class is refused by name: its tokens are not known to be the ones transformers would produce.
 */
final class TokenizerClass {

  static final Set<String> AS_FILE = Set.of("TokenizersBackend", "PreTrainedTokenizerFast");
  static final Set<String> FAMILY = Set.of("LlamaTokenizer", "LlamaTokenizerFast",
      "Qwen2Tokenizer", "Qwen2TokenizerFast", "GPT2Tokenizer", "GPT2TokenizerFast",
      // transformers 5's GemmaTokenizer rebuilds Gemma's file pipeline (Replace " " → ▁, a
      // byte-fallback BPE, no prefix): the gemma/ fixtures show the same ids
      "GemmaTokenizer", "GemmaTokenizerFast");

  private TokenizerClass() {}

  static void check(Path dir) {
    Path file = dir.resolve(TokenizerLoader.TOKENIZER_CONFIG_JSON);
    if (!Files.isRegularFile(file)) {
      return;
    }
    JsonNode c = JsonFile.readObject(file);
    JsonNode cls = c.get("tokenizer_class");
    if (cls == null || cls.isNull()) {
      return;
    }
    String name = cls.asText();
    if (!AS_FILE.contains(name) && !FAMILY.contains(name)) {
      throw new ModelLoadException(file, "tokenizer_class " + cls + " is not supported ("
          + String.join(", ", new java.util.TreeSet<>(AS_FILE)) + ", or a family class: "
          + String.join(", ", new java.util.TreeSet<>(FAMILY)) + ")");
    }
    // LlamaTokenizer's rebuilt pipeline prepends "▁" only under add_prefix_space (its default)
    JsonNode prefix = c.get("add_prefix_space");
    if (name.startsWith("LlamaTokenizer") && prefix != null && prefix.isBoolean()
        && !prefix.asBoolean()) {
      throw new ModelLoadException(file, "tokenizer_class " + name + " with add_prefix_space"
          + " false is not supported (transformers then drops the leading ▁ that tokenizer.json"
          + " adds)");
    }
  }
}
