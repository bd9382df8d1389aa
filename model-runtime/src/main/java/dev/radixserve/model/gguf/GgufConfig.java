package dev.radixserve.model.gguf;

import static dev.radixserve.model.gguf.GgufKeys.key;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.ModelLoadException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A Llama-family GGUF file's hyper-parameters as llama.cpp's {@code llama_model::load_hparams}
 * reads them, into the {@link LlamaConfig} the Llama graph computes. What the metadata does not
 * say, the tensors do, as in llama.cpp: biases and q/k norms by their presence, a tied LM head by
 * the absence of {@code output.weight}, and Llama 3's rope scaling by {@code rope_freqs.weight}
 * (the converter writes the per-frequency divisors there, and llama.cpp divides each frequency by
 * its factor).
 */
final class GgufConfig {

  /** Rope scaling types (llama.cpp's {@code LLAMA_ROPE_SCALING_TYPES}) served. */
  private static final List<String> ROPE_SCALING = List.of("none", "linear", "yarn");

  /**
   * yarn's keys that llama.cpp's llama, qwen2 and qwen3 loaders never read (only grok's does),
   * with the value those loaders compute with instead. gguf-py writes them from a config that has
   * them; a file holding another value would mean one thing to transformers and another to
   * llama.cpp, and is refused by key. The attention factor is the one llama.cpp derives ({@code
   * 0.1 ln(factor) + 1}, checked in {@link #rope}).
   */
  private static final Map<String, Double> YARN_FIXED = Map.of(
      GgufKeys.YARN_BETA_FAST, 32.0, GgufKeys.YARN_BETA_SLOW, 1.0, GgufKeys.YARN_EXT_FACTOR, 1.0);

  private GgufConfig() {}

  /**
   * @param names the file's tensor names mapped to radixserve's ({@link GgufTensorNames})
   * @param ropeFactors {@code rope_freqs.weight}'s values, or null when the file has none
   */
  static LlamaConfig read(GgufFile f, String arch, Map<String, GgufFile.TensorInfo> names,
      float[] ropeFactors) {
    return read(f, arch, names, ropeFactors, null);
  }

  /**
   * The sizes every decoder architecture reads as llama.cpp's {@code load_hparams} does: head_count_kv
   * defaults to head_count, key_length to embedding_length / head_count, value_length to
   * key_length.
   */
  record Heads(int hidden, int layers, int heads, int kvHeads, int headDim, int valueDim) {

    static Heads read(GgufFile f, String arch) {
      int hidden = uint(f, arch, GgufKeys.EMBEDDING_LENGTH);
      int heads = uint(f, arch, GgufKeys.HEAD_COUNT);
      int headDim = f.get(key(GgufKeys.KEY_LENGTH, arch)) == null ? hidden / heads
          : uint(f, arch, GgufKeys.KEY_LENGTH);
      return new Heads(hidden, uint(f, arch, GgufKeys.BLOCK_COUNT), heads,
          f.get(key(GgufKeys.HEAD_COUNT_KV, arch)) == null ? heads
              : uint(f, arch, GgufKeys.HEAD_COUNT_KV), headDim,
          f.get(key(GgufKeys.VALUE_LENGTH, arch)) == null ? headDim
              : uint(f, arch, GgufKeys.VALUE_LENGTH));
    }
  }

  /**
   * Phi-3's longrope divisors as its converter writes them ({@code rope_factors_short.weight},
   * {@code rope_factors_long.weight}); both null when the file has neither.
   */
  record LongRope(float[] shortFactors, float[] longFactors) {}

