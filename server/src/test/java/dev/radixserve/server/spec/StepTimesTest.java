package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class StepTimesTest {

  @Test
  void withNothingMeasuredEveryStepCostsTheSame() {
    StepTimes t = new StepTimes();
    assertEquals(t.estimate(1), t.estimate(9));
    assertEquals(t.estimate(1), t.estimate(StepTimes.ROWS * 4) / 4);
  }

  @Test
  void aCountMeasuredIsItsMovingAverage() {
    StepTimes t = new StepTimes();
    t.record(3, 1_000);
    assertEquals(1_000, t.estimate(3));
    t.record(3, 2_000);
    assertEquals(1_000 + StepTimes.ALPHA * 1_000, t.estimate(3), 1e-9);
  }

  @Test
  void countsNotMeasuredComeFromTheirNeighbours() {
    StepTimes t = new StepTimes();
    t.record(1, 100);
    assertEquals(100, t.estimate(5)); // one count known: flat until a longer step is measured
    t.record(3, 140);
    assertEquals(120, t.estimate(2), 1e-9); // between two
    assertEquals(200, t.estimate(6), 1e-9); // beyond, along the last two's slope
    assertEquals(100, t.estimate(0)); // a step computes at least one token
  }

  @Test
  void estimatesBeyondTheMeasuredNeverFallAndGrowWithTheTokensPastTheTable() {
    StepTimes t = new StepTimes();
    t.record(2, 300);
    t.record(4, 200); // noise: fewer tokens measured slower
    assertEquals(200, t.estimate(9)); // not below the last measured
    assertEquals(200.0 * 3, t.estimate(StepTimes.ROWS * 3), 1e-9);
    t.record(1, 100);
    assertEquals(100, t.estimate(1));
  }

  @Test
  void stepsTooLargeOrEmptyAreNotRecorded() {
    StepTimes t = new StepTimes();
    t.record(StepTimes.ROWS + 1, 5_000);
    t.record(0, 5_000);
    t.record(2, 0);
    assertEquals(1, t.estimate(2));
  }
}
