package dev.radixserve.model;

import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LoadedModel;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * What a speculative verification step costs the runner, against a decode step: one sequence at
 * a real context (its prompt prefilled first), then steps of T new tokens (the decoded token and
 * T - 1 draft tokens) returning a logits row for every token (as verification asks) or only the
 * last (as a prefill chunk does). The difference between the two is the LM head's rows and their
 * copy out of ONNX Runtime. Run as a main class:
 *
 * <pre>
 *   VerifyStepBench MODEL_DIR [int8|int4|none] [context = 400] [steps = 15] [threads = 2]
 * </pre>
 *
 * Prints, per T, the median step in ms and as a multiple of the decode step (T = 1).
 */
public final class VerifyStepBench {

  private static final int BLOCK = 16;

  private VerifyStepBench() {}

  /** On a thread with a 16 MiB stack, as {@link DecodeStepBench#main} explains. */
  public static void main(String[] args) throws Exception {
    DecodeStepBench.onLargeStack(() -> bench(args));
  }

  private static void bench(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    QuantMode mode = QuantMode.parse(args.length > 1 ? args[1] : "int8");
    int context = args.length > 2 ? Integer.parseInt(args[2]) : 400;
    int steps = args.length > 3 ? Integer.parseInt(args[3]) : 15;
    int threads = args.length > 4 ? Integer.parseInt(args[4]) : 2;
    int maxT = 9;
    LoadedModel loaded = HfModelLoader.load(dir);
    ModelShape config = loaded.weights().config();
    QuantSpec quant = QuantSpec.of(mode).resolvedFor(config.hiddenSize());
    int blocks = (context + maxT + BLOCK) / BLOCK + 1;
    int[] table = new int[blocks];
    Arrays.setAll(table, i -> i);
    try (ModelWeights w = loaded.weights();
        OnnxModelRunner runner = OnnxModelRunner.create(w, BLOCK, blocks, threads,
            java.util.Map.of(), quant)) {
      int vocab = config.vocabSize();
      int[] prompt = new int[context];
      Arrays.setAll(prompt, i -> (i * 7919 + 13) % Math.min(vocab, 1000));
      runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(prompt, 0, table))));
      System.out.printf("model %s, %s, context %d, %d steps per point, %d threads%n", dir, quant,
          context, steps, threads);
      System.out.println("| T | last row only, ms | every row, ms | every row / decode |");
      System.out.println("|---:|---:|---:|---:|");
      // every length once first, unmeasured: the JIT compiles the engine's and the attention
      // kernel's code in the first steps, which would otherwise fall on T = 1 alone
      for (int t = 1; t <= maxT; t++) {
        median(runner, context, table, t, true, 5);
      }
      double decode = 0;
      for (int t = 1; t <= maxT; t++) {
        double last = median(runner, context, table, t, false, steps);
        double all = t == 1 ? last : median(runner, context, table, t, true, steps);
        if (t == 1) {
          decode = last;
        }
        System.out.printf("| %d | %.1f | %.1f | %.2f |%n", t, last, all, all / decode);
      }
    }
  }

  private static double median(OnnxModelRunner runner, int context, int[] table, int t,
      boolean allLogits, int steps) {
    double[] ms = new double[steps];
    for (int i = -3; i < steps; i++) {
      int[] tokens = new int[t];
      for (int k = 0; k < t; k++) {
        tokens[k] = Math.floorMod(i * 31 + k * 17 + 5, 1000);
      }
      long t0 = System.nanoTime();
      runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(tokens, context, table, allLogits))));
      if (i >= 0) {
        ms[i] = (System.nanoTime() - t0) / 1e6;
      }
    }
    Arrays.sort(ms);
    return ms[steps / 2];
  }
}
