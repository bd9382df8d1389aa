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
    // fc2 3072 -> 768 (96 blocks); the int8 head, 768 -> 50257, in auto's blocks beside int4
    // layers, 256: 3 a row
    long layer = 4L * (2304 * 24 + 768 * 24 + 3072 * 24 + 768 * 96);
    long head = 4L * 50257 * 3;
    QuantSpec int4b32 = QuantSpec.of(QuantMode.INT4).withBlockSize(32);
    assertEquals(12 * layer + head, QuantBench.blockSumBytes(GPT2_SMALL, int4b32));
    assertEquals(12 * layer, QuantBench.blockSumBytes(GPT2_SMALL, int4b32.withLmHead(false)));
    // int4's auto blocks of 128: a quarter of the layers' sums
    assertEquals(12 * layer / 4 + head,
        QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.of(QuantMode.INT4)));
  }

  /** Pins the format's bytes (the first roofline), which share the matrix list with the above. */
  @Test
  void formatBytesPerStepOfEachMode() {
    QuantSpec int4b32 = QuantSpec.of(QuantMode.INT4).withBlockSize(32);
    // the int8 head beside int4 layers in auto's 256-weight blocks: 3 fp32 scales and 3 int8
    // zero points a row of 768 (64-weight blocks, int8's, would add 50,257 x 9 x 5 bytes)
    assertEquals(94_254_015L, QuantBench.stepBytes(GPT2_SMALL, int4b32));
    assertEquals(94_254_015L + 50_257L * 9 * 5,
        QuantBench.stepBytes(GPT2_SMALL, int4b32.withHeadBlockSize(64)));
    // int4's auto 128-weight blocks: a quarter of the layers' fp32 scales and 4-bit zero points,
    // 12 x 7,077,888 weights x (4/32 - 4/128 + 0.5/32 - 0.5/128) bytes = 8,957,952 fewer
    assertEquals(94_254_015L - 8_957_952L,
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
   * 150,771 (one per block of 256; it takes the layers' zero-point setting), then 2,927,859
   * floats: the layers' scales 12 × 221,184, the head's 150,771, biases and norms 12 × 9,984, two
   * embedding rows and the final norm 4 × 768.
   */
  @Test
  void halfWidthGraphsHalveEveryFloatButNotThePackedWeights() {
    assertEquals(494_619_648L / 2, QuantBench.stepBytes(GPT2_SMALL, QuantSpec.none(), 2));
    long packed = 12L * (3_538_944 + 110_592) + 38_597_376 + 150_771;
    long floats = 12L * 221_184 + 150_771 + 12L * 9_984 + 4 * 768;
    assertEquals(packed + 2 * floats,
        QuantBench.stepBytes(GPT2_SMALL,
            QuantSpec.of(QuantMode.INT4).withBlockSize(32).withAccuracyLevel(0), 2));
    assertEquals(94_254_015L, packed + 4 * floats, "the fp32 figure pinned above");
  }

  @Test
  void noneWithoutTheInt8ComputePath() {
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL, QuantSpec.none()));
    assertEquals(0, QuantBench.blockSumBytes(GPT2_SMALL,
        QuantSpec.of(QuantMode.INT4).withAccuracyLevel(0)));
  }
}
