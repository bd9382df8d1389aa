package dev.radixserve.model;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.weights.HfModelLoader;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Gemma graph through the IOBinding runner (the path {@code --device cuda} and {@code --dtype
 * float16} take), on the CPU, with the weights transformers wrote ({@code gemma/} fixtures: soft-caps,
 * windows of 8 over 54-token sequences, q/k norms, two ropes): fp32 gives the plain runner's bits,
 * fp16 the fp32 greedy tokens except at near-ties.
 */
class GemmaBoundRunnerTest {

  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3"})
  void fp32OnTheCpuGivesThePlainRunnersBits(String name) {
    BoundModelRunnerTest.assertPlainRunnersBits(
        HfModelLoader.loadWeights(GemmaCheckpointTest.resource(name)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3"})
  void fp16GivesTheFp32GreedyTokensExceptAtNearTies(String name) {
    BoundModelRunnerTest.assertGreedyParity(BoundModelRunnerTest.testDevice(GraphDtype.FLOAT16),
        HfModelLoader.loadWeights(GemmaCheckpointTest.resource(name)));
  }
}
