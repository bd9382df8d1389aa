package dev.radixserve.model;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
import java.util.logging.Logger;

/**
 * The Java heap shrunk to about its live data: one full collection with HotSpot's free-ratio
 * bounds lowered for it, then put back.
 *
 * <p>Why: a full collection resizes the heap so that at most {@code MaxHeapFreeRatio} of it is
 * free, 70% by default, so a server whose live heap is ~15 MiB kept ~45 MiB committed after a
 * collection; with the bound at {@value #MAX_FREE_PERCENT}% it keeps ~20 (the Llama-3.2-1B shape at
 * int4, docs/benchmarks/journal/2026-11-30e-idle-heap.md). Lowering the bounds for the whole run
 * (as JVM options) did the same at idle but, under load, doubled the young collections and their
 * pauses, so they are lowered for this one collection only: both are manageable flags, set at
 * run time through {@link HotSpotDiagnosticMXBean}. Where that bean is missing (another JVM)
 * or refuses, the collection runs with the JVM's own bounds.
 */
public final class JavaHeap {

  private static final Logger LOG = Logger.getLogger(JavaHeap.class.getName());

  /** The most of the heap left free after the collection, in percent. */
  static final int MAX_FREE_PERCENT = 20;
  /** The least (HotSpot requires min ≤ max at every moment, so it is lowered first). */
  static final int MIN_FREE_PERCENT = 5;

  private static final String MIN = "MinHeapFreeRatio";
  private static final String MAX = "MaxHeapFreeRatio";

  private JavaHeap() {}

  /** A full collection that leaves at most {@value #MAX_FREE_PERCENT}% of the heap free. */
  public static synchronized void compact() {
    HotSpotDiagnosticMXBean vm = bean();
    String min = vm == null ? null : option(vm, MIN);
    String max = vm == null ? null : option(vm, MAX);
    if (min == null || max == null) {
      System.gc();
      return;
    }
    boolean minSet = false;
    boolean maxSet = false;
    try {
      vm.setVMOption(MIN, String.valueOf(Math.min(MIN_FREE_PERCENT, Integer.parseInt(min))));
      minSet = true;
      vm.setVMOption(MAX, String.valueOf(Math.min(MAX_FREE_PERCENT, Integer.parseInt(max))));
      maxSet = true;
    } catch (IllegalArgumentException e) {
      LOG.fine(() -> "heap free ratios not lowered: " + e.getMessage());
    }
    try {
      System.gc();
    } finally {
      // max first, then min: each step keeps min <= max
      if (maxSet) {
        vm.setVMOption(MAX, max);
      }
      if (minSet) {
        vm.setVMOption(MIN, min);
      }
    }
  }

  /** The flag's value, or null where this JVM has no such flag. */
  private static String option(HotSpotDiagnosticMXBean vm, String name) {
    try {
      return vm.getVMOption(name).getValue();
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static HotSpotDiagnosticMXBean bean() {
    try {
      return ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    } catch (RuntimeException | LinkageError e) {
      return null;
    }
  }
}
