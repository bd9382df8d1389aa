package dev.radixserve.model;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.RandomLlama;
import java.nio.file.Path;

/**
 * Writes a random-weight checkpoint for benchmarks (docs/benchmarks/journal/2026-11-21-to-28.md has the commands):
 * {@code RandomCheckpointTool llama-small|gpt2-small DIR [F32|F16|BF16] [gptq|awq GROUP [act-order]]},
 * seed 0, the same weights as {@code DecodeStepBench}'s model of that name; with {@code gptq} or
 * {@code awq} its projections rounded to 4 bits per group of GROUP inputs
 * and stored as those tools store them ({@link PrequantizedCheckpoints}: GPTQ v1 or AWQ GEMM,
 * asymmetric; {@code act-order}: GPTQ's, each layer's groups a seeded shuffle of its inputs).
 * No tokenizer files: the server then uses GPT-2's vocabulary, which the model's
 * 50,257 rows match.
 */
public final class RandomCheckpointTool {

  private RandomCheckpointTool() {}

  public static void main(String[] args) {
    if (args.length < 2 || !(args[0].equals("llama-small") || args[0].equals("gpt2-small"))) {
      throw new IllegalArgumentException(
          "usage: RandomCheckpointTool llama-small|gpt2-small DIR [F32|F16|BF16] [gptq|awq GROUP [act-order]]");
    }
    DType dtype = args.length > 2 ? DType.valueOf(args[2]) : DType.BF16;
    Path dir = Path.of(args[1]);
    CheckpointQuantization q = null;
    if (args.length > 4) {
      CheckpointQuantization.Method method =
          CheckpointQuantization.Method.valueOf(args[3].toUpperCase(java.util.Locale.ROOT));
      q = new CheckpointQuantization(method, 4, Integer.parseInt(args[4]),
          method == CheckpointQuantization.Method.GPTQ ? 1 : 0,
          args.length > 5 && args[5].equals("act-order"));
    }
    try (ModelWeights w = args[0].equals("gpt2-small")
        ? RandomGpt2.create(DecodeStepBench.GPT2_SMALL, 0)
        : RandomLlama.create(DecodeStepBench.LLAMA_SMALL, 0)) {
      if (q == null) {
        PrequantizedCheckpoints.writeWeights(w, dir, dtype);
      } else {
        PrequantizedCheckpoints.write(w instanceof GptWeights g
            ? PrequantizedCheckpoints.pack(g, q, false)
            : PrequantizedCheckpoints.pack((LlamaWeights) w, q, false), dir, dtype, false);
      }
    }
  }
}
