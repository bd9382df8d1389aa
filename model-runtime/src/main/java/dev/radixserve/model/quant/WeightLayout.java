package dev.radixserve.model.quant;

/**
 * How a checkpoint stores a linear layer's weight of K inputs and N outputs. GPT-2's Conv1D keeps
 * it {@code [in, out]} (y = x·W as is); PyTorch's {@code nn.Linear} (Llama, Qwen, Mistral, every
 * untied LM head) keeps it {@code [out, in]} (y = x·Wᵀ).
 */
public enum WeightLayout {
  /** {@code [K, N]}: element (k, n) at k·N + n. */
  IN_OUT,
  /** {@code [N, K]}: element (k, n) at n·K + k; MatMulNBits' own row order. */
  OUT_IN;

  /** K and N of a 2-D weight of {@code shape} in this layout. */
  public long[] kn(long[] shape) {
    if (shape.length != 2) {
      throw new IllegalArgumentException("a linear weight is 2-D, got rank " + shape.length);
    }
    return this == IN_OUT ? new long[] {shape[0], shape[1]} : new long[] {shape[1], shape[0]};
  }

  /** The shape of a weight of {@code k} inputs and {@code n} outputs: {@link #kn}'s inverse. */
  public long[] shape(long k, long n) {
    return this == IN_OUT ? new long[] {k, n} : new long[] {n, k};
  }
}