  /** @param longRope Phi-3's longrope factors (architecture phi3 only), or null */
  static LlamaConfig read(GgufFile f, String arch, Map<String, GgufFile.TensorInfo> names,
      float[] ropeFactors, LongRope longRope) {
    String type = GgufKeys.ARCHITECTURES.get(arch);
    Heads h = Heads.read(f, arch);
    int hidden = h.hidden();
    int layers = h.layers();
    int heads = h.heads();
    int kvHeads = h.kvHeads();
    int headDim = h.headDim();
    int valueDim = h.valueDim();
    if (valueDim != headDim) {
      throw refuse(f, key(GgufKeys.VALUE_LENGTH, arch) + " " + valueDim + " differs from "
          + key(GgufKeys.KEY_LENGTH, arch) + " " + headDim);
    }
    int ropeDim = f.get(key(GgufKeys.ROPE_DIMENSION_COUNT, arch)) == null ? headDim
        : uint(f, arch, GgufKeys.ROPE_DIMENSION_COUNT);
    boolean phi3 = arch.equals("phi3");
    double partial = (double) ropeDim / headDim;
    if (ropeDim != headDim && (!phi3 || ropeDim > headDim || ropeDim % 2 != 0
        || (int) (headDim * partial) != ropeDim)) {
      throw refuse(f, key(GgufKeys.ROPE_DIMENSION_COUNT, arch) + " " + ropeDim
          + " rotates part of a head of " + headDim + ", which " + arch + " is not served with"
          + " (phi3 only: an even share of the head)");
    }
    int vocab = vocab(f, arch, names.get("embed_tokens.weight"));
    double eps = required(f, key(GgufKeys.RMS_EPS, arch));
    String p = "layers.0.";
    boolean qkvBias = names.containsKey(p + "self_attn.q_proj.bias");
    boolean oBias = names.containsKey(p + "self_attn.o_proj.bias");
    boolean mlpBias = names.containsKey(p + "mlp.down_proj.bias");
    boolean qkNorm = names.containsKey(p + "self_attn.q_norm.weight");
    boolean tied = !names.containsKey("lm_head.weight");
    int context = uint(f, arch, GgufKeys.CONTEXT_LENGTH);
    try {
      return new LlamaConfig(type, layers, hidden, heads, kvHeads, headDim,
          uint(f, arch, GgufKeys.FEED_FORWARD_LENGTH), context, vocab, eps,
          phi3 ? phi3Rope(f, arch, headDim, context, ropeFactors, longRope, partial)
              : rope(f, arch, headDim, context, ropeFactors), qkvBias, oBias, mlpBias, qkNorm, tied,
          slidingWindows(f, arch, layers));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(f.primary(), e.getMessage(), e);
    }
  }

  /**
   * GPT-2 as llama.cpp's {@code LLM_ARCH_GPT2} computes it: layer norms with biases, GELU with
   * the tanh approximation ({@code ggml_gelu}, transformers' {@code gelu_new}), learned
   * positions, the MLP {@code feed_forward_length} wide, tied unless {@code output.weight}.
   */
  static dev.radixserve.model.ModelConfig gpt2(GgufFile f, Map<String, GgufFile.TensorInfo> names) {
    String arch = "gpt2";
    int vocab = vocab(f, arch, names.get("wte.weight"));
    double eps = required(f, key(GgufKeys.NORM_EPS, arch));
    try {
      return new dev.radixserve.model.ModelConfig(uint(f, arch, GgufKeys.BLOCK_COUNT),
          uint(f, arch, GgufKeys.HEAD_COUNT), uint(f, arch, GgufKeys.EMBEDDING_LENGTH),
          uint(f, arch, GgufKeys.CONTEXT_LENGTH), vocab, eps, "gelu_new",
          uint(f, arch, GgufKeys.FEED_FORWARD_LENGTH), !names.containsKey("lm_head.weight"));
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(f.primary(), e.getMessage(), e);
    }
  }

