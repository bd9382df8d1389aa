package dev.radixserve.model.gguf;

import dev.radixserve.model.weights.ModelLoadException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * GGUF metadata keys as gguf-py's {@code constants.py} ({@code Keys}) and llama.cpp's {@code
 * llama-arch.cpp} ({@code LLM_KV_NAMES}) spell them, {@code %s} standing for the architecture:
 * what radixserve makes of each. A key is read (it changes what is computed, and the loader reads
 * it), inert (with the reason it cannot change the computation), or refused: every other key under
 * the architecture's prefix or {@code tokenizer.ggml.}, since llama.cpp may compute something with
 * it that radixserve would not. {@code GgufTablesTest} holds the names against gguf-py's.
 */
public final class GgufKeys {

  // general
  public static final String ARCHITECTURE = "general.architecture";
  public static final String NAME = "general.name";
  public static final String FILE_TYPE = "general.file_type";
  // per architecture (String.format with the architecture)
  public static final String CONTEXT_LENGTH = "%s.context_length";
  public static final String EMBEDDING_LENGTH = "%s.embedding_length";
  public static final String BLOCK_COUNT = "%s.block_count";
  public static final String FEED_FORWARD_LENGTH = "%s.feed_forward_length";
  public static final String VOCAB_SIZE = "%s.vocab_size";
  public static final String HEAD_COUNT = "%s.attention.head_count";
  public static final String HEAD_COUNT_KV = "%s.attention.head_count_kv";
  public static final String KEY_LENGTH = "%s.attention.key_length";
  public static final String VALUE_LENGTH = "%s.attention.value_length";
  public static final String RMS_EPS = "%s.attention.layer_norm_rms_epsilon";
  public static final String NORM_EPS = "%s.attention.layer_norm_epsilon";
  public static final String SLIDING_WINDOW = "%s.attention.sliding_window";
  public static final String SLIDING_WINDOW_PATTERN = "%s.attention.sliding_window_pattern";
  public static final String ROPE_DIMENSION_COUNT = "%s.rope.dimension_count";
  public static final String ROPE_FREQ_BASE = "%s.rope.freq_base";
  public static final String ROPE_SCALE_LINEAR = "%s.rope.scale_linear";
  public static final String ROPE_SCALING_TYPE = "%s.rope.scaling.type";
  public static final String ROPE_SCALING_FACTOR = "%s.rope.scaling.factor";
  public static final String ROPE_SCALING_ORIG_CTX = "%s.rope.scaling.original_context_length";
  public static final String ROPE_SCALING_FINETUNED = "%s.rope.scaling.finetuned";
  public static final String YARN_BETA_FAST = "%s.rope.scaling.yarn_beta_fast";
  public static final String YARN_BETA_SLOW = "%s.rope.scaling.yarn_beta_slow";
  public static final String YARN_EXT_FACTOR = "%s.rope.scaling.yarn_ext_factor";
  public static final String YARN_ATTN_FACTOR = "%s.rope.scaling.yarn_attn_factor";
  public static final String ROPE_SCALING_ATTN_FACTOR = "%s.rope.scaling.attn_factor";
  public static final String ROPE_FREQ_BASE_SWA = "%s.rope.freq_base_swa";
  public static final String ATTN_SOFTCAP = "%s.attn_logit_softcapping";
  public static final String FINAL_SOFTCAP = "%s.final_logit_softcapping";
  // tokenizer
  public static final String TOKENIZER_MODEL = "tokenizer.ggml.model";
  public static final String TOKENIZER_PRE = "tokenizer.ggml.pre";
  public static final String TOKENS = "tokenizer.ggml.tokens";
  public static final String TOKEN_TYPE = "tokenizer.ggml.token_type";
  public static final String SCORES = "tokenizer.ggml.scores";
  public static final String MERGES = "tokenizer.ggml.merges";
  public static final String BOS_ID = "tokenizer.ggml.bos_token_id";
  public static final String EOS_ID = "tokenizer.ggml.eos_token_id";
  public static final String EOT_ID = "tokenizer.ggml.eot_token_id";
  public static final String EOM_ID = "tokenizer.ggml.eom_token_id";
  public static final String ADD_BOS = "tokenizer.ggml.add_bos_token";
  public static final String ADD_EOS = "tokenizer.ggml.add_eos_token";
  public static final String CHAT_TEMPLATE = "tokenizer.chat_template";
  /** gguf-py's {@code CHAT_TEMPLATE_N} for the template named tool_use. */
  public static final String CHAT_TEMPLATE_TOOL_USE = "tokenizer.chat_template.tool_use";
  public static final String ADD_SPACE_PREFIX = "tokenizer.ggml.add_space_prefix";

  /**
   * The architectures served, with the model_type radixserve names them by: the Llama family's
   * four (Phi-3's graph is Llama's once its fused projections are split), Gemma 2 and Gemma 3's
   * text decoder, and GPT-2.
   */
  static final Map<String, String> ARCHITECTURES = Map.of(
      "llama", "llama",
      "qwen2", "qwen2",
      "qwen3", "qwen3",
      "phi3", "phi3",
      "gemma2", "gemma2",
      "gemma3", "gemma3_text",
      "gpt2", "gpt2");

  /** Keys a Llama-family architecture's graph reads ({@link GgufConfig}). */
  static final Set<String> READ = Set.of(CONTEXT_LENGTH, EMBEDDING_LENGTH, BLOCK_COUNT,
      FEED_FORWARD_LENGTH, VOCAB_SIZE, HEAD_COUNT, HEAD_COUNT_KV, KEY_LENGTH, VALUE_LENGTH,
      RMS_EPS, ROPE_DIMENSION_COUNT, ROPE_FREQ_BASE, ROPE_SCALE_LINEAR, ROPE_SCALING_TYPE,
      ROPE_SCALING_FACTOR, ROPE_SCALING_ORIG_CTX, YARN_BETA_FAST, YARN_BETA_SLOW, YARN_EXT_FACTOR,
      YARN_ATTN_FACTOR, SLIDING_WINDOW, SLIDING_WINDOW_PATTERN);

