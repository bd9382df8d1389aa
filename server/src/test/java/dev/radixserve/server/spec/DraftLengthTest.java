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

  /** Step times growing by 0.4 of a one-token step per token: compute-bound, as int8 on 2 AVX2 cores. */
  private static StepTimes steep() {
    StepTimes t = new StepTimes();
    for (int rows = 1; rows <= 9; rows++) {
      t.record(rows, Math.round(1_000_000 * (1 + 0.4 * (rows - 1))));
    }
    return t;
  }

  @Test
  void wherePricesAreFlatTheRulesSetTheLength() {
    StepTimes flat = new StepTimes();
    for (int rows = 1; rows <= 9; rows++) {
      flat.record(rows, 1_000_000);
    }
    DraftLength k = new DraftLength(8);
    k.verified(2, 2);
    k.verified(4, 4);
    assertEquals(8, k.next(flat, 1, 1));
  }

  @Test
  void aSteepPriceKeepsADraftAtTheLengthThatYieldsMostTokensPerSecond() {
    DraftLength k = new DraftLength(8);
    k.verified(2, 2);
    k.verified(4, 4);
    // held 2 * 0.8 + 4 = 5.6 tokens, none cut: p = 6.6 / 7.6 = 0.868; a draft of k yields
    // 1 + p + ... + p^k tokens for 1 + 0.4k steps: 1.33, 1.46, 1.49, 1.48, ... 1.30 (k = 8)
    assertEquals(0.868, k.acceptance(), 1e-3);
    assertEquals(3, k.next(steep(), 1, 1));
    assertEquals(8, k.next()); // the rules alone: twice the last fully held draft
  }

  @Test
  void whenNoDraftPaysItPausesAndThenProbesWithOneTokenUntilADraftIsVerified() {
    DraftLength k = new DraftLength(8);
    k.verified(2, 0);
    k.verified(2, 1);
    k.verified(2, 0); // held 0.8, cut 2.44: p = 1.8 / 5.24 = 0.34, below the break-even 0.4
    assertEquals(0, k.next(steep(), 1, 1));
    for (int i = 1; i < 4; i++) {
      assertEquals(0, k.next(steep(), 1, 1), "step " + i);
    }
    assertEquals(1, k.next(steep(), 1, 1)); // the probe, whatever its price
    assertEquals(1, k.next(steep(), 1, 1)); // no draft was found for it: still probing
    k.verified(1, 1);
    // p = 2.64 / 5.59 = 0.47: one token pays (1.47 for 1.4 steps), two do not (1.69 for 1.8)
    assertEquals(1, k.next(steep(), 1, 1));
  }

  @Test
  void inABatchTheSameOddsMayNotPay() {
    DraftLength alone = new DraftLength(8);
    DraftLength batched = new DraftLength(8);
    alone.verified(2, 1);
    batched.verified(2, 1); // p = 0.5
    assertEquals(1, alone.next(steep(), 1, 1)); // 1.5 tokens for 1.4 steps
    // four sequences decoding: 4.5 tokens for 2.6 steps against 4 for 2.2
    assertEquals(0, batched.next(steep(), 4, 4));
  }
}
