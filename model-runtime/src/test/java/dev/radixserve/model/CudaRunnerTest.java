package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.graph.CopyProbeGraph;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.ort.Allocator;
import dev.radixserve.model.ort.CudaProvider;
import dev.radixserve.model.ort.IoBinding;
import dev.radixserve.model.ort.MemoryInfo;
import dev.radixserve.model.ort.OrtEnv;
import dev.radixserve.model.ort.OrtSession;
import dev.radixserve.model.ort.OrtValue;
import dev.radixserve.model.ort.SessionOptions;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The runner on ONNX Runtime's CUDA provider: needs a GPU, the {@code -Pcuda} jar and the CUDA 12
 * libraries, so it is tagged {@code gpu} and left out of the default suite; {@code
 * docker/gpu-payload.sh run} runs it. Never run yet: written and compiled on a machine without
 * a GPU.
 */
@Tag("gpu")
class CudaRunnerTest {

  static final Device CUDA = Device.cuda(0);

  @Test
  void fp16GreedyMatchesTheFp32CpuRunnerExceptAtNearTies() {
    BoundModelRunnerTest.assertGreedyParity(CUDA);
  }

  @Test
  void bf16GreedyMatchesTheFp32CpuRunnerExceptAtNearTies() {
    BoundModelRunnerTest.assertGreedyParity(CUDA.withDtype(GraphDtype.BFLOAT16));
  }

  @Test
  void aStepMovesOnlyItsInputsAndTheLogitsRowsOverTheBus() {
    BoundModelRunnerTest.assertStepTraffic(CUDA);
  }

  /**
   * MatMulNBits on CUDA multiplies by the quantized weights as the fp32 CPU runner does at
   * {@code accuracy_level} 0 (what the server gives CUDA). bf16 only with int4: its rounding is
   * about as large as int8's own quantization error, so the test could not tell an int8 run from
   * an unquantized one.
   */
  @ParameterizedTest(name = "{0} in {1}")
  @CsvSource({"INT8, FLOAT16", "INT4, FLOAT16", "INT4, BFLOAT16"})
  void quantizedGreedyMatchesTheFp32CpuRunnerOnTheSameWeights(QuantMode mode, GraphDtype dtype) {
    BoundModelRunnerTest.assertGreedyParity(CUDA.withDtype(dtype),
        RandomGpt2.create(BoundModelRunnerTest.SMALL, 5), cudaSpec(mode));
  }

