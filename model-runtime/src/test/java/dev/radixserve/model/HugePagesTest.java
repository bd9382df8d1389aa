package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;
import org.junit.jupiter.api.Test;

class HugePagesTest {

  private static final long MB = 1 << 20;

  @Test
  void largeBuffersAreZeroedWritableAndAlignedForHugePagesOnLinux() {
    try (Arena arena = Arena.ofShared()) {
      MemorySegment m = HugePages.allocate(arena, 5 * MB + 12);
      assertEquals(5 * MB + 12, m.byteSize());
      for (long i = 0; i < m.byteSize(); i += 4093) {
        assertEquals(0, m.get(ValueLayout.JAVA_BYTE, i), "byte " + i);
      }
      m.set(ValueLayout.JAVA_FLOAT, 5 * MB + 8, 1.5f);
      assertEquals(1.5f, m.get(ValueLayout.JAVA_FLOAT, 5 * MB + 8));
      if (System.getProperty("os.name").toLowerCase(Locale.ROOT).contains("linux")) {
        assertEquals(0, m.address() % (2 * MB), "mapped 2 MB aligned");
      }
    }
  }

  /**
   * The memory is resident when allocate returns, not at its first write: a fault in the middle
   * of a decode step stalled it 100 ms (see HugePages).
   */
  @Test
  void pagesAreResidentBeforeTheFirstWrite() throws Exception {
    try (Arena arena = Arena.ofShared()) {
      long before = residentBytes();
      MemorySegment m = HugePages.allocate(arena, 64 * MB);
      long grown = residentBytes() - before;
      assertTrue(grown >= 60 * MB, "resident grew by " + grown / MB + " MB for 64 MB");
      assertEquals(0, m.get(ValueLayout.JAVA_BYTE, 63 * MB));
    }
  }

  /** This process's resident set: /proc/self/statm's second field, in 4 KB pages. */
  private static long residentBytes() throws java.io.IOException {
    String statm = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/statm"));
    return Long.parseLong(statm.trim().split(" ")[1]) * 4096;
  }

  @Test
  void memoryIsReleasedWithItsArena() {
    Arena arena = Arena.ofShared();
    MemorySegment big = HugePages.allocate(arena, 4 * MB);
    MemorySegment small = HugePages.allocate(arena, 100);
    assertEquals(100, small.byteSize());
    arena.close();
    assertThrows(IllegalStateException.class, () -> big.get(ValueLayout.JAVA_BYTE, 0));
    assertThrows(IllegalStateException.class, () -> small.get(ValueLayout.JAVA_BYTE, 0));
  }
}
