package dev.radixserve.model;

/**
 * GPT-2 hyper-parameters, named as in Hugging Face's {@code config.json}.
 *
 * @param nLayer transformer blocks
 * @param nHead attention heads per block
 * @param nEmbd hidden width; a multiple of {@code nHead}
 * @param nPositions longest sequence the position table covers
 * @param vocabSize rows of the token embedding (and logits width); may exceed the tokenizer's
 *     (a vocabulary padded for alignment)
 * @param layerNormEpsilon epsilon of every layer norm
 * @param activationFunction {@code gelu_new} / {@code gelu_pytorch_tanh} (tanh approximation,
 *     GPT-2's) or {@code gelu} (erf)
 * @param nInner width of the MLP's hidden layer ({@code n_inner}; Hugging Face's null means
 *     4 · nEmbd)
 * @param tieWordEmbeddings the LM head is {@code wte.weight} ({@code tie_word_embeddings}, true by
 *     default); false: it is its own {@code lm_head.weight}
 */
public record ModelConfig(
    int nLayer,
    int nHead,
    int nEmbd,
    int nPositions,
    int vocabSize,
    double layerNormEpsilon,
    String activationFunction,
    int nInner,
    boolean tieWordEmbeddings) implements ModelShape {

  public ModelConfig {
    if (nLayer <= 0 || nHead <= 0 || nEmbd <= 0 || nPositions <= 0 || vocabSize <= 0 || nInner <= 0) {
      throw new IllegalArgumentException("model dimensions must be positive: " + this);
    }
    if (nEmbd % nHead != 0) {
      throw new IllegalArgumentException("n_embd " + nEmbd + " is not a multiple of n_head " + nHead);
    }
  }

  /** GPT-2's usual shape: MLP 4 · nEmbd wide, LM head tied to the token embedding. */
  public ModelConfig(int nLayer, int nHead, int nEmbd, int nPositions, int vocabSize,
      double layerNormEpsilon, String activationFunction) {
    this(nLayer, nHead, nEmbd, nPositions, vocabSize, layerNormEpsilon, activationFunction,
        4 * nEmbd, true);
  }

  @Override
  public int headDim() {
    return nEmbd / nHead;
  }

  @Override
  public int hiddenSize() {
    return nEmbd;
  }

  /** GPT-2 caches every head: no grouped-query attention. */
  @Override
  public int kvHeads() {
    return nHead;
  }

  /** This config with an MLP {@code nInner} wide. */
  public ModelConfig withNInner(int nInner) {
    return new ModelConfig(nLayer, nHead, nEmbd, nPositions, vocabSize, layerNormEpsilon,
        activationFunction, nInner, tieWordEmbeddings);
  }

  /** This config with its own LM head ({@code lm_head.weight}, untied from {@code wte.weight}). */
  public ModelConfig withUntiedHead() {
    return new ModelConfig(nLayer, nHead, nEmbd, nPositions, vocabSize, layerNormEpsilon,
        activationFunction, nInner, false);
  }

  /** The embedded default: GPT-2 vocabulary, 4 layers, 4 heads, 256 wide, 1,024 positions. */
  public static ModelConfig embeddedDefault() {
    return new ModelConfig(4, 4, 256, 1024, 50257, 1e-5, "gelu_new");
  }
}
