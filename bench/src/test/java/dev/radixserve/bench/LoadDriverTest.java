package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class LoadDriverTest {

  /** Records what was in flight; fails a turn sent before its predecessor completed. */
  private static final class CheckingSender implements RequestSender {
    final Set<String> completed = Collections.synchronizedSet(new HashSet<>());
    final List<String> violations = Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger peak = new AtomicInteger();

    @Override
    public RequestRecord send(BenchRequest r, int sendOrder) {
      peak.accumulateAndGet(inFlight.incrementAndGet(), Math::max);
      if (r.turn() > 0 && !completed.contains(r.session() + "/" + (r.turn() - 1))) {
        violations.add(r.session() + "/" + r.turn());
      }
      Thread.yield();
      inFlight.decrementAndGet();
      completed.add(r.session() + "/" + r.turn());
      return new RequestRecord(r.index(), r.session(), r.turn(), sendOrder, r.promptLength(), true,
          null, 0, 1.0, List.of(), 2.0, 1, 1, r.promptLength(), 0, true);
    }
  }

  @Test
  void turnsOfASessionAreSentInOrderAndConcurrencyIsBounded() throws Exception {
    Workload w = Workloads.create("agent-loop", new WorkloadParams(3, 20, 4, 1024));
    CheckingSender sender = new CheckingSender();
    AtomicInteger lastDone = new AtomicInteger();
    List<RequestRecord> records =
        new LoadDriver(sender, 3, null, 0).run(w, lastDone::set);
    assertEquals(List.of(), sender.violations);
    assertTrue(sender.peak.get() <= 3, "peak " + sender.peak.get());
    assertEquals(20, records.size());
    assertEquals(20, lastDone.get());
    for (int i = 0; i < records.size(); i++) {
      assertEquals(i, records.get(i).index());
    }
    assertEquals(20, records.stream().mapToInt(RequestRecord::sendOrder).distinct().count());
  }

  @Test
  void poissonArrivalsStillSendEverything() throws Exception {
    Workload w = Workloads.create("multi-turn", new WorkloadParams(1, 8, 4, 1024));
    CheckingSender sender = new CheckingSender();
    List<RequestRecord> records =
        new LoadDriver(sender, Integer.MAX_VALUE, 10_000.0, 5).run(w, done -> {});
    assertEquals(8, records.size());
    assertEquals(List.of(), sender.violations);
  }
}
