package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

class KvPoolTest {

  private static final ModelConfig C = new ModelConfig(2, 2, 4, 64, 10, 1e-5, "gelu_new");

  @Test
  void sizesFromBlocksAndBudget() {
    // 2 layers * (K + V) * 4 tokens * 4 floats * 4 bytes = 256 bytes per block
    assertEquals(256, KvPool.bytesPerBlock(C, 4));
    try (KvPool pool = KvPool.forBudget(C, 4, 256 * 5 + 255)) {
      assertEquals(5, pool.numBlocks());
      assertEquals(256, pool.bytesPerBlock());
    }
    var e = assertThrows(IllegalArgumentException.class, () -> KvPool.forBudget(C, 4, 255));
    assertEquals("a KV budget of 255 bytes holds no block of 256 bytes", e.getMessage());
  }

  @Test
  void writesRowsToTheirBlockAndSlot() {
    try (KvPool pool = KvPool.ofBlocks(C, 4, 6); Arena arena = Arena.ofConfined()) {
      // 3 new rows [T=3, H*D=4] for positions 3, 4, 5 of a sequence with table {5, 2}
      MemorySegment k = arena.allocate(3 * 16);
      MemorySegment v = arena.allocate(3 * 16);
      for (int i = 0; i < 12; i++) {
        k.setAtIndex(ValueLayout.JAVA_FLOAT, i, i);
        v.setAtIndex(ValueLayout.JAVA_FLOAT, i, -i);
      }
      pool.write(1, k, v, 0, 3, 3, new int[] {5, 2});
      assertArrayEquals(new float[] {0, 1, 2, 3}, pool.keyRow(1, 5, 3));
      assertArrayEquals(new float[] {4, 5, 6, 7}, pool.keyRow(1, 2, 0));
      assertArrayEquals(new float[] {-8, -9, -10, -11}, pool.valueRow(1, 2, 1));
      assertArrayEquals(new float[4], pool.keyRow(0, 2, 0));
      assertThrows(IllegalArgumentException.class, () -> pool.keyRow(0, 6, 0));
      pool.close();
      pool.close();
    }
  }
}
