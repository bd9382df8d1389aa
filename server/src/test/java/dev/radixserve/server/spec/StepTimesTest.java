package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class StepTimesTest {

  /** Steps of these token counts have run once each, slowly: new shapes, not taken. */
  static StepTimes shaped(int... counts) {
    StepTimes t = new StepTimes();
    for (int tokens : counts) {
      t.record(tokens, 50_000_000);
    }
    return t;
  }

  @Test
  void theFirstStepOfEachCountIsNotTaken() {
    StepTimes t = new StepTimes();
    t.record(1, 100);
    t.record(2, 490); // a new shape's first step, five times the later ones
    assertEquals(1, t.estimate(2)); // nothing taken yet: every count costs the same
    t.record(1, 100);
    t.record(2, 105);
    assertEquals(105, t.estimate(2));
    assertEquals(140, t.estimate(9), 1e-9); // along 1 -> 2's slope (5 a token), not 490's
    t.record(3, 900); // the first of 3 again
    assertEquals(110, t.estimate(3), 1e-9);
  }

  @Test
  void withNothingMeasuredEveryStepCostsTheSame() {
    StepTimes t = new StepTimes();
    assertEquals(t.estimate(1), t.estimate(9));
    assertEquals(t.estimate(1), t.estimate(StepTimes.ROWS * 4) / 4);
  }

  @Test
  void aCountIsTheMedianOfItsLastTimesSoOneSlowStepDoesNotMoveIt() {
    StepTimes t = shaped(3);
    t.record(3, 2_000); // a slow one
    assertEquals(2_000, t.estimate(3));
    t.record(3, 1_000);
    assertEquals(1_000, t.estimate(3)); // of two, the lower
    t.record(3, 1_100);
    t.record(3, 9_000); // a slow one (a collection, another process)
    assertEquals(1_100, t.estimate(3));
  }

  @Test
  void aCountFollowsItsLastTimesWhenTheyMove() {
    StepTimes t = shaped(2);
    for (int i = 0; i < StepTimes.SAMPLES; i++) {
      t.record(2, 1_000);
    }
    for (int i = 0; i < StepTimes.SAMPLES / 2; i++) {
      t.record(2, 3_000); // a longer context
    }
    assertEquals(1_000, t.estimate(2));
    t.record(2, 3_000);
    assertEquals(3_000, t.estimate(2)); // most of the last times: the new cost
  }

  @Test
  void aStepOfMoreTokensNeverCostsLessThanOneOfFewer() {
    StepTimes t = shaped(1, 2, 4);
    t.record(1, 100);
    t.record(2, 260); // once slow, so drafts of one token would not be tried again
    t.record(4, 150);
    assertEquals(150, t.estimate(2)); // taken at most at what four tokens cost
    assertEquals(150, t.estimate(3));
    assertEquals(100, t.estimate(1));
  }

  @Test
  void countsNotMeasuredComeFromTheirNeighbours() {
    StepTimes t = shaped(1, 3);
    t.record(1, 100);
    assertEquals(100, t.estimate(5)); // one count known: flat until a longer step is measured
    t.record(3, 140);
    assertEquals(120, t.estimate(2), 1e-9); // between two
    assertEquals(200, t.estimate(6), 1e-9); // beyond, along the last two's slope
    assertEquals(100, t.estimate(0)); // a step computes at least one token
  }

  @Test
  void estimatesBeyondTheMeasuredNeverFallAndGrowWithTheTokensPastTheTable() {
    StepTimes t = shaped(1, 2, 4);
    t.record(2, 300);
    t.record(4, 200); // noise: fewer tokens measured slower
    assertEquals(200, t.estimate(2)); // capped by the larger count
    assertEquals(200, t.estimate(9)); // not below the last measured
    assertEquals(200.0 * 3, t.estimate(StepTimes.ROWS * 3), 1e-9);
    t.record(1, 100);
    assertEquals(100, t.estimate(1));
  }

  @Test
  void stepsTooLargeOrEmptyAreNotRecorded() {
    StepTimes t = shaped(2, StepTimes.ROWS + 1);
    t.record(StepTimes.ROWS + 1, 5_000);
    t.record(0, 5_000);
    t.record(2, 0);
    assertEquals(1, t.estimate(2));
  }
}
