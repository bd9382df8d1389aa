package dev.radixserve.model;

import java.util.logging.Logger;

/**
 * Gives back the heap that making the weights grew, before ONNX Runtime pre-packs them.
 *
 * <p>Why: quantizing a checkpoint at load makes each tensor's blocks on the heap (then copies
 * them out), so a first start grows the heap by hundreds of MiB of garbage (645 MiB on the
 * Llama-3.2-1B shape at int8). G1 keeps that committed until its periodic collection, which came
 * after ONNX Runtime had already pre-packed every matrix beside it: the garbage sat on top of the
 * packed weights and set the process's peak (2,908 MiB against 1,819 serving on that shape). One
 * full collection at this point returns it (645 → 60 MiB, 22 ms), and the peak falls to 2,053
 * MiB (docs/benchmarks/journal/2026-11-28d-int8-blocks.md). A start that maps a cached weights
 * file collects too: it quantizes nothing, but what it did make before the session (the
 * tokenizer, the graph, the checkpoint's digest) left G1 with ~700 MiB resident on that shape
 * at int4, which set its peak above a first start's (2,460 against 1,916 MiB,
 * docs/benchmarks/journal/2026-11-29e-even-rows.md). The collection leaves at most a fifth of the
 * heap free ({@link JavaHeap#compact}), not G1's default 70%.
 */
final class LoadHeap {

  private static final Logger LOG = Logger.getLogger(LoadHeap.class.getName());

  private LoadHeap() {}

  /** A full collection, which returns the free heap to the system (G1 and Serial both shrink). */
  static void giveBack() {
    Runtime rt = Runtime.getRuntime();
    long before = rt.totalMemory();
    long start = System.nanoTime();
    JavaHeap.compact();
    LOG.fine(() -> String.format("heap after making the weights: %d -> %d MiB committed (%d ms)",
        before >> 20, rt.totalMemory() >> 20, (System.nanoTime() - start) / 1_000_000));
  }
}
