package dev.radixserve.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.weights.LoadedModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How far a GGUF file served by radixserve agrees with a reference run: for each file and
 * quantization route, greedy decoding from each prompt of a transformers {@code expected.json},
 * reported as the share of tokens before the first divergence from the reference's greedy
 * tokens, the teacher-forced top-1 agreement, and the largest logprob difference of the
 * reference's token. A measurement, not a test (docs/benchmarks/journal/2026-11-21-to-28.md has the command and the figures):
 *
 * <pre>
 *   GgufAgreementBench REFERENCE.json FILE.gguf[:ROUTE] ...
 *   GgufAgreementBench --logits REFERENCE.json FILE.gguf ROUTE,ROUTE   (each against exact)
 *   GgufAgreementBench --vs-exact FILE.gguf ROUTE STEPS PROMPT...       (no reference needed)
 *   ROUTE: exact (file's blocks computed in fp32; floats as they are; default),
 *          served (what serve runs on the CPU by default: the file's Q8_0/Q4_0 blocks repacked,
 *          Q4_K projections on their codes with offsets, other blocks requantized to the
 *          nearest mode, accuracy_level 4, the LM head and
 *          embedding as QuantSpec's auto),
 *          served-int8 (the same with the Q4_K projections requantized too: --quantization int8,
 *          serve's default for K-quant files until 2026-12-02),
 *          int8 | int4 (--quantization of a float-served file: requantized from its weights)
 * </pre>
 */
public final class GgufAgreementBench {

  private GgufAgreementBench() {}

  public static void main(String[] args) throws Exception {
    if (args[0].equals("--vs-exact")) {
      vsExact(Path.of(args[1]), args[2], Integer.parseInt(args[3]),
          java.util.Arrays.copyOfRange(args, 4, args.length));
      return;
    }
    if (args[0].equals("--logits")) {
      logits(new ObjectMapper().readTree(Path.of(args[1]).toFile()), Path.of(args[2]),
          args[3].split(","));
      return;
    }
    JsonNode expected = new ObjectMapper().readTree(Path.of(args[0]).toFile());
    for (int i = 1; i < args.length; i++) {
      String[] spec = args[i].split(":");
      Path file = Path.of(spec[0]);
      String route = spec.length > 1 ? spec[1] : "exact";
      try (LoadedModel m = GgufModelLoader.load(file)) {
        QuantSpec q = spec(m, route);
        System.out.printf("%-28s %-7s %-44s %s%n", file.getFileName(), route,
            q.quantized() ? q.key() : "fp32", measure(m, q, expected));
      }
    }
  }

  static QuantSpec spec(LoadedModel m, String route) {
    CheckpointQuantization c = m.weights().checkpointQuantization();
    long hidden = m.weights().config().hiddenSize();
    return switch (route) {
      case "exact" -> c == null ? QuantSpec.none()
          : QuantSpec.forModel(QuantSpec.none(), c, 0, QuantSpec.HeadSetting.AUTO)
              .withHeadMode(QuantMode.NONE);
      case "served", "served-int8" -> QuantSpec.forModel(QuantSpec.none(), c,
          m.weights().requantizeAs(),
          route.equals("served") ? m.weights().offsetWeights() : java.util.Set.of(),
          m.weights().q8Tables(), QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(hidden);
      case "int8", "int4" -> QuantSpec.forModel(QuantSpec.of(QuantMode.parse(route))
          .withHeadMode(QuantMode.NONE), c, QuantSpec.CPU_ACCURACY_LEVEL,
          QuantSpec.HeadSetting.AUTO);
      default -> throw new IllegalArgumentException("route " + route);
    };
  }

  /** e.g. {@code before-divergence 20/20 (1.000), top-1 20/20, max |Δ logprob| 3.1e-05}. */
  static String measure(LoadedModel m, QuantSpec q, JsonNode expected) {
    int before = 0;
    int total = 0;
    int top1 = 0;
    double worst = 0;
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 64, 1, Map.of(), q)) {
      int[] table = new int[16];
      java.util.Arrays.setAll(table, j -> j);
      for (JsonNode run : expected.get("runs")) {
        int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
        List<Integer> want = new ArrayList<>();
        run.get("steps").forEach(s -> want.add(s.get("token").asInt()));
        // free-running greedy
        float[] logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table))))[0];
        boolean diverged = false;
        for (int step = 0; step < want.size(); step++) {
          int token = LogitsSampler.argmax(logits);
          diverged |= token != want.get(step);
          before += diverged ? 0 : 1;
          logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {token}, prompt.length + step, table))))[0];
        }
        // teacher-forced: the reference's tokens fed, our argmax and logprob of its token
        logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table))))[0];
        for (int step = 0; step < want.size(); step++) {
          JsonNode s = run.get("steps").get(step);
          top1 += LogitsSampler.argmax(logits) == want.get(step) ? 1 : 0;
          double[] lp = ReferenceGpt2.logSoftmax(TransformersCheckpointTest.toDoubles(logits));
          worst = Math.max(worst, Math.abs(lp[want.get(step)]
              - s.get("top_logprobs").get(0).asDouble()));
          logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {want.get(step)}, prompt.length + step, table))))[0];
        }
        total += want.size();
      }
    }
    return String.format("before-divergence %d/%d (%.3f), top-1 %d/%d, max |dlogprob| %.2e",
        before, total, (double) before / total, top1, total, worst);
  }

  /**
   * {@code --logits REFERENCE.json FILE.gguf ROUTE,ROUTE...}: each route's logits against the
   * exact route's (the file's own weights, dequantized), over the reference's prompts and tokens
   * teacher-forced: the worst relative error (max |Δ logit| over the row's max |logit|) and the
   * worst and mean KL divergence of the next-token distributions.
   */
  static void logits(JsonNode expected, Path file, String[] routes) {
    try (LoadedModel m = GgufModelLoader.load(file)) {
      List<float[]> exact = rows(m, spec(m, "exact"), expected);
      for (String route : routes) {
        List<float[]> got = rows(m, spec(m, route), expected);
        double worstRel = 0;
        double worstKl = 0;
        double sumKl = 0;
        for (int i = 0; i < exact.size(); i++) {
          float[] a = exact.get(i);
          float[] b = got.get(i);
          double max = 0;
          double diff = 0;
          for (int j = 0; j < a.length; j++) {
            max = Math.max(max, Math.abs(a[j]));
            diff = Math.max(diff, Math.abs(a[j] - b[j]));
          }
          worstRel = Math.max(worstRel, diff / max);
          double[] p = ReferenceGpt2.logSoftmax(TransformersCheckpointTest.toDoubles(a));
          double[] q = ReferenceGpt2.logSoftmax(TransformersCheckpointTest.toDoubles(b));
          double kl = 0;
          for (int j = 0; j < p.length; j++) {
            kl += Math.exp(p[j]) * (p[j] - q[j]);
          }
          worstKl = Math.max(worstKl, kl);
          sumKl += kl;
        }
        System.out.printf("%-28s %-5s vs exact: worst relative logit error %.2e, KL worst %.2e"
            + " mean %.2e (%d rows)%n", file.getFileName(), route, worstRel, worstKl,
            sumKl / exact.size(), exact.size());
      }
    }
  }

  /** Every teacher-forced step's logits under {@code q}. */
  static List<float[]> rows(LoadedModel m, QuantSpec q, JsonNode expected) {
    List<float[]> out = new ArrayList<>();
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 64, 1, Map.of(), q)) {
      int[] table = new int[16];
      java.util.Arrays.setAll(table, j -> j);
      for (JsonNode run : expected.get("runs")) {
        int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
        float[] logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table))))[0];
        for (int step = 0; step < run.get("steps").size(); step++) {
          out.add(logits);
          logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {run.get("steps").get(step).get("token").asInt()},
              prompt.length + step, table))))[0];
        }
      }
    }
    return out;
  }

  /**
   * {@code --vs-exact FILE.gguf ROUTE STEPS PROMPT...}: the route against the file's own weights
   * dequantized and computed in fp32 (exact), with no outside reference: exact decodes STEPS
   * greedy tokens from each prompt; the route is fed the same tokens (teacher-forced) and gives
   * the mean and largest |Δ logprob| of exact's token and the share of steps whose argmax is
   * exact's; then it decodes freely, giving the share of tokens before the first divergence.
   * One session at a time (exact's fp32 weights are gone before the route's are made).
   */
  static void vsExact(Path file, String route, int steps, String[] prompts) {
    try (LoadedModel m = GgufModelLoader.load(file)) {
      int[] table = new int[(steps + 512) / 4 + 1];
      java.util.Arrays.setAll(table, j -> j);
      List<int[]> encoded = new ArrayList<>();
      for (String p : prompts) {
        encoded.add(m.tokenizer().encode(p));
      }
      List<int[]> tokens = new ArrayList<>();
      List<double[]> exactLp = new ArrayList<>();
      long t0 = System.nanoTime();
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, table.length, 2,
          Map.of(), spec(m, "exact"))) {
        for (int[] prompt : encoded) {
          int[] out = new int[steps];
          double[] lps = new double[steps];
          float[] logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(prompt, 0, table))))[0];
          for (int s = 0; s < steps; s++) {
            out[s] = LogitsSampler.argmax(logits);
            lps[s] = ReferenceGpt2.logSoftmax(TransformersCheckpointTest.toDoubles(logits))[out[s]];
            logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                new int[] {out[s]}, prompt.length + s, table))))[0];
          }
          tokens.add(out);
          exactLp.add(lps);
        }
      }
      long t1 = System.nanoTime();
      QuantSpec q = spec(m, route);
      double sum = 0;
      double worst = 0;
      int top1 = 0;
      int before = 0;
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, table.length, 2,
          Map.of(), q)) {
        for (int i = 0; i < encoded.size(); i++) {
          int[] prompt = encoded.get(i);
          int[] want = tokens.get(i);
          float[] logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(prompt, 0, table))))[0];
          for (int s = 0; s < steps; s++) {
            top1 += LogitsSampler.argmax(logits) == want[s] ? 1 : 0;
            double d = Math.abs(ReferenceGpt2.logSoftmax(
                TransformersCheckpointTest.toDoubles(logits))[want[s]] - exactLp.get(i)[s]);
            sum += d;
            worst = Math.max(worst, d);
            logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                new int[] {want[s]}, prompt.length + s, table))))[0];
          }
          logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(prompt, 0, table))))[0];
          for (int s = 0; s < steps; s++) {
            int token = LogitsSampler.argmax(logits);
            if (token != want[s]) {
              break;
            }
            before++;
            logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                new int[] {token}, prompt.length + s, table))))[0];
          }
        }
      }
      int total = steps * prompts.length;
      System.out.printf("%-24s %-6s %-40s vs exact: mean |dlogprob| %.4f, max %.4f, top-1 %d/%d"
          + " (%.3f), before divergence %d/%d (%.3f); exact %.0f s, route %.0f s%n",
          file.getFileName(), route, q.quantized() ? q.key() : "fp32", sum / total, worst, top1,
          total, (double) top1 / total, before, total, (double) before / total,
          (t1 - t0) / 1e9, (System.nanoTime() - t1) / 1e9);
    }
  }
}
