package dev.radixserve.server.memory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.MemoryPlan;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** --kv-cache-memory auto: the model's context, at least 512 MiB, at most half what is free. */
class KvBudgetTest {

  private static final long MIB = 1L << 20;
  // no pool; load 3800 of which 2400 the checkpoint's pages; runtime 320: the model still takes
  // 3278 - 320 = 2958 MiB (as InsufficientMemoryExceptionTest's plan, less its pool)
  private static final MemoryPlan NO_POOL = new MemoryPlan(1100 * MIB, 1000 * MIB, 100 * MIB,
      300 * MIB, 2 * MIB, 0, 3800 * MIB, 2400 * MIB, 320 * MIB);
  private static final long MODEL = 2702 * MIB; // 3278 - 256 (no pool) - 320

  private static Optional<AvailableMemory> free(long mib) {
    return Optional.of(new AvailableMemory(mib * MIB, "MemAvailable"));
  }

  @Test
  void theWholeContextWhereHalfTheFreeMemoryHoldsIt() {
    assertEquals(MODEL, NO_POOL.peakAnonymousBytes() - NO_POOL.runtimeBytes());
    // a context of 32,768 tokens of 64 KiB: 2 GiB; 20,000 MiB free
    KvBudget b = KvBudget.auto(32_768, 2048 * MIB, NO_POOL, free(20_000));
    assertEquals(2048 * MIB, b.bytes());
    assertTrue(b.reason().contains("one 32,768-token sequence needs 2,048 MiB"), b.reason());
  }

  @Test
  void atLeastTheOldDefaultForAShortContext() {
    assertEquals(512 * MIB, KvBudget.auto(1024, 8 * MIB, NO_POOL, free(20_000)).bytes());
  }

  @Test
  void atMostHalfOfWhatTheModelLeavesFree() {
    // 10,000 MiB free, the model takes 2,702: half of 7,298 is 3,649 MiB, not the 8 GiB wanted
    KvBudget b = KvBudget.auto(131_072, 8192 * MIB, NO_POOL, free(10_000));
    assertEquals(3649 * MIB, b.bytes());
    assertTrue(b.reason().contains("10,000 MiB free less the model's ~2,702 MiB, halved:"
        + " 3,649 MiB"), b.reason());
    // and under the old default too, where that is all there is
    assertEquals(149 * MIB, KvBudget.auto(1024, 8 * MIB, NO_POOL, free(3000)).bytes());
  }

  @Test
  void aMachineTooSmallAsksForTheMinimumAndIsRefusedWithTheNumbers() {
    KvBudget b = KvBudget.auto(1024, 8 * MIB, NO_POOL, free(2702));
    assertEquals(64 * MIB, b.bytes());
    MemoryPlan withPool = new MemoryPlan(1100 * MIB, 1000 * MIB, 100 * MIB, 300 * MIB, 2 * MIB,
        b.bytes(), 3800 * MIB, 2400 * MIB, 320 * MIB);
    assertThrows(InsufficientMemoryException.class,
        () -> InsufficientMemoryException.refuseIfShort(withPool, free(2702)));
    // where it fits, the pool it chose fits too
    KvBudget fits = KvBudget.auto(131_072, 8192 * MIB, NO_POOL, free(3000));
    MemoryPlan chosen = new MemoryPlan(1100 * MIB, 1000 * MIB, 100 * MIB, 300 * MIB, 2 * MIB,
        fits.bytes(), 3800 * MIB, 2400 * MIB, 320 * MIB);
    assertDoesNotThrow(() -> InsufficientMemoryException.refuseIfShort(chosen, free(3000)));
  }

  @Test
  void theOldDefaultWhereTheFreeMemoryIsNotKnown() {
    assertEquals(512 * MIB, KvBudget.auto(131_072, 8192 * MIB, NO_POOL, Optional.empty())
        .bytes());
    assertEquals(512 * MIB, KvBudget.floor("a GPU's pool").bytes());
    assertEquals(1536 * MIB, KvBudget.given(1536 * MIB).bytes());
  }
}
