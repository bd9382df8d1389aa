package dev.radixserve.model;

/**
 * One small configuration per Llama-family architecture the loader takes, each with what sets
 * that family apart, for the tests that must cover them all (the reference checkpoints, the
 * quantized runner, the quantized server). Hidden 32, intermediate 48 and at most 64-wide
 * attention: blocks of 16 divide every K.
 */
public final class LlamaFamilies {

  /** 4 query heads over 2 kv heads (GQA), vocab 260 (the byte-level tokenizer's 257, padded). */
  public static final LlamaConfig GQA = LlamaConfig.llama(2, 32, 4, 2, 48, 128, 260);

  private LlamaFamilies() {}

  public static LlamaConfig of(String family) {
    return switch (family) {
      // original_max_position_embeddings 16: the scaling moves every frequency band at these
      // lengths
      case "llama" -> GQA.withRope(new LlamaConfig.Rope("llama3", 500000, 8, 1, 4, 16));
      // q/k/v biases, tied head
      case "qwen2" -> GQA.withModelType("qwen2", true, false).withTiedEmbeddings()
          .withRope(LlamaConfig.Rope.plain(1000000));
      // q/k norms, and head_dim 16 x 4 heads: q is 64 wide over the 32-wide residual, as
      // Qwen3's explicit head_dim allows
      case "qwen3" -> GQA.withModelType("qwen3", false, true).withHeadDim(16);
      // one kv head, linear rope scaling
      case "mistral" -> LlamaConfig.llama(2, 32, 4, 1, 48, 128, 260)
          .withModelType("mistral", false, false)
          .withRope(new LlamaConfig.Rope("linear", 10000, 2, 0, 0, 0));
      default -> throw new IllegalArgumentException("no test configuration for " + family);
    };
  }
}
