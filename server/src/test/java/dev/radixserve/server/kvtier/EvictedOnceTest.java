package dev.radixserve.server.kvtier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class EvictedOnceTest {

  @Test
  void aHashIsSeenBeforeOnceAfterItWasRemembered() {
    EvictedOnce once = new EvictedOnce(4);
    assertFalse(once.seenBefore(7));
    assertTrue(once.seenBefore(7));
    assertFalse(once.seenBefore(7), "answered true once, then forgotten");
  }

  @Test
  void theOldestHashIsDroppedPastTheBound() {
    EvictedOnce once = new EvictedOnce(3);
    for (long h = 1; h <= 4; h++) {
      assertFalse(once.seenBefore(h));
    }
    assertEquals(3, once.size());
    assertFalse(once.seenBefore(1), "1 was dropped when 4 came");
    assertTrue(once.seenBefore(3));
    assertTrue(once.seenBefore(4));
  }

  @Test
  void theBoundMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new EvictedOnce(0));
  }
}