  /**
   * llama.cpp's rope: {@code theta_i = pos · base^(-2i/d) · freq_scale / factor_i}, freq_scale
   * 1/scaling factor under {@code linear}, factor_i from {@code rope_freqs.weight} (1 without).
   * transformers' {@code linear} and a per-frequency divisor ({@link LlamaConfig.Rope}'s longrope
   * form with attention factor 1) compute the same frequencies.
   *
   * <p>Under {@code yarn}, ggml's {@code rope_yarn}: each frequency blended between itself and
   * itself · freq_scale by a ramp over the correction dimensions of beta_fast 32 and beta_slow 1
   * (floored and ceiled) at {@code rope.scaling.original_context_length} (the context length
   * without it), and cos/sin times {@code 0.1 ln(factor) + 1}: transformers' yarn with those
   * betas and no mscale. The converter drops a config's mscale / mscale_all_dim, so a file
   * converted from such a config computes llama.cpp's factor, not transformers'.
   */
  static LlamaConfig.Rope rope(GgufFile f, String arch, int headDim, int context,
      float[] factors) {
    double base = number(f, key(GgufKeys.ROPE_FREQ_BASE, arch), 10000);
    String scaling = (String) f.get(key(GgufKeys.ROPE_SCALING_TYPE, arch));
    double factor = number(f, key(GgufKeys.ROPE_SCALING_FACTOR, arch), 0);
    double linear = number(f, key(GgufKeys.ROPE_SCALE_LINEAR, arch), 0);
    if (scaling == null) {
      scaling = linear > 0 && linear != 1 || factor > 0 && factor != 1 ? "linear" : "none";
    }
    if (!ROPE_SCALING.contains(scaling)) {
      throw refuse(f, key(GgufKeys.ROPE_SCALING_TYPE, arch) + " " + scaling
          + " is not served from a GGUF file (" + String.join(", ", ROPE_SCALING) + ")");
    }
    double scale = factor > 0 ? factor : linear > 0 ? linear : 1;
    if (scaling.equals("yarn")) {
      if (factors != null) {
        throw refuse(f, "rope_freqs.weight with " + key(GgufKeys.ROPE_SCALING_TYPE, arch)
            + " yarn: llama.cpp would divide yarn's frequencies again");
      }
      return yarn(f, arch, base, scale, context);
    }
    if (factors != null) {
      if (factors.length != headDim / 2) {
        throw refuse(f, "rope_freqs.weight has " + factors.length + " factors, a head of "
            + headDim + " rotates " + headDim / 2 + " frequencies");
      }
      List<Double> divisors = new ArrayList<>();
      for (float v : factors) {
        divisors.add(v * scale);
      }
      // per-frequency divisors: longrope's short factors (no long context)
      return new LlamaConfig.Rope("longrope", base, 1, 0, 0, 0, 1, 32, 1, true, divisors,
          List.of(), 1);
    }
    return scaling.equals("linear") && scale != 1
        ? new LlamaConfig.Rope("linear", base, scale, 0, 0, 0) : LlamaConfig.Rope.plain(base);
  }

  /**
   * Phi-3's rope as llama.cpp's {@code phi3} graph computes it: NEOX rotation of the first {@code
   * rope.dimension_count} dimensions of each head ({@code partial}), each frequency divided by its
   * factor from {@code rope_factors_short/long.weight} when the file has them, cos and sin times
   * {@code rope.scaling.attn_factor} (the converter writes transformers' longrope attention factor
   * there). That is transformers' longrope with the same lists. Which list applies differs: llama.cpp
   * takes the long one whenever its context (-c) exceeds {@code rope.scaling.original_context_length},
   * transformers (and radixserve, for this file as for the checkpoint it came from) when the
   * sequence does ({@link LlamaConfig#longContextFrom}). A file with neither list rotates plainly;
   * other rope scaling keys are refused for phi3, whose loader does not combine them.
   */
  private static LlamaConfig.Rope phi3Rope(GgufFile f, String arch, int headDim, int context,
      float[] ropeFreqs, LongRope longRope, double partial) {
    if (ropeFreqs != null) {
      throw refuse(f, "rope_freqs.weight in a phi3 file: llama.cpp's phi3 loader reads"
          + " rope_factors_short/long.weight");
    }
    String scaling = (String) f.get(key(GgufKeys.ROPE_SCALING_TYPE, arch));
    double scale = number(f, key(GgufKeys.ROPE_SCALING_FACTOR, arch),
        number(f, key(GgufKeys.ROPE_SCALE_LINEAR, arch), 1));
    if (scaling != null && !scaling.equals("none") || scale != 1 && scale != 0) {
      throw refuse(f, key(GgufKeys.ROPE_SCALING_TYPE, arch) + " " + scaling + " / factor "
          + scale + ": phi3 is served with its longrope factors or none");
    }
    double base = number(f, key(GgufKeys.ROPE_FREQ_BASE, arch), 10000);
    double attention = number(f, key(GgufKeys.ROPE_SCALING_ATTN_FACTOR, arch), 1);
    if (!(attention > 0)) {
      throw refuse(f, key(GgufKeys.ROPE_SCALING_ATTN_FACTOR, arch) + " " + attention
          + " is not positive");
    }
    int original = (int) number(f, key(GgufKeys.ROPE_SCALING_ORIG_CTX, arch), context);
    int rotated = (int) (headDim * partial);
    if (longRope == null) {
      return new LlamaConfig.Rope("default", base, 1, 0, 0, 0, attention, 32, 1, true,
          List.of(), List.of(), partial);
    }
    List<Double> shortFactors = divisors(f, GgufTensorNames.ROPE_FACTORS_SHORT,
        longRope.shortFactors(), rotated);
    List<Double> longFactors = divisors(f, GgufTensorNames.ROPE_FACTORS_LONG,
        longRope.longFactors(), rotated);
    return new LlamaConfig.Rope("longrope", base, (double) context / original, 0, 0, original,
        attention, 32, 1, true, shortFactors, longFactors, partial);
  }

