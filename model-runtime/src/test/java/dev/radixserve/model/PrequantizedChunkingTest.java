package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointQuantization.Method;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GPTQ and AWQ checkpoints in their usual groups of 128, on a model wide enough for the groups'
 * instability to show (down_proj reads K = 1,024; ONNX Runtime's CPU MatMulNBits in 4-bit blocks
 * of 128 with zero points gave a row other bits with another row count there,
 * {@link MatMulNBitsChunkingTest}), written as those tools save them ({@link
 * PrequantizedCheckpoints}) and loaded through {@link HfModelLoader}:
 * <ul>
 *   <li>served as the CPU serves them (int8 activations, int8 head, 2 threads), a 48-token prompt
 *       prefilled in one chunk, in 3 and 5, and one token a step (as decode computes it) gives
 *       the same last logits and the same KV blocks, bit for bit: what the prefix cache needs to
 *       give cache off's tokens (served in blocks of 128, with the graph's even rows);
 *   <li>the served blocks are the checkpoint's weights exactly: with fp32 compute and a float head
 *       the logits equal the float model they decode to, to fp32 rounding.
 * </ul>
 */
class PrequantizedChunkingTest {

  /** One layer, hidden 256 (4 heads of 64 over 2 kv heads), intermediate 1,024. */
  static final dev.radixserve.model.LlamaConfig WIDE =
      dev.radixserve.model.LlamaConfig.llama(1, 256, 4, 2, 1024, 128, 260);
  private static final int BLOCK = 16;
  private static final int LENGTH = 48;

  @TempDir
  Path dir;

  @ParameterizedTest(name = "{0} v{1}, symmetric {2}, act-order {3}")
  @CsvSource({"GPTQ, 1, false, false", "GPTQ, 1, true, false", "AWQ, 0, false, false",
      "GPTQ, 0, false, true"})
  void aGroupOf128PrefixGivesTheSameBitsInAnyChunking(Method method, int offset,
      boolean symmetric, boolean actOrder) {
    CheckpointQuantization q = new CheckpointQuantization(method, 4, 128, offset, actOrder);
    PrequantizedCheckpoints.Packed<LlamaWeights> packed;
    try (LlamaWeights model = RandomLlama.create(WIDE, 43)) {
      packed = PrequantizedCheckpoints.pack(model, q, symmetric);
    }
    PrequantizedCheckpoints.write(packed, dir, DType.F16, symmetric);
    int[] prompt = new SplittableRandom(7).ints(LENGTH, 0, WIDE.vocabSize()).toArray();
    try (ModelWeights loaded = HfModelLoader.loadWeights(dir)) {
      CheckpointQuantization found = loaded.checkpointQuantization();
      assertEquals(q, found);
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), found,
          QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO).resolvedFor(WIDE.hiddenSize());
      assertEquals(found.groupSize(), served.blockSize());
      try (OnnxModelRunner cpu = OnnxModelRunner.create(loaded, BLOCK, 16, 2, Map.of(), served);
          Arena arena = Arena.ofConfined()) {
        int[] table = {5, 1, 12};
        float[] whole = cpu.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table))))[0];
        int[][] tables = {{8, 11, 4}, {2, 15, 9}, {6, 13, 10}};
        int[] chunkings = {3, 5, LENGTH};
        for (int c = 0; c < chunkings.length; c++) {
          int chunks = chunkings[c];
          float[] last = null;
          for (int i = 0; i < chunks; i++) {
            int a = i * LENGTH / chunks;
            int b = (i + 1) * LENGTH / chunks;
            last = cpu.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                Arrays.copyOfRange(prompt, a, b), a, tables[c]))))[0];
          }
          String what = served.key() + " in " + chunks + " chunks";
          assertArrayEquals(whole, last, 0f, what + ": last logits");
          for (int k = 0; k < table.length; k++) {
            assertArrayEquals(kv(cpu, table[k], arena), kv(cpu, tables[c][k], arena),
                what + ": KV block " + k);
          }
        }
      }
      QuantSpec exact = QuantSpec.forModel(QuantSpec.none(), found, 0,
          QuantSpec.HeadSetting.AUTO).withHeadMode(QuantMode.NONE);
      try (OnnxModelRunner reference = OnnxModelRunner.create(packed.dequantized(), BLOCK, 4, 1);
          OnnxModelRunner fp32Compute = OnnxModelRunner.create(loaded, BLOCK, 4, 1, Map.of(),
              exact)) {
        ForwardBatch batch = new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, new int[] {0, 1, 2}, true)));
        double error = OnnxModelRunnerTest.worstRelativeError(fp32Compute.forward(batch),
            reference.forward(batch));
        assertTrue(error < 1e-5, exact.key() + " against the decoded float model: " + error);
      }
    }
  }

  private static byte[] kv(OnnxModelRunner runner, int block, Arena arena) {
    MemorySegment buffer = arena.allocate(runner.kvPool().blockBytes());
    runner.kvPool().exportBlock(block, buffer);
    return buffer.toArray(ValueLayout.JAVA_BYTE);
  }
}
