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
    boolean tieWordEmbeddings) implements ModelShape {

  public LlamaConfig {
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
   * Rotary position embedding: the frequencies {@code theta^(-2i/D)}, rescaled by
   * {@code rope_scaling} ({@code default}: none; {@code linear}: all divided by factor;
   * {@code llama3}: long wavelengths divided by factor, short kept, a smooth ramp between).
   */
  public record Rope(String type, double theta, double factor, double lowFreqFactor,
      double highFreqFactor, int originalMaxPositions) {

    public static Rope plain(double theta) {
      return new Rope("default", theta, 1, 0, 0, 0);
    }

    /** The D/2 inverse frequencies, as Hugging Face's {@code ROPE_INIT_FUNCTIONS} compute them. */
    public double[] inverseFrequencies(int headDim) {
      double[] f = new double[headDim / 2];
      for (int i = 0; i < f.length; i++) {
        f[i] = 1.0 / Math.pow(theta, 2.0 * i / headDim);
        f[i] = switch (type) {
          case "default" -> f[i];
          case "linear" -> f[i] / factor;
          case "llama3" -> llama3(f[i]);
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
        tieWordEmbeddings);
  }

  public LlamaConfig withHeadDim(int headDim) {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, tieWordEmbeddings);
  }

  public LlamaConfig withRope(Rope rope) {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, tieWordEmbeddings);
  }

  public LlamaConfig withTiedEmbeddings() {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, qkvBias, oBias, mlpBias,
        qkNorm, true);
  }

  public LlamaConfig withAttentionBias() {
    return new LlamaConfig(modelType, nLayer, hiddenSize, nHeads, kvHeads, headDim,
        intermediateSize, nPositions, vocabSize, rmsNormEps, rope, true, true, mlpBias, qkNorm,
        tieWordEmbeddings);
  }
}