  private static List<Double> divisors(GgufFile f, String tensor, float[] values, int rotated) {
    if (values == null) {
      throw refuse(f, "has " + (tensor.equals(GgufTensorNames.ROPE_FACTORS_LONG)
          ? GgufTensorNames.ROPE_FACTORS_SHORT : GgufTensorNames.ROPE_FACTORS_LONG)
          + " without " + tensor);
    }
    if (values.length != rotated / 2) {
      throw refuse(f, tensor + " has " + values.length + " factors, the " + rotated
          + " rotated dimensions of a head " + rotated / 2 + " frequencies");
    }
    List<Double> out = new ArrayList<>();
    for (float v : values) {
      if (!(v > 0)) {
        throw refuse(f, tensor + " holds " + v + ", not a positive divisor");
      }
      out.add((double) v);
    }
    return out;
  }

  private static LlamaConfig.Rope yarn(GgufFile f, String arch, double base, double factor,
      int context) {
    for (Map.Entry<String, Double> e : YARN_FIXED.entrySet()) {
      String k = key(e.getKey(), arch);
      double v = number(f, k, e.getValue());
      if (v != e.getValue()) {
        throw refuse(f, k + " " + v + ": llama.cpp's " + arch + " loader does not read it and"
            + " computes with " + e.getValue() + ", transformers with " + v);
      }
    }
    double attention = factor <= 1 ? 1 : 0.1 * Math.log(factor) + 1;
    String attnKey = key(GgufKeys.YARN_ATTN_FACTOR, arch);
    double given = number(f, attnKey, attention);
    // gguf-py writes float32: equal to llama.cpp's own factor to float32's precision
    if (Math.abs(given - attention) > 1e-6 * attention) {
      throw refuse(f, attnKey + " " + given + ": llama.cpp's " + arch + " loader does not read"
          + " it and scales cos/sin by " + attention + " (0.1 ln(factor) + 1)");
    }
    int original = (int) number(f, key(GgufKeys.ROPE_SCALING_ORIG_CTX, arch), context);
    return new LlamaConfig.Rope("yarn", base, factor, 0, 0, original, attention, 32, 1, true,
        List.of(), List.of(), 1);
  }

