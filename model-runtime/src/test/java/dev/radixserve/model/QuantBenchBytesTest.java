package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import org.junit.jupiter.api.Test;

/** The bytes {@link QuantBench}'s two rooflines count: the format's, and MLAS's block sums. */
class QuantBenchBytesTest {

  private static final ModelConfig GPT2_SMALL =
      new ModelConfig(12, 12, 768, 1024, 50257, 1e-5, "gelu_new");

  @Test
  void blockSumsAreOneFloatPerBlockOfEveryQuantizedMatrix() {
    // per layer: qkv 768 -> 2304, proj 768 -> 768, fc 768 -> 3072 (24 blocks of 32 along K each),
    // fc2 3072 -> 768 (96 blocks); the int8 head, 768 -> 50257, in blocks of 128 (auto): 6
    long layer = 4L * (2304 * 24 + 768 * 24 + 3072 * 24 + 768 * 96);
    long head = 4L * 50257 * 6;
    assertEquals(12 * layer + head,
        QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4)));
    assertEquals(12 * layer,
        QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4).withLmHead(false)));
  }

  /** Pins the format's bytes (the first roofline), which share the matrix list with the above. */
  @Test
  void formatBytesPerStepOfEachMode() {
    assertEquals(95_007_870L, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4)));
    assertEquals(135_846_552L, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT8)));
    assertEquals(494_619_648L, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.none()));
    assertEquals(209_292_288L,
        QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4).withLmHead(false)));
  }

  @Test
  void noneWithoutTheInt8ComputePath() {
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.none()));
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL,
        QuantSpec.of(QuantMode.INT4).withAccuracyLevel(0)));
  }
}