  /**
   * Decode step time on the GPT-2-small shape (random weights) at batch 1/16/64/256 × context
   * 128/1024, unquantized (fp16) and with int8 and int4 weights, against the HBM roofline: bytes a
   * step must read (weights in the mode's format + the batch's KV) over the copy bandwidth
   * measured in the same run; then a 512-token prefill per mode. Writes the table to
   * {@code target/gpu/decode-table.md}.
   */
  @Test
  void decodeStepTable() throws IOException {
    ModelConfig gpt2 = new ModelConfig(12, 12, 768, 1024, 50257, 1e-5, "gelu_new");
    int block = 16;
    int[] batches = {1, 16, 64, 256};
    int[] contexts = {128, 1024};
    double bandwidth = copyBandwidth();
    List<String> rows = new ArrayList<>();
    rows.add("| weights | batch | context | step ms (median of 10) | bytes read (MB)"
        + " | roofline ms | ratio |");
    rows.add("|---|---|---|---|---|---|---|");
    List<String> prefills = new ArrayList<>();
    int blocksNeeded = 256 * 1024 / block;
    try (GptWeights w = RandomGpt2.create(gpt2, 1)) {
      for (QuantMode mode : QuantMode.values()) {
        QuantSpec spec = cudaSpec(mode);
        try (BoundModelRunner runner = BoundModelRunner.create(w, CUDA, block, blocksNeeded, 0,
            spec)) {
          long weightBytes = QuantBench.stepBytes(gpt2, spec, 2);
          for (int context : contexts) {
            for (int batch : batches) {
              List<ForwardBatch.Seq> seqs = new ArrayList<>();
              int perSeq = context / block;
              for (int s = 0; s < batch; s++) {
                int[] table = new int[perSeq];
                for (int k = 0; k < perSeq; k++) {
                  table[k] = s * perSeq + k;
                }
                seqs.add(new ForwardBatch.Seq(new int[] {(s * 7) % 50257}, context - 1, table));
              }
              double ms = medianMs(runner, new ForwardBatch(seqs));
              long kvBytes = (long) batch * context * DeviceKvPool.bytesPerBlock(gpt2, 1,
                  GraphDtype.FLOAT16);
              double bytes = weightBytes + kvBytes;
              double roofline = bytes / bandwidth * 1e3;
              rows.add(String.format("| %s | %d | %d | %.3f | %.1f | %.3f | %.2f |", mode, batch,
                  context, ms, bytes / 1e6, roofline, ms / roofline));
            }
          }
          int[] prompt = new int[512];
          int[] table = new int[512 / block];
          for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (i * 31 + 100) % 50257;
          }
          for (int k = 0; k < table.length; k++) {
            table[k] = k;
          }
          double ms = medianMs(runner, new ForwardBatch(List.of(
              new ForwardBatch.Seq(prompt, 0, table))));
          prefills.add(String.format("%s: a 512-token prefill (batch 1) in %.3f ms, %.0f tok/s",
              mode, ms, 512 / (ms / 1e3)));
        }
      }
    }
    rows.add("");
    rows.addAll(prefills);
    rows.add("");
    rows.add(String.format("copy bandwidth measured in the same run: %.1f GB/s", bandwidth / 1e9));
    String table = String.join("\n", rows);
    System.out.println(table);
    Path out = Path.of("target", "gpu", "decode-table.md");
    Files.createDirectories(out.getParent());
    Files.writeString(out, table + "\n");
    assertTrue(bandwidth > 0);
  }

  /** The quantization as the server runs it on CUDA (no accuracy level: ServerConfig). */
  private static QuantSpec cudaSpec(QuantMode mode) {
    return mode == QuantMode.NONE ? QuantSpec.none() : QuantSpec.of(mode).withAccuracyLevel(0);
  }

  /** The median of 10 timed steps after 3 untimed ones, in ms. */
  private static double medianMs(BoundModelRunner runner, ForwardBatch step) {
    for (int i = 0; i < 3; i++) {
      runner.forward(step);
    }
    long[] times = new long[10];
    for (int i = 0; i < times.length; i++) {
      long t0 = System.nanoTime();
      runner.forward(step);
      times[i] = System.nanoTime() - t0;
    }
    Arrays.sort(times);
    return times[times.length / 2] / 1e6;
  }

  /** Bytes per second of {@code y = x + 0} over 1 GiB of fp16 in device memory (read + write). */
  static double copyBandwidth() {
    long elements = 512L << 20;
    try (OrtEnv env = OrtEnv.create("bandwidth");
        SessionOptions options = SessionOptions.create()) {
      CudaProvider.appendTo(options, CUDA.cuda());
      try (OrtSession session = OrtSession.create(env, CopyProbeGraph.build(GraphDtype.FLOAT16),
              options);
          MemoryInfo cuda = MemoryInfo.device("Cuda", 0);
          Allocator allocator = Allocator.of(session, cuda);
          OrtValue x = allocator.tensor(GraphDtype.FLOAT16.element(), elements);
          OrtValue y = allocator.tensor(GraphDtype.FLOAT16.element(), elements);
          IoBinding binding = IoBinding.create(session)) {
        binding.bindInput(CopyProbeGraph.X, x);
        binding.bindOutput(CopyProbeGraph.Y, y);
        for (int i = 0; i < 3; i++) {
          binding.run();
          binding.synchronizeOutputs();
        }
        int runs = 10;
        long t0 = System.nanoTime();
        for (int i = 0; i < runs; i++) {
          binding.run();
        }
        binding.synchronizeOutputs();
        double seconds = (System.nanoTime() - t0) / 1e9;
        return 2.0 * elements * 2 * runs / seconds;
      }
    }
  }
}
