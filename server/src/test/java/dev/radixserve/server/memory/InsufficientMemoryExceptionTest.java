package dev.radixserve.server.memory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.MemoryPlan;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** serve's refusal: the peak still to be taken against the free memory, with the numbers. */
class InsufficientMemoryExceptionTest {

  private static final long MIB = 1L << 20;
  // file 1100, resident 1000 of which 100 paged out after the warm-up, packing 300; graph 2;
  // pool 256; load 3800 of which 2400 the checkpoint's pages; runtime 320: serving 1778, peak
  // anonymous 3278, of it still to take 2958
  private static final MemoryPlan PLAN = new MemoryPlan(1100 * MIB, 1000 * MIB, 100 * MIB,
      300 * MIB, 2 * MIB, 256 * MIB, 3800 * MIB, 2400 * MIB, 320 * MIB);

  @Test
  void refusedWithTheNumbersWhenThePeakDoesNotFit() {
    InsufficientMemoryException e = assertThrows(InsufficientMemoryException.class,
        () -> InsufficientMemoryException.refuseIfShort(PLAN,
            Optional.of(new AvailableMemory(2957 * MIB, "the cgroup's memory.max"))));
    String m = e.getMessage();
    assertTrue(m.contains("~2,958 MiB more while loading"), m);
    assertTrue(m.contains("2,957 MiB is free (the cgroup's memory.max)"), m);
    assertTrue(m.contains("KV pool 256 MiB") && m.contains("serving ~1,778 MiB"), m);
    assertTrue(m.contains("--kv-cache-memory"), m);
  }

  @Test
  void loadsWhenItFitsOrWhenTheFreeMemoryIsUnknown() {
    assertDoesNotThrow(() -> InsufficientMemoryException.refuseIfShort(PLAN,
        Optional.of(new AvailableMemory(2958 * MIB, "MemAvailable"))));
    assertDoesNotThrow(() -> InsufficientMemoryException.refuseIfShort(PLAN, Optional.empty()));
  }
}
