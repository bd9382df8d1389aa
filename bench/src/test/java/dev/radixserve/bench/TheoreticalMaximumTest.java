package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class TheoreticalMaximumTest {

  @Test
  void handExamplesAtBlockSizeFour() {
    TheoreticalMaximum max = new TheoreticalMaximum(4);
    assertEquals(0, max.offer(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
    // shares 7 tokens → 4 (one whole block)
    assertEquals(4, max.offer(new int[] {1, 2, 3, 4, 5, 6, 7, 99, 99}));
    // identical 8-token prefix of a 10-token prompt, the whole prompt would be 9 tokens
    // long: cap at len-1 = 8 → 8
    assertEquals(8, max.offer(new int[] {1, 2, 3, 4, 5, 6, 7, 8, 9}));
    // the whole prompt seen before: cap at 7 → 4
    assertEquals(4, max.offer(new int[] {1, 2, 3, 4, 5, 6, 7, 8}));
    // differs in the first block
    assertEquals(0, max.offer(new int[] {0, 2, 3, 4, 5, 6, 7, 8}));
    // shorter than a block + 1: nothing
    assertEquals(0, max.offer(new int[] {1, 2, 3, 4}));
    assertEquals(4, max.offer(new int[] {1, 2, 3, 4, 42}));
  }

  @Test
  void sameBlockUnderDifferentParentsIsNotAPrefix() {
    TheoreticalMaximum max = new TheoreticalMaximum(2);
    assertEquals(0, max.offer(new int[] {1, 2, 3, 4, 5}));
    // block {3, 4} was seen, but after {1, 2}, not after {9, 9}
    assertEquals(0, max.offer(new int[] {9, 9, 3, 4, 5}));
    assertEquals(4, max.offer(new int[] {9, 9, 3, 4, 7}));
  }

  @Test
  void blockSizeOneCountsEveryTokenButTheLast() {
    TheoreticalMaximum max = new TheoreticalMaximum(1);
    assertEquals(0, max.offer(new int[] {5, 6, 7}));
    assertEquals(2, max.offer(new int[] {5, 6, 7}));
    assertEquals(3, max.offer(new int[] {5, 6, 7, 8}));
  }
}
