package dev.radixserve.model;

import java.util.List;
import java.util.Map;

/**
 * Hyper-parameters of Gemma 2 ({@code gemma2}) and Gemma 3's text decoder ({@code gemma3_text})
 * as Hugging Face's {@code config.json} names them. What sets Gemma apart from {@link LlamaConfig}
 * (vLLM's gemma2.py beside llama.py):
 *
 * <pre>
 *   x = embed(ids) · sqrt(hidden_size)          (the normalizer rounded to the hidden dtype)
 *   per layer:  a = attn(rms(x))                 scale query_pre_attn_scalar^-0.5, scores
 *                                                soft-capped (Gemma 2), a sliding window on
 *                                                sliding_attention layers, rope per layer type,
 *                                                q/k RMSNorm per head before rope (Gemma 3)
 *               x += rms(o_proj(a))              post_attention_layernorm, before the add
 *               m = rms(x)                       pre_feedforward_layernorm
 *               x += rms(down(gelu_tanh(gate(m)) * up(m)))     post_feedforward_layernorm
 *   logits = cap · tanh(lm_head(rms(x)) / cap)   final_logit_softcapping (when set)
 *   every rms: x / sqrt(mean(x²) + eps) · (1 + w), in fp32
 * </pre>
 *
 * @param modelType {@code model_type}: gemma2 or gemma3_text
 * @param nLayer {@code num_hidden_layers}
 * @param hiddenSize {@code hidden_size}
 * @param nHeads {@code num_attention_heads}
 * @param kvHeads {@code num_key_value_heads} (divides nHeads)
 * @param headDim {@code head_dim}
 * @param intermediateSize the GeGLU MLP's hidden width
 * @param nPositions {@code max_position_embeddings}
 * @param vocabSize rows of the embedding
 * @param rmsNormEps every RMSNorm's epsilon
 * @param queryPreAttnScalar {@code query_pre_attn_scalar}: scores are scaled by its -1/2 power
 * @param attnSoftcap {@code attn_logit_softcapping} (0: none)
 * @param finalSoftcap {@code final_logit_softcapping} (0: none)
 * @param slidingWindow {@code sliding_window} of the sliding layers, in Hugging Face's meaning
 *     (a query sees itself and the window - 1 keys before it)
 * @param layerTypes {@code layer_types}, one per layer
 * @param rope the rotary embedding of each layer type
 * @param attentionBias q/k/v/o projections have biases ({@code attention_bias})
 * @param qkNorm per-head RMSNorm of q and k before rotary (Gemma 3)
 * @param tieWordEmbeddings the LM head is {@code embed_tokens.weight}
 */
public record GemmaConfig(
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
    double queryPreAttnScalar,
    double attnSoftcap,
    double finalSoftcap,
    int slidingWindow,
    List<LayerType> layerTypes,
    Map<LayerType, LlamaConfig.Rope> rope,
    boolean attentionBias,
    boolean qkNorm,
    boolean tieWordEmbeddings) implements ModelShape {

  /** {@code layer_types}' two values. */
  public enum LayerType {
    SLIDING_ATTENTION("sliding_attention"),
    FULL_ATTENTION("full_attention");

    private final String hfName;

    LayerType(String hfName) {
      this.hfName = hfName;
    }

    public String hfName() {
      return hfName;
    }

    public static LayerType of(String hfName) {
      for (LayerType t : values()) {
        if (t.hfName.equals(hfName)) {
          return t;
        }
      }
      throw new IllegalArgumentException("layer type " + hfName
          + " is not supported (sliding_attention or full_attention)");
    }
  }

  public GemmaConfig {
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
    if (queryPreAttnScalar <= 0 || attnSoftcap < 0 || finalSoftcap < 0) {
      throw new IllegalArgumentException("query_pre_attn_scalar " + queryPreAttnScalar
          + " must be positive, soft-caps " + attnSoftcap + ", " + finalSoftcap
          + " positive or absent");
    }
    layerTypes = List.copyOf(layerTypes);
    if (layerTypes.size() != nLayer) {
      throw new IllegalArgumentException("layer_types has " + layerTypes.size()
          + " entries for " + nLayer + " layers");
    }
    if (layerTypes.contains(LayerType.SLIDING_ATTENTION) && slidingWindow <= 0) {
      throw new IllegalArgumentException("sliding_window " + slidingWindow
          + " must be positive: layer_types has sliding_attention layers");
    }
    rope = Map.copyOf(rope);
    for (LayerType t : layerTypes) {
      if (!rope.containsKey(t)) {
        throw new IllegalArgumentException("no rope parameters for " + t.hfName() + " layers");
      }
    }
  }

  public LayerType layerType(int layer) {
    return layerTypes.get(layer);
  }

  /** Layer {@code layer}'s window in Hugging Face's meaning; 0 for a full-attention layer. */
  public int window(int layer) {
    return layerType(layer) == LayerType.SLIDING_ATTENTION ? slidingWindow : 0;
  }

  public LlamaConfig.Rope rope(int layer) {
    return rope.get(layerType(layer));
  }

  /** {@code query_pre_attn_scalar ** -0.5}, the score scale. */
  public float attentionScale() {
    return (float) Math.pow(queryPreAttnScalar, -0.5);
  }
}
