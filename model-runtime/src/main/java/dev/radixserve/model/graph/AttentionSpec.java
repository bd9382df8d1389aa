package dev.radixserve.model.graph;

/**
 * What one layer's attention computes beyond plain causal softmax attention.
 *
 * @param scale the score scale (1/sqrt(head_dim) for most families)
 * @param slidingWindow Hugging Face's {@code sliding_window}: a query sees itself and the
 *     {@code slidingWindow - 1} keys before it; 0 = the whole past
 * @param softcap scores become {@code softcap · tanh(scaled / softcap)} before the softmax;
 *     0 = none
 */
public record AttentionSpec(float scale, int slidingWindow, float softcap) {

  public AttentionSpec {
    if (!(scale > 0) || slidingWindow < 0 || softcap < 0) {
      throw new IllegalArgumentException("attention scale " + scale + ", window "
          + slidingWindow + ", softcap " + softcap);
    }
  }

  /** Full causal attention scaled by 1/sqrt(headDim). */
  public static AttentionSpec plain(int headDim) {
    return new AttentionSpec((float) (1.0 / Math.sqrt(headDim)), 0, 0);
  }
}
