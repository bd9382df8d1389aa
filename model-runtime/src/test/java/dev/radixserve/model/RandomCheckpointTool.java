package dev.radixserve.model;

import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.nio.file.Path;

/**
 * Writes a random-weight Llama-family checkpoint for benchmarks (BENCHMARKS.md has the command):
 * {@code RandomCheckpointTool llama-small DIR [F32|F16|BF16]}. No tokenizer files: the server
 * then uses GPT-2's vocabulary, which the model's 50,257 rows match.
 */
public final class RandomCheckpointTool {

  private RandomCheckpointTool() {}

  public static void main(String[] args) {
    if (args.length < 2 || !args[0].equals("llama-small")) {
      throw new IllegalArgumentException("usage: RandomCheckpointTool llama-small DIR [F32|F16|BF16]");
    }
    DType dtype = args.length > 2 ? DType.valueOf(args[2]) : DType.BF16;
    try (LlamaWeights w = RandomLlama.create(DecodeStepBench.LLAMA_SMALL, 0)) {
      HfModelWriter.write(w, Path.of(args[1]), dtype, 1);
    }
  }
}
