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
   * Decode step time on the GPT-2-small shape (random weights) at batch 1/16/64/256 × context
   * 128/1024, against the HBM roofline: bytes a step must read (weights + the batch's KV) over
   * the copy bandwidth measured in the same run. Writes the table to
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
    rows.add("| batch | context | step ms (median of 10) | bytes read (MB) | roofline ms | ratio |");
    rows.add("|---|---|---|---|---|---|");
    int blocksNeeded = 256 * 1024 / block;
    try (GptWeights w = RandomGpt2.create(gpt2, 1);
        BoundModelRunner runner = BoundModelRunner.create(w, CUDA, block, blocksNeeded, 0)) {
      long weightBytes = 0;
      for (long[] shape : dev.radixserve.model.weights.GptWeights.expectedShapes(gpt2).values()) {
        weightBytes += Arrays.stream(shape).reduce(1, (x, y) -> x * y) * 2;
      }
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
          ForwardBatch step = new ForwardBatch(seqs);
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
          double ms = times[times.length / 2] / 1e6;
          long kvBytes = (long) batch * context * DeviceKvPool.bytesPerBlock(gpt2, 1,
              GraphDtype.FLOAT16);
          double bytes = weightBytes + kvBytes;
          double roofline = bytes / bandwidth * 1e3;
          rows.add(String.format("| %d | %d | %.3f | %.1f | %.3f | %.2f |", batch, context, ms,
              bytes / 1e6, roofline, ms / roofline));
        }
      }
    }
    rows.add("");
    rows.add(String.format("copy bandwidth measured in the same run: %.1f GB/s", bandwidth / 1e9));
    String table = String.join("\n", rows);
    System.out.println(table);
    Path out = Path.of("target", "gpu", "decode-table.md");
    Files.createDirectories(out.getParent());
    Files.writeString(out, table + "\n");
    assertTrue(bandwidth > 0);
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
