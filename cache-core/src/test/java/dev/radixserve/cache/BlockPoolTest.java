package dev.radixserve.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class BlockPoolTest {

  @Test
  void freshPoolAllocatesAscendingIds() {
    BlockPool pool = new BlockPool(11);
    assertArrayEquals(new int[] {0, 1, 2}, pool.allocate(3));
    assertArrayEquals(new int[] {3, 4}, pool.allocate(2));
    assertEquals(6, pool.freeCount());
    assertEquals(11, pool.total());
    pool.checkIntegrity();
  }

  @Test
  void aNewSequenceTakesTheLowestRunLongEnough() {
    BlockPool pool = new BlockPool(11);
    pool.allocate(5); // 0..4
    pool.free(new int[] {1, 3});
    pool.free(0); // free: 0 1 _ 3 _ 5 6 7 8 9 10
    assertArrayEquals(new int[] {0, 1}, pool.allocate(2));
    assertArrayEquals(new int[] {5, 6, 7}, pool.allocate(3)); // {3} is too short
    assertArrayEquals(new int[] {3}, pool.allocate(1));
    pool.checkIntegrity();
  }

  @Test
  void withNoRunLongEnoughTheLowestFreeIdsGo() {
    BlockPool pool = new BlockPool(11);
    pool.allocate(11);
    pool.free(new int[] {8, 4, 1, 3}); // free: 1 3 4 8
    assertArrayEquals(new int[] {1, 3, 4}, pool.allocate(3));
    assertArrayEquals(new int[] {8}, pool.allocate(1));
    pool.checkIntegrity();
  }

  @Test
  void aRunBeyondTheScanBoundIsNotLookedFor() {
    int runs = BlockPool.RUNS_SCANNED;
    BlockPool pool = new BlockPool(2 * runs + 10);
    pool.allocate(pool.total());
    for (int i = 0; i < runs; i++) {
      pool.free(2 * i); // runs of one free block: 0, 2, 4, ...
    }
    pool.free(new int[] {2 * runs + 5, 2 * runs + 6}); // a run of two, the (runs + 1)-th run
    assertArrayEquals(new int[] {0, 2}, pool.allocate(2)); // the lowest free ids instead
    pool.free(new int[] {0, 2});
    pool.free(1); // now 0 1 2 is a run, the first
    assertArrayEquals(new int[] {0, 1}, pool.allocate(2));
    pool.checkIntegrity();
  }

  @Test
  void aGrowingSequenceContinuesRightAfterItsLastBlock() {
    BlockPool pool = new BlockPool(11);
    int[] a = pool.allocate(2); // 0 1
    int[] b = pool.allocate(2); // 2 3
    assertArrayEquals(new int[] {0, 1}, a);
    assertArrayEquals(new int[] {2, 3}, b);
    assertArrayEquals(new int[] {4, 5}, pool.allocate(2, 3)); // b grows in place
    // a's next id is taken: the rest goes to the lowest run long enough
    assertArrayEquals(new int[] {6, 7, 8}, pool.allocate(3, 1));
    // c continues after 8 while it can (9, 10), then the lowest free id
    pool.free(new int[] {0});
    assertArrayEquals(new int[] {9, 10, 0}, pool.allocate(3, 8));
    assertEquals(0, pool.freeCount());
    pool.checkIntegrity();
  }

  @Test
  void allocateIsAllOrNothing() {
    BlockPool pool = new BlockPool(11);
    pool.allocate(9);
    assertTrue(pool.canAllocate(2));
    assertFalse(pool.canAllocate(3));
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.allocate(3));
    assertEquals("need 3 blocks, 2 free", e.getMessage());
    assertEquals(2, pool.freeCount());
    assertArrayEquals(new int[] {9, 10}, pool.allocate(2));
    assertArrayEquals(new int[0], pool.allocate(0));
  }

  @Test
  void doubleFreeFailsWithTheNumbers() {
    BlockPool pool = new BlockPool(11);
    pool.allocate(4);
    pool.free(2);
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.free(2));
    assertEquals("block 2 freed twice: already free (8 of 11 free)", e.getMessage());
    IllegalStateException never =
        assertThrows(IllegalStateException.class, () -> pool.free(7));
    assertEquals("block 7 freed twice: already free (8 of 11 free)", never.getMessage());
  }

  @Test
  void outOfRangeFreeFailsWithTheNumbers() {
    BlockPool pool = new BlockPool(11);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> pool.free(11));
    assertEquals("block id 11 out of range [0, 11)", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> pool.free(-1));
    assertThrows(IllegalArgumentException.class, () -> pool.allocate(-1));
    IllegalArgumentException after =
        assertThrows(IllegalArgumentException.class, () -> pool.allocate(1, 11));
    assertEquals("block id 11 out of range [0, 11)", after.getMessage());
    assertThrows(IllegalArgumentException.class, () -> pool.allocate(1, -2));
    assertThrows(IllegalArgumentException.class, () -> new BlockPool(0));
  }

  @Test
  void batchFreeRollsBackOnABadId() {
    BlockPool pool = new BlockPool(11);
    pool.allocate(6); // 0..5
    IllegalStateException e =
        assertThrows(IllegalStateException.class, () -> pool.free(new int[] {1, 2, 1}));
    assertEquals("block 1 freed twice: already free (7 of 11 free)", e.getMessage());
    assertEquals(5, pool.freeCount());
    assertThrows(IllegalArgumentException.class, () -> pool.free(new int[] {3, 99}));
    assertEquals(5, pool.freeCount());
    assertFalse(pool.isFree(1));
    assertFalse(pool.isFree(3));
    pool.checkIntegrity();
    pool.free(new int[] {1, 2}); // free: 1 2 6 7 8 9 10
    assertArrayEquals(new int[] {6, 7, 8}, pool.allocate(3));
    assertArrayEquals(new int[] {1, 2}, pool.allocate(2));
  }
}
