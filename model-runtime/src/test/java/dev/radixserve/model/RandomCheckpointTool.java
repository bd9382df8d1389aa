package dev.radixserve.model;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.weights.RandomLlama;
import java.nio.file.Path;

/**
 * Writes a random-weight checkpoint for benchmarks (BENCHMARKS.md has the commands):
 * {@code RandomCheckpointTool llama-small|gpt2-small DIR [F32|F16|BF16]}, seed 0, the same weights
 * as {@code DecodeStepBench}'s model of that name. No tokenizer files: the server then uses
 * GPT-2's vocabulary, which the model's 50,257 rows match.
 */
public final class RandomCheckpointTool {

  private RandomCheckpointTool() {}

  public static void main(String[] args) {
    if (args.length < 2 || !(args[0].equals("llama-small") || args[0].equals("gpt2-small"))) {
      throw new IllegalArgumentException(
          "usage: RandomCheckpointTool llama-small|gpt2-small DIR [F32|F16|BF16]");
    }
    DType dtype = args.length > 2 ? DType.valueOf(args[2]) : DType.BF16;
    if (args[0].equals("gpt2-small")) {
      try (GptWeights w = RandomGpt2.create(DecodeStepBench.GPT2_SMALL, 0)) {
        HfModelWriter.write(w, Path.of(args[1]), dtype);
      }
      return;
    }
    try (LlamaWeights w = RandomLlama.create(DecodeStepBench.LLAMA_SMALL, 0)) {
      HfModelWriter.write(w, Path.of(args[1]), dtype, 1);
    }
  }
}
