package dev.radixserve.model;

/**
 * GPT-2 hyper-parameters, named as in Hugging Face's {@code config.json}.
 *
 * @param nLayer transformer blocks
 * @param nHead attention heads per block
 * @param nEmbd hidden width; a multiple of {@code nHead}
 * @param nPositions longest sequence the position table covers
 * @param vocabSize rows of the token embedding (and logits width)
 * @param layerNormEpsilon epsilon of every layer norm
 * @param activationFunction {@code gelu_new} (tanh approximation, GPT-2's) or {@code gelu} (erf)
 */
public record ModelConfig(
    int nLayer,
    int nHead,
    int nEmbd,
    int nPositions,
    int vocabSize,
    double layerNormEpsilon,
    String activationFunction) {

  public ModelConfig {
    if (nLayer <= 0 || nHead <= 0 || nEmbd <= 0 || nPositions <= 0 || vocabSize <= 0) {
      throw new IllegalArgumentException("model dimensions must be positive: " + this);
    }
    if (nEmbd % nHead != 0) {
      throw new IllegalArgumentException("n_embd " + nEmbd + " is not a multiple of n_head " + nHead);
    }
  }

  public int headDim() {
    return nEmbd / nHead;
  }

  /** The embedded default: GPT-2 vocabulary, 4 layers, 4 heads, 256 wide, 1,024 positions. */
  public static ModelConfig embeddedDefault() {
    return new ModelConfig(4, 4, 256, 1024, 50257, 1e-5, "gelu_new");
  }
}
