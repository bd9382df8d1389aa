package dev.radixserve.model.graph;

/**
 * How one layer's attention scores its keys: what {@link PagedIo#attention} writes as the
 * {@code com.microsoft.PagedAttention} node's {@code scale}, {@code local_window_size} and
 * {@code softcap} attributes.
 *
 * <p>{@code slidingWindow} has Hugging Face's meaning (a config's {@code sliding_window}): a query
 * at position q sees keys at q - W < kv <= q, itself included. ONNX Runtime's
 * {@code local_window_size} counts the same positions, so the attribute is W unchanged (the
 * attention package's {@code ScoreRule} cites the sources); 0 here means full attention and is
 * written as the attribute's default, -1.
 *
 * @param scale the multiplier of q · k (Gemma's query_pre_attn_scalar changes it)
 * @param slidingWindow positions a query sees, itself included; 0 for all of them
 * @param softcap score = softcap * tanh(score / softcap) before the softmax (Gemma 2's
 *     attn_logit_softcapping); 0 for none
 */
public record AttentionSpec(float scale, int slidingWindow, float softcap) {

  public AttentionSpec {
    if (!(scale > 0f) || Float.isInfinite(scale)) {
      throw new IllegalArgumentException("attention scale must be finite and > 0, got " + scale);
    }
    if (slidingWindow < 0) {
      throw new IllegalArgumentException("sliding window must be >= 0 (0: none), got "
          + slidingWindow);
    }
    if (!(softcap >= 0f) || Float.isInfinite(softcap)) {
      throw new IllegalArgumentException("softcap must be finite and >= 0 (0: none), got "
          + softcap);
    }
  }

  /** Full causal attention scaled by 1/sqrt(headDim), no soft cap: GPT-2's and Llama's. */
  public static AttentionSpec full(int headDim) {
    if (headDim <= 0) {
      throw new IllegalArgumentException("head dim must be positive, got " + headDim);
    }
    return new AttentionSpec((float) (1.0 / Math.sqrt(headDim)), 0, 0f);
  }

  /** The node's {@code local_window_size}: -1 for none, else the window as it is. */
  long localWindowSize() {
    return slidingWindow == 0 ? -1 : slidingWindow;
  }
}
