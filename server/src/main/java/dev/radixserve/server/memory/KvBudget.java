package dev.radixserve.server.memory;

import dev.radixserve.model.MemoryPlan;
import java.util.Optional;

/**
 * The KV pool's budget under {@code --kv-cache-memory auto} (the default): the model's whole
 * context for one sequence, and at least the fixed {@value #FLOOR_MIB} MiB that was the default
 * before, but never more than half of what the machine (or the container) has free once the
 * model's own planned peak is taken out. llama.cpp's server likewise gives a model its trained
 * context unless that does not fit; half, not all, because on a CPU the free memory is shared
 * with the page cache, other processes and the plan's error, and a pool is allocated and touched
 * at start. Where there is less than {@value #MIN_MIB} MiB to give, that much is asked for and
 * the refusal ({@link InsufficientMemoryException}) says what is missing.
 *
 * @param bytes the budget chosen
 * @param reason how it was chosen, for the log and check-model
 */
public record KvBudget(long bytes, String reason) {

  static final long FLOOR_MIB = 512;
  static final long MIN_MIB = 64;
  private static final long FLOOR = FLOOR_MIB << 20;
  private static final long MIN = MIN_MIB << 20;

  /** What {@code --kv-cache-memory SIZE} asked for, as it is. */
  public static KvBudget given(long bytes) {
    return new KvBudget(bytes, "--kv-cache-memory");
  }

  /**
   * The automatic budget where the free memory is not known (not Linux) or not the pool's (a
   * GPU's pool): the fixed default.
   */
  public static KvBudget floor(String why) {
    return new KvBudget(FLOOR, "auto: " + MemoryPlan.mib(FLOOR) + " (" + why + ")");
  }

  /**
   * @param contextTokens the longest sequence the server takes (--max-model-len, or the model's)
   * @param contextBytes what one sequence of {@code contextTokens} holds in the pool
   * @param withoutPool the model's plan with an empty pool
   * @param free what the process may still take; empty when unknown
   */
  public static KvBudget auto(int contextTokens, long contextBytes, MemoryPlan withoutPool,
      Optional<AvailableMemory> free) {
    long want = Math.max(FLOOR, contextBytes);
    String wanted = String.format("one %,d-token sequence needs %s", contextTokens,
        MemoryPlan.mib(contextBytes));
    if (free.isEmpty()) {
      return floor("free memory unknown; " + wanted);
    }
    // as the refusal counts it: the peak less what the process already holds and less the
    // checkpoint's file pages, which the kernel reclaims rather than kill
    long model = withoutPool.peakAnonymousBytes() - withoutPool.runtimeBytes();
    long half = Math.max(0, free.get().bytes() - model) / 2;
    long bytes = Math.max(MIN, Math.min(want, half));
    return new KvBudget(bytes, String.format("auto: %s (%s; %s free less the model's ~%s,"
        + " halved: %s)", MemoryPlan.mib(bytes), wanted, MemoryPlan.mib(free.get().bytes()),
        MemoryPlan.mib(model), MemoryPlan.mib(half)));
  }
}
