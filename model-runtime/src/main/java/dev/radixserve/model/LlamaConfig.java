package dev.radixserve.model;

/**
 * Hyper-parameters of the Llama family of decoders as Hugging Face's {@code config.json} names
 * them: Llama 3.x, SmolLM2, TinyLlama ({@code llama}), Qwen2.5 ({@code qwen2}), Qwen3
 * ({@code qwen3}) and Mistral ({@code mistral}) differ only in the switches below.
 *
 * <pre>
 *   x = embed(ids)
 *   per layer:  x += o_proj(attn(rope(q_proj(rms(x))), rope(k_proj(rms(x))), v_proj(rms(x))))
 *               x += down_proj(silu(gate_proj(rms(x))) * up_proj(rms(x)))
 *   logits = lm_head(rms(x))             lm_head: embed_tokens when tied
 * </pre>
 *
 * @param modelType {@code model_type}, for messages
 * @param nLayer {@code num_hidden_layers}
 * @param hiddenSize {@code hidden_size}
 * @param nHeads {@code num_attention_heads} (query heads)
 * @param kvHeads {@code num_key_value_heads} (divides nHeads: grouped-query attention)
 * @param headDim {@code head_dim}, else hiddenSize / nHeads
 * @param intermediateSize the MLP's hidden width
 * @param nPositions {@code max_position_embeddings}
 * @param vocabSize rows of the embedding
 * @param rmsNormEps every RMSNorm's epsilon
 * @param rope the rotary embedding
 * @param qkvBias q/k/v projections have biases (Qwen2 always; Llama and Qwen3 with
 *     {@code attention_bias})
 * @param oBias the output projection has a bias ({@code attention_bias} of Llama and Qwen3)
 * @param mlpBias gate/up/down have biases ({@code mlp_bias} of Llama)
 * @param qkNorm per-head RMSNorm of q and k before rotary (Qwen3)
 * @param tieWordEmbeddings the LM head is {@code embed_tokens.weight}
 * @param slidingWindows per layer, how many positions back (the query's own included) a query
 *     sees: Hugging Face's {@code sliding_window} on the layers it applies to, 0 on full-attention
 *     layers; empty when every layer attends to the whole sequence
 */
