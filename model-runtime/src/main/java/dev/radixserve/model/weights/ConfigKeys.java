package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.logging.Logger;

/**
 * What radixserve makes of every key that transformers' config class for one {@code model_type}
 * defines: either the family's reader reads it (and refuses, by name and value, a value it cannot
 * compute), or it is inert for inference, with the reason. {@code ConfigKeysTest} holds each table
 * against the keys of the pinned transformers' config classes ({@code
 * transformers-checkpoints/keys.json}), so a key that a new transformers adds or renames fails a
 * test, not a user.
 *
 * <p>A key outside the table is one transformers' class does not define either: transformers
 * keeps it as an attribute that its model never reads, so it cannot change what transformers
 * computes, and radixserve ignores it too (logged). The transformers 4 spellings that transformers
 * 5 still reads ({@code rope_theta}, {@code rope_scaling}, {@code torch_dtype}, ...) are read keys
 * of the families that have them ({@link #LEGACY}).
 *
 * @param modelType the config's {@code model_type}
 * @param read keys the reader reads
 * @param inert keys that do not change inference, each with the reason
 */
record ConfigKeys(String modelType, Set<String> read, Map<String, String> inert) {

  private static final Logger LOG = Logger.getLogger(ConfigKeys.class.getName());

  /** PreTrainedConfig's own keys that no decoder's inference depends on. */
  static final Map<String, String> COMMON_INERT = Map.of(
      "_name_or_path", "where the config came from",
      "chunk_size_feed_forward", "chunking the MLP over the sequence computes the same values",
      "id2label", "labels of classification heads; a causal LM has none",
      "label2id", "labels of classification heads; a causal LM has none",
      "output_attentions", "what forward() returns besides the logits",
      "output_hidden_states", "what forward() returns besides the logits",
      "problem_type", "the loss of classification heads",
      "return_dict", "how forward() packs its outputs",
      "transformers_version", "the version that wrote the file");
  /** PreTrainedConfig's own keys every reader checks. */
  static final Set<String> COMMON_READ = Set.of("architectures", "model_type", "dtype",
      "is_encoder_decoder");
  /** transformers 4 spellings that transformers 5 still reads (and so do we). */
  static final Set<String> LEGACY = Set.of("rope_theta", "rope_scaling", "torch_dtype",
      "partial_rotary_factor");
  /** Decoder keys that only training or generate() defaults read. */
  static final Map<String, String> DECODER_INERT = Map.of(
      "attention_dropout", "dropout is off at inference",
      "initializer_range", "only initializes new weights",
      "use_cache", "generate()'s KV-cache switch; the server always caches",
      "bos_token_id", "the tokenizer adds BOS; generation never reads it here",
      "pad_token_id", "padding of batched tensors; the server packs sequences without padding");

  ConfigKeys {
    read = Set.copyOf(read);
    inert = Map.copyOf(inert);
  }

  /** Every key the table classifies: the model_type's, PreTrainedConfig's and the legacy ones. */
  Set<String> keys() {
    Set<String> all = new TreeSet<>(read);
    all.addAll(inert.keySet());
    return all;
  }

  /** A table of {@code read} keys and {@code inert} ones plus PreTrainedConfig's common keys. */
  static ConfigKeys of(String modelType, Set<String> read, Map<String, String> inert) {
    Set<String> r = new TreeSet<>(read);
    r.addAll(COMMON_READ);
    Map<String, String> i = new TreeMap<>(inert);
    i.putAll(COMMON_INERT);
    return new ConfigKeys(modelType, r, i);
  }

  /** Logs the config's keys that are outside the table (transformers ignores them as well). */
  void logUnknown(JsonNode c, Path file) {
    Set<String> unknown = new TreeSet<>();
    for (Iterator<String> it = c.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!read.contains(key) && !inert.containsKey(key) && !key.equals("quantization_config")
          && !key.equals("auto_map")) {
        unknown.add(key);
      }
    }
    if (!unknown.isEmpty()) {
      LOG.info(() -> file + ": keys " + unknown + " are not " + modelType + " config keys of"
          + " transformers; ignored, as transformers ignores them");
    }
  }

  /** The dtype the checkpoint was saved in ({@code dtype}, transformers 4's {@code torch_dtype}). */
  static void checkDtype(JsonNode c, Path file) {
    for (String key : new String[] {"dtype", "torch_dtype"}) {
      JsonNode v = c.get(key);
      if (v != null && !v.isNull() && !Set.of("float32", "float16", "bfloat16").contains(v.asText())) {
        throw new ModelLoadException(file, key + " " + v + " is not supported (float32, float16"
            + " or bfloat16; quantized checkpoints say so in quantization_config)");
      }
    }
  }
}