  /**
   * Per layer, the window {@code attention.sliding_window} gives, on the layers {@code
   * attention.sliding_window_pattern} marks (gguf-py writes a bool per layer, or n: every n-th
   * layer attends to the whole sequence, llama.cpp's {@code set_swa_pattern}); every layer
   * without a pattern. A query sees {@code sliding_window} positions, its own included (llama.cpp's
   * standard SWA mask, transformers' {@code sliding_window}). Empty when the file has no window.
   * llama.cpp's llama, qwen2 and qwen3 loaders read neither key (and the converter writes
   * neither for them), so llama-server attends to the whole sequence on such a file; its phi3
   * loader reads the window and switches it off. A window the file states is what the model was
   * trained with (transformers applies it), and served; a window of 0 is none.
   */
  static List<Integer> slidingWindows(GgufFile f, String arch, int layers) {
    String windowKey = key(GgufKeys.SLIDING_WINDOW, arch);
    String patternKey = key(GgufKeys.SLIDING_WINDOW_PATTERN, arch);
    if (f.get(windowKey) == null) {
      if (f.get(patternKey) != null) {
        throw refuse(f, patternKey + " without " + windowKey);
      }
      return List.of();
    }
    if (f.get(windowKey) instanceof Long zero && zero == 0 && f.get(patternKey) == null) {
      return List.of(); // llama.cpp's n_swa 0: no window (Phi-3's converter writes it for none)
    }
    return slidingWindows(f, arch, layers, uint(f, arch, GgufKeys.SLIDING_WINDOW), null);
  }

  /**
   * Per layer, {@code window} on the layers {@code attention.sliding_window_pattern} marks, or
   * {@code defaultPattern} (every n-th layer full; null: every layer) without it.
   */
  static List<Integer> slidingWindows(GgufFile f, String arch, int layers, int window,
      Long defaultPattern) {
    String patternKey = key(GgufKeys.SLIDING_WINDOW_PATTERN, arch);
    Object pattern = f.get(patternKey) == null ? defaultPattern : f.get(patternKey);
    List<Integer> windows = new ArrayList<>();
    for (int i = 0; i < layers; i++) {
      int layer = i;
      boolean sliding = switch (pattern) {
        case null -> true;
        case Long n when n >= 0 -> n == 0 || layer % n < n - 1;
        case List<?> flags when flags.size() == layers && flags.get(layer) instanceof Boolean b ->
            b;
        default -> throw refuse(f, patternKey + " " + pattern + " is neither a count nor a bool"
            + " for each of the " + layers + " layers");
      };
      windows.add(sliding ? window : 0);
    }
    return windows;
  }

  /** Rows of token_embd.weight, which {@code ARCH.vocab_size} must agree with when present. */
  static int vocab(GgufFile f, String arch, GgufFile.TensorInfo embed) {
    if (embed == null) {
      throw refuse(f, "has no token_embd.weight");
    }
    int vocab = (int) embed.ne()[1];
    Object vocabKey = f.get(key(GgufKeys.VOCAB_SIZE, arch));
    if (vocabKey != null && ((Number) vocabKey).intValue() != vocab) {
      throw refuse(f, key(GgufKeys.VOCAB_SIZE, arch) + " " + vocabKey + " differs from the "
          + vocab + " rows of token_embd.weight");
    }
    return vocab;
  }

  /** A number the file must hold. */
  static double required(GgufFile f, String key) {
    double v = number(f, key, Double.NaN);
    if (Double.isNaN(v)) {
      throw refuse(f, "has no " + key);
    }
    return v;
  }

  static int uint(GgufFile f, String arch, String template) {
    String k = key(template, arch);
    Object v = f.get(k);
    if (v instanceof List<?>) {
      throw refuse(f, k + " differs by layer " + v + "; served only when every layer agrees");
    }
    if (!(v instanceof Long n) || n <= 0 || n > Integer.MAX_VALUE) {
      throw refuse(f, k + " is " + (v == null ? "missing" : v + ", not a positive integer"));
    }
    return (int) (long) n;
  }

  static double number(GgufFile f, String k, double absent) {
    Object v = f.get(k);
    if (v == null) {
      return absent;
    }
    if (!(v instanceof Number n)) {
      throw refuse(f, k + " " + v + " is not a number");
    }
    return n.doubleValue();
  }

  static ModelLoadException refuse(GgufFile f, String problem) {
    return new ModelLoadException(f.primary(), problem);
  }
}
