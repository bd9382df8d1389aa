package dev.radixserve.model.attention;

/**
 * Which positions a query scores and how a score is bounded: the {@code local_window_size} and
 * {@code softcap} attributes of {@code com.microsoft.PagedAttention}, with ONNX Runtime's meaning
 * so that a graph means the same on the CPU as on CUDA.
 *
 * <pre>
 *   window   a query at position p sees positions kv with  p - window < kv <= p  (itself included):
 *            the last {@code window} positions, fewer near the start. ONNX Runtime's
 *            local_window_size counts the current token ("the window includes the new token and
 *            only extends to the left"; its CUDA kernel hands FlashAttention window_size_left =
 *            local_window_size - 1, which excludes it): onnxruntime
 *            docs/contrib_ops/cuda/paged_attention.md section 9.1, and PR #25927 "Fix Local
 *            Attention off by 1 bug" (GroupQueryAttention, 2025-09), which made the window include
 *            the current token to match Hugging Face. Hugging Face's sliding_window W masks
 *            q - W < kv <= q (transformers masking_utils.sliding_window_overlay), so
 *            local_window_size = W, unchanged. -1 (the default): no window.
 *   softcap  s = softcap * tanh(s / softcap) on the scaled score s = scale * q . k, before the
 *            window and the softmax (ONNX Runtime's GroupQueryAttention applies it to the scaled
 *            scores before the softmax; Gemma 2's attn_logit_softcapping does the same). 0: none.
 * </pre>
 *
 * The tanh is {@link StrictMath#tanh}: {@link Math#tanh} may be an intrinsic in compiled code and
 * a library call interpreted, and a warm kernel must give a cold one's bits ({@link StableLanes}).
 *
 * <p>What the radix cache needs: nothing. A windowed layer reads only the blocks that overlap its
 * queries' windows, but every block of a sequence stays in the pool and in the block table (the
 * full-attention layers of the same model read them, and exactness needs every position's keys as
 * they were written); the kernel simply does not read blocks before the window.
 */
record ScoreRule(int window, float softcap) {

  /** No window: every causal position. */
  static final int UNBOUNDED = Integer.MAX_VALUE;

  /** Full causal attention, no capping: the op's defaults. */
  static final ScoreRule FULL = new ScoreRule(UNBOUNDED, 0f);

  ScoreRule {
    if (window <= 0) {
      throw new IllegalArgumentException("window must be positive, got " + window);
    }
    if (!(softcap >= 0f) || Float.isInfinite(softcap)) {
      throw new IllegalArgumentException("softcap must be finite and >= 0, got " + softcap);
    }
  }

  /**
   * From the node's attributes.
   *
   * @param localWindowSize positions a query sees, itself included; -1 for all of them
   * @param softcap 0 for none
   */
  static ScoreRule fromAttributes(long localWindowSize, float softcap) {
    if (localWindowSize == -1) {
      return new ScoreRule(UNBOUNDED, softcap);
    }
    if (localWindowSize <= 0 || localWindowSize > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("local_window_size must be -1 (none) or in [1, "
          + Integer.MAX_VALUE + "], got " + localWindowSize);
    }
    return new ScoreRule((int) localWindowSize, softcap);
  }

  /** The first position seen by a query that sees {@code len} positions causally ([0, len)). */
  int from(int len) {
    return Math.max(0, len - window);
  }

  /** The scaled score {@code s}, soft-capped when the rule says so. */
  float cap(float s) {
    if (softcap == 0f) {
      return s;
    }
    return softcap * (float) StrictMath.tanh(s / softcap);
  }
}
