package dev.radixserve.model;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.weights.RandomLlama;
import org.junit.jupiter.api.Test;

/**
 * The Llama-family graph through the IOBinding runner (the path {@code --device cuda} and
 * {@code --dtype float16} take), on the CPU: a GQA Llama (4 query heads over 2 kv heads, head
 * size 16 as ONNX Runtime's CUDA kernel accepts) gives the plain runner's bits in fp32, and the
 * fp32 greedy tokens in fp16 except at near-ties.
 */
class LlamaBoundRunnerTest {

  static final LlamaConfig SMALL = LlamaConfig.llama(2, 64, 4, 2, 96, 128, 97).withAttentionBias();

  @Test
  void fp32OnTheCpuGivesThePlainRunnersBits() {
    BoundModelRunnerTest.assertPlainRunnersBits(RandomLlama.create(SMALL, 5));
  }

  @Test
  void fp16GivesTheFp32GreedyTokensExceptAtNearTies() {
    BoundModelRunnerTest.assertGreedyParity(BoundModelRunnerTest.testDevice(GraphDtype.FLOAT16),
        RandomLlama.create(SMALL, 5));
  }
}
