package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class IdleTrimTest {

  private final AtomicLong clock = new AtomicLong(1_000);
  private final AtomicInteger calls = new AtomicInteger();
  private final IdleTrim trim = new IdleTrim(() -> calls.incrementAndGet() > 0, clock::get, 100);

  @Test
  void trimsOnceWhenIdleForTheDelayAfterWork() {
    trim.observe(false);
    trim.observe(true);
    clock.addAndGet(99);
    trim.observe(true);
    assertEquals(0, calls.get(), "not before the delay");
    clock.addAndGet(1);
    trim.observe(true);
    assertEquals(1, calls.get());
    clock.addAndGet(10_000);
    trim.observe(true);
    trim.observe(true);
    assertEquals(1, calls.get(), "once per idle spell");
  }

  @Test
  void anIdleEngineThatRanNothingNeverTrims() {
    for (int i = 0; i < 10; i++) {
      trim.observe(true);
      clock.addAndGet(1_000);
    }
    assertEquals(0, calls.get());
  }

  @Test
  void workInsideTheDelayRestartsIt() {
    trim.observe(false);
    trim.observe(true);
    clock.addAndGet(80);
    trim.observe(false); // a request arrives before the delay is up
    clock.addAndGet(50);
    trim.observe(true);
    clock.addAndGet(50);
    trim.observe(true);
    assertEquals(0, calls.get(), "idle 50 of the 100 since the last work");
    clock.addAndGet(50);
    trim.observe(true);
    assertEquals(1, calls.get());
    trim.observe(false);
    trim.observe(true);
    clock.addAndGet(100);
    trim.observe(true);
    assertEquals(2, calls.get(), "a later idle spell after work trims again");
    assertEquals(2, trim.trims());
  }
}
