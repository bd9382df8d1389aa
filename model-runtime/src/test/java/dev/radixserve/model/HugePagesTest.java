package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
