package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class DraftLengthTest {

  @Test
  void startsShortAndDoublesWhileEverythingIsAcceptedUpToTheMaximum() {
    DraftLength k = new DraftLength(6);
    assertEquals(2, k.next());
    k.verified(2, 2);
    assertEquals(4, k.next()); // all held: twice as many
    k.verified(4, 4);
    assertEquals(6, k.next()); // 8, capped
    k.verified(6, 6);
    assertEquals(6, k.next());
  }

  @Test
  void shrinksToOneMoreThanAPartialDraftKept() {
    DraftLength k = new DraftLength(8);
    k.verified(2, 2);
    k.verified(4, 4);
    assertEquals(8, k.next());
    k.verified(8, 2);
    assertEquals(3, k.next()); // two held: one more than that
    k.verified(3, 1);
    assertEquals(2, k.next());
  }

  @Test
  void aMaximumOfOneStartsAtOne() {
    DraftLength k = new DraftLength(1);
    assertEquals(1, k.next());
    k.verified(1, 1);
    assertEquals(1, k.next());
  }

  @Test
  void pausesWhenDraftsStopPayingAndPausesLongerEachTime() {
    DraftLength k = new DraftLength(4);
    k.verified(4, 0);
    assertEquals(1, k.next());
    k.verified(1, 0); // the second miss in a row: a pause of 4 steps
    for (int i = 0; i < 4; i++) {
      assertEquals(0, k.next(), "step " + i);
    }
    assertEquals(1, k.next()); // a probe
    k.verified(1, 0);
    assertEquals(1, k.next());
    k.verified(1, 0); // missed again: twice as long
    for (int i = 0; i < 8; i++) {
      assertEquals(0, k.next(), "step " + i);
    }
    assertEquals(1, k.next());
    k.verified(1, 1); // paying again: the pause resets
    assertEquals(2, k.next());
  }

  @Test
  void thePauseStopsGrowingAtItsMaximum() {
    DraftLength k = new DraftLength(2);
    int longest = 0;
    for (int round = 0; round < 12; round++) {
      k.verified(1, 0);
      k.verified(1, 0);
      int paused = 0;
      while (k.next() == 0) {
        paused++;
      }
      longest = Math.max(longest, paused);
    }
    assertEquals(DraftLength.MAX_PAUSE, longest);
  }
}
