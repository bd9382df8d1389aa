package dev.radixserve.server.memory;

import dev.radixserve.model.MemoryPlan;
import java.util.Optional;

/**
 * The model's planned footprint does not fit in the memory this process may take: serve refuses
 * before loading, with the numbers, rather than being killed by the kernel halfway through.
 */
public final class InsufficientMemoryException extends RuntimeException {

  public InsufficientMemoryException(MemoryPlan plan, AvailableMemory free) {
    super(String.format("not enough memory to load this model: it needs ~%s more while loading"
        + " (%s), but %s is free (%s). Choose a smaller --kv-cache-memory, a quantization"
        + " (--quantization int8 or int4), or a machine or container with more memory.",
        MemoryPlan.mib(plan.peakAnonymousBytes() - plan.runtimeBytes()), plan.describe(),
        MemoryPlan.mib(free.bytes()), free.source()));
  }

  /**
   * Throws when the plan's peak, less what the process already holds (its runtime) and less the
   * checkpoint's file pages (which the kernel reclaims rather than kill), exceeds {@code free};
   * nothing when the free memory is unknown.
   */
  public static void refuseIfShort(MemoryPlan plan, Optional<AvailableMemory> free) {
    free.ifPresent(f -> {
      if (plan.peakAnonymousBytes() - plan.runtimeBytes() > f.bytes()) {
        throw new InsufficientMemoryException(plan, f);
      }
    });
  }
}
