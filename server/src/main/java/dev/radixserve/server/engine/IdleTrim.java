package dev.radixserve.server.engine;

import dev.radixserve.model.JavaHeap;
import dev.radixserve.model.NativeHeap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Runs a memory give-back once the engine has stayed idle for a while after work: the C heap's
 * free pages ({@code malloc_trim(0)} through {@link NativeHeap}) after a second, the Java heap
 * compacted ({@link #compactJavaHeap}) after five.
 *
 * <p>Why: a forward pass's activations are ONNX Runtime's, allocated and freed in glibc's arenas;
 * glibc keeps the freed pages of a chunk that was not mapped on its own resident, so after the
 * requests of a busy spell the arenas hold pages no one uses (27 MiB on the Llama-3.2-1B shape
 * after five requests, measured with {@code gdb -ex "call malloc_trim(0)"} on a running server;
 * docs/benchmarks/journal/2026-11-29g-memory-breakdown.md). The trim walks every arena, so it
 * waits for a quiet second rather than running between two requests of a busy client, and runs
 * once per idle spell, only when work ran since the last one. The Java heap likewise: G1 kept
 * ~45 MiB committed for ~15 MiB of live data after a busy spell on that shape, and one full
 * collection with a lower free-ratio bound ({@link JavaHeap#compact}) leaves ~27
 * (docs/benchmarks/journal/2026-11-30e-idle-heap.md). That collection pauses the JVM for tens
 * of milliseconds (36–56 ms measured there), so it waits five quiet seconds: a client that
 * pauses a second or two between requests does not meet it.
 */
final class IdleTrim {

  /** How long the engine must have been idle before it trims the C heap. */
  static final long DELAY_NANOS = TimeUnit.SECONDS.toNanos(1);
  /** How long before it compacts the Java heap (a full collection's pause, see above). */
  static final long COMPACT_DELAY_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Runnable trim;
  private final LongSupplier nanoClock;
  private final long delayNanos;
  private long idleSince;
  private boolean idle;
  /** Work ran since the last trim (the load trims the heap itself before the engine starts). */
  private boolean dirty;

  IdleTrim(Runnable trim, LongSupplier nanoClock, long delayNanos) {
    this.trim = trim;
    this.nanoClock = nanoClock;
    this.delayNanos = delayNanos;
  }

  /**
   * The Java heap compacted, then the C heap trimmed again: the collection can free native
   * memory that unreachable automatic arenas held.
   */
  static void compactJavaHeap() {
    JavaHeap.compact();
    NativeHeap.trim();
  }

  /** Called once per engine loop with whether the engine has nothing to run. */
  void observe(boolean engineIdle) {
    if (!engineIdle) {
      idle = false;
      dirty = true;
      return;
    }
    long now = nanoClock.getAsLong();
    if (!idle) {
      idle = true;
      idleSince = now;
    }
    if (dirty && now - idleSince >= delayNanos) {
      dirty = false;
      trim.run();
    }
  }
}
