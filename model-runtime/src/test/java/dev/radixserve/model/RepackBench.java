package dev.radixserve.model;

import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.WeightLayout;
import dev.radixserve.model.weights.HfModelLoader;
import java.nio.file.Path;
import java.util.List;

/**
 * How long repacking a GPTQ/AWQ checkpoint's layers into MatMulNBits takes, on one thread
 * (docs/benchmarks/journal/2026-11-21-to-28.md, "Pre-quantized GPTQ and AWQ checkpoints"): {@code RepackBench DIR [ROUNDS]}
 * prints each round's time for every layer of the checkpoint in DIR.
 */
public final class RepackBench {

  private RepackBench() {}

  public static void main(String[] args) {
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 5;
    try (ModelWeights w = HfModelLoader.loadWeights(Path.of(args[0]))) {
      CheckpointQuantization q = w.checkpointQuantization();
      List<String> modules = w.tensors().keySet().stream().filter(n -> n.endsWith(".qweight"))
          .map(n -> n.substring(0, n.length() - ".qweight".length())).toList();
      long codes = 0;
      for (String m : modules) {
        codes += w.tensor(m + ".qweight").elementCount() * q.packFactor();
      }
      for (int round = 0; round < rounds; round++) {
        long start = System.nanoTime();
        long check = 0;
        for (String m : modules) {
          // GPTQ/AWQ codes: packed alike for every family
          check += CheckpointRepacker.repack(q, m, WeightLayout.OUT_IN, w.tensors())
              .packed()[0];
        }
        double ms = (System.nanoTime() - start) / 1e6;
        System.out.printf("%s: round %d, %d layers (%,d codes) in %.0f ms, %.2f ns a code"
            + " (check %d)%n", q.describe(), round, modules.size(), codes, ms, ms * 1e6 / codes,
            check);
      }
    }
  }
}
