package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

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
  void copiesTheFirstSlotsOfABlockInEveryLayer() {
    try (KvPool pool = KvPool.ofBlocks(C, 4, 6)) {
      for (int layer = 0; layer < 2; layer++) {
        for (int slot = 0; slot < 4; slot++) {
          for (int i = 0; i < 4; i++) {
            long at = ((5L * 4 + slot) * 4 + i) * Float.BYTES;
            pool.keys(layer).set(ValueLayout.JAVA_FLOAT, at, 100 * layer + 10 * slot + i);
            pool.values(layer).set(ValueLayout.JAVA_FLOAT, at, -(100 * layer + 10 * slot + i));
          }
        }
      }
      pool.copyBlock(5, 2, 3);
      for (int layer = 0; layer < 2; layer++) {
        for (int slot = 0; slot < 3; slot++) {
          assertArrayEquals(pool.keyRow(layer, 5, slot), pool.keyRow(layer, 2, slot));
          assertArrayEquals(pool.valueRow(layer, 5, slot), pool.valueRow(layer, 2, slot));
        }
        assertArrayEquals(new float[4], pool.keyRow(layer, 2, 3), "slot 3 is not copied");
      }
      assertArrayEquals(new float[] {130, 131, 132, 133}, pool.keyRow(1, 5, 3));
      assertThrows(IllegalArgumentException.class, () -> pool.copyBlock(5, 2, 5));
      assertThrows(IllegalArgumentException.class, () -> pool.keyRow(0, 6, 0));
      pool.close();
      pool.close();
    }
  }
}