public record LlamaConfig(
    String modelType,
    int nLayer,
    int hiddenSize,
    int nHeads,
    int kvHeads,
    int headDim,
    int intermediateSize,
    int nPositions,
    int vocabSize,
    double rmsNormEps,
    Rope rope,
    boolean qkvBias,
    boolean oBias,
    boolean mlpBias,
    boolean qkNorm,
    boolean tieWordEmbeddings,
    java.util.List<Integer> slidingWindows) implements ModelShape {

  /** Every layer attends to the whole sequence. */
  public LlamaConfig(String modelType, int nLayer, int hiddenSize, int nHeads, int kvHeads,
      int headDim, int intermediateSize, int nPositions, int vocabSize, double rmsNormEps,
      Rope rope, boolean qkvBias, boolean oBias, boolean mlpBias, boolean qkNorm,
      boolean tieWordEmbeddings) {
    this(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim, intermediateSize, nPositions,
        vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias, qkNorm, tieWordEmbeddings,
        java.util.List.of());
  }

  public LlamaConfig {
    slidingWindows = java.util.List.copyOf(slidingWindows);
    if (!slidingWindows.isEmpty() && slidingWindows.size() != nLayer) {
      throw new IllegalArgumentException(slidingWindows.size() + " sliding windows for " + nLayer
          + " layers");
    }
    if (nLayer <= 0 || hiddenSize <= 0 || nHeads <= 0 || kvHeads <= 0 || headDim <= 0
        || intermediateSize <= 0 || nPositions <= 0 || vocabSize <= 0) {
      throw new IllegalArgumentException("model dimensions must be positive: " + this);
    }
    if (nHeads % kvHeads != 0) {
      throw new IllegalArgumentException("num_attention_heads " + nHeads
          + " is not a multiple of num_key_value_heads " + kvHeads);
    }
    if (headDim % 2 != 0) {
      throw new IllegalArgumentException("head_dim " + headDim + " is odd; rotary needs pairs");
    }
  }

  /**
   * Rotary position embedding as transformers computes it ({@code modeling_rope_utils}'s
   * {@code ROPE_INIT_FUNCTIONS}, and each model's {@code compute_default_rope_parameters}): the
   * inverse frequencies {@code theta^(-2i/d)} over the first {@code d = head_dim ·
   * partial_rotary_factor} dimensions, rescaled by the rope type, and an attention factor that
   * multiplies cos and sin.
   *
   * <ul>
   *   <li>{@code default}; {@code linear}: all divided by factor;
   *   <li>{@code llama3}: long wavelengths divided by factor, short kept, a smooth ramp between;
   *   <li>{@code yarn}: interpolated (divided by factor) below the correction range, extrapolated
   *       (kept) above it, a linear ramp over it; attention factor from mscale / mscale_all_dim or
   *       {@code 0.1 ln(factor) + 1};
   *   <li>{@code longrope}: each frequency divided by its {@code short_factor}, or in the long
   *       context by its {@code long_factor}; attention factor {@code sqrt(1 + ln(factor) /
   *       ln(original_max_position_embeddings))} for both. Which applies is transformers'
   *       generate(): a prompt longer than original_max_position_embeddings is computed with the
   *       long factors throughout, any token at or past that position too, and the rest with the
   *       short ones ({@link LlamaConfig#longContextFrom});
   *   <li>{@code dynamic}: transformers rescales theta only past max_position_embeddings, which
   *       the server never reaches: within it, the default frequencies.
   * </ul>
   *
   * @param factor the scaling factor (linear, llama3, yarn, longrope, dynamic; 1 for default)
   * @param lowFreqFactor llama3's
   * @param highFreqFactor llama3's
   * @param originalMaxPositions the pretraining length (llama3, yarn, longrope)
   * @param attentionFactor the factor on cos and sin, already resolved (1 but for yarn and
   *     longrope)
   * @param betaFast yarn's extrapolation boundary
   * @param betaSlow yarn's interpolation boundary
   * @param truncate yarn's rounding of the correction range
   * @param shortFactor longrope's per-frequency divisors (d/2 of them); empty otherwise
   * @param longFactor longrope's divisors in the long context; empty otherwise
   * @param partialRotaryFactor the share of each head that rotates (1: all)
   */
  public record Rope(String type, double theta, double factor, double lowFreqFactor,
      double highFreqFactor, int originalMaxPositions, double attentionFactor, double betaFast,
      double betaSlow, boolean truncate, java.util.List<Double> shortFactor,
      java.util.List<Double> longFactor, double partialRotaryFactor) {

    public Rope {
      shortFactor = java.util.List.copyOf(shortFactor);
      longFactor = java.util.List.copyOf(longFactor);
    }

    /** default, linear or llama3, over the whole head. */
    public Rope(String type, double theta, double factor, double lowFreqFactor,
        double highFreqFactor, int originalMaxPositions) {
      this(type, theta, factor, lowFreqFactor, highFreqFactor, originalMaxPositions, 1, 32, 1,
          true, java.util.List.of(), java.util.List.of(), 1);
    }

    public static Rope plain(double theta) {
      return new Rope("default", theta, 1, 0, 0, 0);
    }

    /** How many of a head's {@code headDim} dimensions rotate (transformers' {@code int(...)}). */
    public int rotaryDim(int headDim) {
      return (int) (headDim * partialRotaryFactor);
    }

    /** The rotaryDim/2 inverse frequencies (longrope: of the short context). */
    public double[] inverseFrequencies(int headDim) {
      return inverseFrequencies(headDim, false);
    }

    /** Whether the rope differs in a long context (longrope with its long factors). */
    public boolean hasLongContext() {
      return !longFactor.isEmpty();
    }

    /** The rotaryDim/2 inverse frequencies, in the long context when {@code longContext}. */
    public double[] inverseFrequencies(int headDim, boolean longContext) {
      int dim = rotaryDim(headDim);
      double[] f = new double[dim / 2];
      for (int i = 0; i < f.length; i++) {
        f[i] = 1.0 / Math.pow(theta, 2.0 * i / dim);
        f[i] = switch (type) {
          case "default", "dynamic" -> f[i];
          case "linear" -> f[i] / factor;
          case "llama3" -> llama3(f[i]);
          case "longrope" -> f[i] / (longContext ? longFactor : shortFactor).get(i);
          case "yarn" -> yarn(f[i], i, dim);
          default -> throw new IllegalArgumentException("rope type " + type);
        };
      }
      return f;
    }

    private double llama3(double inv) {
      double lowFreqWavelen = originalMaxPositions / lowFreqFactor;
      double highFreqWavelen = originalMaxPositions / highFreqFactor;
      double wavelen = 2 * Math.PI / inv;
      if (wavelen < highFreqWavelen) {
        return inv;
      }
      if (wavelen > lowFreqWavelen) {
        return inv / factor;
      }
      double smooth = (originalMaxPositions / wavelen - lowFreqFactor)
          / (highFreqFactor - lowFreqFactor);
      return (1 - smooth) * inv / factor + smooth * inv;
    }

    /** yarn's blend of frequency i between extrapolation and interpolation. */
    private double yarn(double inv, int i, int dim) {
      double low = correctionDim(betaFast, dim);
      double high = correctionDim(betaSlow, dim);
      if (truncate) {
        low = Math.floor(low);
        high = Math.ceil(high);
      }
      low = Math.max(low, 0);
      high = Math.min(high, dim - 1);
      if (low == high) {
        high += 0.001; // as transformers: no singular ramp
      }
      double ramp = Math.clamp((i - low) / (high - low), 0, 1);
      double extrapolation = 1 - ramp;
      return inv / factor * (1 - extrapolation) + inv * extrapolation;
    }

    private double correctionDim(double rotations, int dim) {
      return dim * Math.log(originalMaxPositions / (rotations * 2 * Math.PI))
          / (2 * Math.log(theta));
    }
  }

  /** A plain Llama (no biases, no q/k norm) of these sizes, rope theta 10,000, untied. */
  public static LlamaConfig llama(int nLayer, int hiddenSize, int nHeads, int kvHeads,
      int intermediateSize, int nPositions, int vocabSize) {
    return new LlamaConfig("llama", nLayer, hiddenSize, nHeads, kvHeads, hiddenSize / nHeads,
        intermediateSize, nPositions, vocabSize, 1e-5, Rope.plain(10000), false, false, false,
        false, false);
  }

  public LlamaConfig withModelType(String type, boolean qkvBias, boolean qkNorm) {
    return new LlamaConfig(type, nLayer, hiddenSize, nHeads, kvHeads, headDim, intermediateSize,
        nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias, qkNorm,
        tieWordEmbeddings, slidingWindows);
  }

  public LlamaConfig withHeadDim(int headDim) {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, tieWordEmbeddings, slidingWindows);
  }

  public LlamaConfig withRope(Rope rope) {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, tieWordEmbeddings, slidingWindows);
  }

  public LlamaConfig withTiedEmbeddings() {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, true, slidingWindows);
  }

  public LlamaConfig withAttentionBias() {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, true, true, mlpBias, qkNorm,
        tieWordEmbeddings, slidingWindows);
  }

  /**
   * The prompt length past which a sequence is computed in the long context (longrope's long
   * factors, on their own rows of the rotary tables and in a cache namespace of their own), as
   * transformers' generate() switches; {@link Integer#MAX_VALUE} when the model has none within
   * its positions.
   */
  @Override
  public int longContextFrom() {
    return rope.hasLongContext() && rope.originalMaxPositions() < nPositions
        ? rope.originalMaxPositions() : Integer.MAX_VALUE;
  }

  /** Layer {@code layer}'s sliding window, 0 when it attends to the whole sequence. */
  public int window(int layer) {
    return slidingWindows.isEmpty() ? 0 : slidingWindows.get(layer);
  }

  public LlamaConfig withSlidingWindows(java.util.List<Integer> windows) {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, tieWordEmbeddings, windows);
  }
}
