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
    // fc2 3072 -> 768 (96 blocks); the int8 head, 768 -> 50257, in blocks of 64 (auto): 12
    long layer = 4L * (2304 * 24 + 768 * 24 + 3072 * 24 + 768 * 96);
    long head = 4L * 50257 * 12;
    QuantSpec int4b32 = QuantSpec.of(QuantMode.INT4).withBlockSize(32);
    assertEquals(12 * layer + head, QuantBench.blockSumBytes(GPT2_SMALL, int4b32));
    assertEquals(12 * layer, QuantBench.blockSumBytes(GPT2_SMALL, int4b32.withLmHead(false)));
    // int4's auto blocks of 64: half the layers' sums
    assertEquals(12 * layer / 2 + head,
        QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4)));
  }

  /** Pins the format's bytes (the first roofline), which share the matrix list with the above. */
  @Test
  void formatBytesPerStepOfEachMode() {
    QuantSpec int4b32 = QuantSpec.of(QuantMode.INT4).withBlockSize(32);
    assertEquals(96_515_580L, QuantBench.stepBytes(GPT2_SMALL, int4b32));
    // int4's auto 64-weight blocks: half the layers' fp32 scales and 4-bit zero points,
    // 12 x 7,077,888 weights x (4/32 - 4/64 + 0.5/32 - 0.5/64) bytes = 5,971,968 fewer
    assertEquals(96_515_580L - 5_971_968L,
        QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4)));
    // int8 layers in auto's 64-weight blocks: half of the 32-weight blocks' fp32 scales,
    // 12 x 7,077,888 weights x (4/32 - 4/64) bytes = 5,308,416 fewer than at 32
    assertEquals(137_052_720L - 5_308_416L,
        QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT8)));
    // the head in auto's 64-weight blocks whatever the layers' (12 scales a row)
    assertEquals(137_052_720L,
        QuantBench.stepBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT8).withBlockSize(32)));
    assertEquals(494_619_648L, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.none()));
    assertEquals(209_292_288L, QuantBench.stepBytes(GPT2_SMALL, int4b32.withLmHead(false)));
  }

  /**
   * The fp16/bf16 graphs (CUDA's): every float is 2 bytes, MatMulNBits' scales included, and the
   * packed weights and zero points are as wide as before. int4 in blocks of 32 per step: layers' 4-bit data
   * 12 × 3,538,944 and zero points 12 × 110,592, the int8 head's data 38,597,376 and zero points
   * 603,084 (one per block of 64; it takes the layers' zero-point setting), then 3,380,172
   * floats: the layers' scales 12 × 221,184, the head's 603,084, biases and norms 12 × 9,984, two
   * embedding rows and the final norm 4 × 768.
   */
  @Test
  void halfWidthGraphsHalveEveryFloatButNotThePackedWeights() {
    assertEquals(494_619_648L / 2, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.none(), 2));
    long packed = 12L * (3_538_944 + 110_592) + 38_597_376 + 603_084;
    long floats = 12L * 221_184 + 603_084 + 12L * 9_984 + 4 * 768;
    assertEquals(packed + 2 * floats,
        QuantBench.stepBytes(GPT2_SMALL,
            QuantSpec.of(QuantMode.INT4).withBlockSize(32).withAccuracyLevel(0), 2));
    assertEquals(96_515_580L, packed + 4 * floats, "the fp32 figure pinned above");
  }

  @Test
  void noneWithoutTheInt8ComputePath() {
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.none()));
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL,
        QuantSpec.of(QuantMode.INT4).withAccuracyLevel(0)));
  }
}