  /** Keys GPT-2's graph reads ({@link GgufConfig#gpt2}). */
  static final Set<String> READ_GPT2 = Set.of(CONTEXT_LENGTH, EMBEDDING_LENGTH, BLOCK_COUNT,
      FEED_FORWARD_LENGTH, VOCAB_SIZE, HEAD_COUNT, NORM_EPS);

  /**
   * Phi-3's: the Llama family's and the factor on cos/sin its converter writes beside the longrope
   * factors ({@code rope_factors_long/short.weight}), which llama.cpp applies to both factor sets.
   */
  static final Set<String> READ_PHI3 = plus(READ, ROPE_SCALING_ATTN_FACTOR);

  /**
   * Gemma 3's ({@link GgufGemmaConfig}): the Llama family's but yarn's, with the sliding layers'
   * rope base and the logit soft-cap.
   */
  static final Set<String> READ_GEMMA3 = Set.of(CONTEXT_LENGTH, EMBEDDING_LENGTH, BLOCK_COUNT,
      FEED_FORWARD_LENGTH, VOCAB_SIZE, HEAD_COUNT, HEAD_COUNT_KV, KEY_LENGTH, VALUE_LENGTH,
      RMS_EPS, ROPE_DIMENSION_COUNT, ROPE_FREQ_BASE, ROPE_FREQ_BASE_SWA, ROPE_SCALE_LINEAR,
      ROPE_SCALING_TYPE, ROPE_SCALING_FACTOR, SLIDING_WINDOW, SLIDING_WINDOW_PATTERN,
      FINAL_SOFTCAP);

  /** Gemma 2's: Gemma 3's and the score soft-cap. */
  static final Set<String> READ_GEMMA2 = plus(READ_GEMMA3, ATTN_SOFTCAP);

  /** The keys architecture {@code arch}'s graph reads. */
  static Set<String> read(String arch) {
    return switch (arch) {
      case "gpt2" -> READ_GPT2;
      case "phi3" -> READ_PHI3;
      case "gemma2" -> READ_GEMMA2;
      case "gemma3" -> READ_GEMMA3;
      default -> READ;
    };
  }

  private static Set<String> plus(Set<String> keys, String key) {
    Set<String> out = new TreeSet<>(keys);
    out.add(key);
    return Set.copyOf(out);
  }

  /** Keys under the architecture's prefix that cannot change what is computed, and why. */
  static final Map<String, String> INERT = Map.of(
      ROPE_SCALING_FINETUNED, "a note on how the model was trained; llama.cpp does not read it");

  /** Keys outside the architecture's prefix that are read (the tokenizer, {@link GgufTokenizer}). */
  static final Set<String> TOKENIZER_READ = Set.of(TOKENIZER_MODEL, TOKENIZER_PRE, TOKENS,
      TOKEN_TYPE, SCORES, MERGES, BOS_ID, EOS_ID, EOT_ID, EOM_ID, ADD_BOS, ADD_EOS, CHAT_TEMPLATE,
      ADD_SPACE_PREFIX);

  /** tokenizer.ggml keys that cannot change the tokens of a text or the stop set, and why. */
  static final Map<String, String> TOKENIZER_INERT = Map.of(
      "tokenizer.ggml.padding_token_id", "padding: batches are not padded",
      "tokenizer.ggml.unknown_token_id", "unk: byte-level BPE has no unknown text",
      "tokenizer.ggml.seperator_token_id", "sep: only added under add_sep_token",
      "tokenizer.ggml.add_sep_token", "false is the only value served (checked)",
      "tokenizer.ggml.mask_token_id", "masked-LM's");

  private GgufKeys() {}

  /** {@code template} for architecture {@code arch}. */
  static String key(String template, String arch) {
    return String.format(template, arch);
  }

  /**
   * Refuses, by name, the keys of {@code file} that llama.cpp may compute with and this loader
   * does not read: those under {@code arch.} not in {@link #READ} or {@link #INERT}, and those
   * under {@code tokenizer.ggml.} not read or inert.
   */
  static void checkKnown(GgufFile file, String arch) {
    Set<String> known = new TreeSet<>();
    for (String t : read(arch)) {
      known.add(key(t, arch));
    }
    for (String t : INERT.keySet()) {
      known.add(key(t, arch));
    }
    known.addAll(TOKENIZER_READ);
    known.addAll(TOKENIZER_INERT.keySet());
    Map<String, Object> refused = new LinkedHashMap<>();
    for (Map.Entry<String, Object> e : file.metadata().entrySet()) {
      String k = e.getKey();
      boolean scoped = k.startsWith(arch + ".") || k.startsWith("tokenizer.ggml.");
      if (scoped && !known.contains(k)) {
        refused.put(k, e.getValue());
      }
    }
    if (!refused.isEmpty()) {
      throw new ModelLoadException(file.primary(), "metadata " + describe(refused)
          + " would change what llama.cpp computes for " + arch + ", and radixserve does not"
          + " read " + (refused.size() == 1 ? "it" : "them"));
    }
  }

  private static String describe(Map<String, Object> kv) {
    StringBuilder b = new StringBuilder();
    kv.forEach((k, v) -> {
      if (!b.isEmpty()) {
        b.append(", ");
      }
      String text = String.valueOf(v);
      b.append(k).append(" = ").append(text.length() > 60 ? text.substring(0, 60) + "…" : text);
    });
    return b.toString();
  }
}
