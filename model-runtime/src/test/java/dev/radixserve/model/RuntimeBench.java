package dev.radixserve.model;

import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.RandomGpt2;
import java.util.ArrayList;
import java.util.List;

/**
 * Throughput of the CPU runtime on the embedded model (ModelConfig.embeddedDefault(), RandomGpt2
 * seed 0): prefill and decode tokens/s at batch 1, 8 and 32, and the share of each step spent in
 * Java (preparing inputs, writing KV). Run as a main class; see BENCHMARKS.md for the command.
 */
public final class RuntimeBench {

  private static final int BLOCK = 16;
  private static final int PROMPT = 64;
  private static final int DECODE_STEPS = 16;

  private RuntimeBench() {}

  public static void main(String[] args) {
    int threads = args.length > 0 ? Integer.parseInt(args[0]) : 2;
    ModelConfig config = ModelConfig.embeddedDefault();
    System.out.printf("model %s, block %d, prompt %d, decode steps %d, intra-op threads %d%n",
        config, BLOCK, PROMPT, DECODE_STEPS, threads);
    try (GptWeights w = RandomGpt2.create(config, 0);
        OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, 32 * 6 + 8, threads)) {
      run(runner, 1, 2); // warm-up
      System.out.println("| batch | prefill tok/s | prefill Java share | decode tok/s | decode Java share |");
      System.out.println("|---:|---:|---:|---:|---:|");
      for (int batch : new int[] {1, 8, 32}) {
        run(runner, batch, 3);
      }
    }
  }

  private static void run(OnnxModelRunner runner, int batch, int repeats) {
    int blocksPerSeq = (PROMPT + DECODE_STEPS + BLOCK - 1) / BLOCK;
    long prefillNanos = 0;
    long prefillJava = 0;
    long decodeNanos = 0;
    long decodeJava = 0;
    for (int r = 0; r < repeats; r++) {
      List<int[]> tables = new ArrayList<>();
      List<ForwardBatch.Seq> prefill = new ArrayList<>();
      for (int s = 0; s < batch; s++) {
        int[] table = new int[blocksPerSeq];
        for (int b = 0; b < blocksPerSeq; b++) {
          table[b] = s * blocksPerSeq + b;
        }
        tables.add(table);
        int[] prompt = new int[PROMPT];
        for (int i = 0; i < PROMPT; i++) {
          prompt[i] = (i * 131 + s * 977 + r) % 50257;
        }
        prefill.add(new ForwardBatch.Seq(prompt, 0, table));
      }
      long t0 = System.nanoTime();
      float[][] logits = runner.forward(new ForwardBatch(prefill));
      prefillNanos += System.nanoTime() - t0;
      StepTimings pt = runner.lastTimings();
      prefillJava += pt.prepareNanos() + pt.writeNanos();
      int[] next = new int[batch];
      for (int s = 0; s < batch; s++) {
        next[s] = OnnxModelRunnerTest.argmax(logits[s]);
      }
      for (int step = 0; step < DECODE_STEPS; step++) {
        List<ForwardBatch.Seq> decode = new ArrayList<>();
        for (int s = 0; s < batch; s++) {
          decode.add(new ForwardBatch.Seq(new int[] {next[s]}, PROMPT + step, tables.get(s)));
        }
        long t1 = System.nanoTime();
        logits = runner.forward(new ForwardBatch(decode));
        decodeNanos += System.nanoTime() - t1;
        StepTimings dt = runner.lastTimings();
        decodeJava += dt.prepareNanos() + dt.writeNanos();
        for (int s = 0; s < batch; s++) {
          next[s] = OnnxModelRunnerTest.argmax(logits[s]);
        }
      }
    }
    double prefillTps = (double) batch * PROMPT * repeats / (prefillNanos / 1e9);
    double decodeTps = (double) batch * DECODE_STEPS * repeats / (decodeNanos / 1e9);
    System.out.printf("| %d | %.0f | %.1f%% | %.0f | %.1f%% |%n", batch, prefillTps,
        100.0 * prefillJava / prefillNanos, decodeTps, 100.0 * decodeJava / decodeNanos);
  }
}
