package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class IdleTrimTest {

  private final AtomicLong clock = new AtomicLong(1_000);
  private final AtomicInteger calls = new AtomicInteger();
  private final IdleTrim trim = new IdleTrim(calls::incrementAndGet, clock::get, 100);

  /** One engine loop that found nothing to run, {@code nanos} after the previous one. */
  private void idleLoop(long nanos) {
    clock.addAndGet(nanos);
    trim.observe(true);
  }

  private void busyLoop() {
    trim.observe(false);
  }

  @Test
  void trimsOnceWhenIdleForTheDelayAfterWork() {
    busyLoop();
    idleLoop(0);
    idleLoop(99);
    assertEquals(0, calls.get(), "not before the delay");
    idleLoop(1);
    assertEquals(1, calls.get());
    idleLoop(10_000);
    idleLoop(0);
    assertEquals(1, calls.get(), "once per idle spell");
  }

  @Test
  void anIdleEngineThatRanNothingNeverTrims() {
    for (int i = 0; i < 10; i++) {
      idleLoop(1_000);
    }
    assertEquals(0, calls.get());
  }

  @Test
  void workInsideTheDelayRestartsIt() {
    busyLoop();
    idleLoop(0);
    clock.addAndGet(80);
    busyLoop(); // a request arrives before the delay is up
    idleLoop(50);
    idleLoop(50);
    assertEquals(0, calls.get(), "idle 50 of the 100 since the last work");
    idleLoop(50);
    assertEquals(1, calls.get());
    busyLoop();
    idleLoop(0);
    idleLoop(100);
    assertEquals(2, calls.get(), "a later idle spell after work trims again");
  }
}
