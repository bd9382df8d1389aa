package dev.radixserve.server.memory;

import dev.radixserve.model.MemoryPlan;

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
}
