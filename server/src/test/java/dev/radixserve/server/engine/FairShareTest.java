package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.config.SchedulePolicy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** Fair shares between clients and requests, driven step by step with the fake model. */
class FairShareTest {

  private static final int B = 16;

  private static EngineHarness harness(int maxNumSeqs, int perRequest, boolean fair) {
    return new EngineHarness(1024, B, true, SchedulePolicy.LPM, 4096,
        EngineHarness.TOKENIZER.vocabSize(), Integer.MAX_VALUE, EngineHarness.FAKE, maxNumSeqs,
        new Engine.FairShareSettings(fair, perRequest));
  }

  /** Distinct 4-token prompts: no two share a cached block. */
  private static int[] prompt(int i) {
    return IntStream.range(0, 4).map(k -> 1000 + 8 * i + k).toArray();
  }

  /** {@code count} prompts of one request ({@code client} + "-req"), ids client0, client1, ... */
  private static void submit(EngineHarness h, String client, int count, int priority,
      int maxTokens, int[] next) {
    for (int i = 0; i < count; i++) {
      h.submit(client + i, client + "-req", client, priority, prompt(next[0]++), 1, maxTokens,
          false);
    }
  }

  private static void runAll(EngineHarness h) {
    h.runToCompletion();
    h.assertAccounting();
  }

  @Test
  void twoClientsArrivingTogetherAlternateUpToTheirShares() {
    EngineHarness h = harness(4, 4, true);
    int[] next = {0};
    submit(h, "a", 6, 0, 3, next);
    submit(h, "b", 2, 0, 3, next);
    runAll(h);
    // share 2 each: a, b, a, b fill the 4 slots; a's other prompts follow as slots free
    assertEquals(List.of("a0", "b0", "a1", "b1", "a2", "a3", "a4", "a5"), h.admissions);
    assertEquals(0, h.fairSharePreemptions);
    assertEquals(2, h.deferrals, "b0 and b1 went ahead of a's earlier prompts");
  }

  @Test
  void aLateClientPreemptsTheNewestSequencesOfTheClientOverItsShare() {
    for (boolean fair : new boolean[] {true, false}) {
      EngineHarness h = harness(4, 4, fair);
      int[] next = {0};
      submit(h, "a", 6, 0, 3, next);
      h.step(); // a0..a3 run
      submit(h, "b", 2, 0, 1, next);
      runAll(h);
      if (fair) {
        // b takes a3's and a2's slots at once; a2 and a3 come back (from the cache) after b
        assertEquals(List.of("a0", "a1", "a2", "a3", "b0", "b1", "a2", "a3", "a4", "a5"),
            h.admissions);
        assertEquals(2, h.fairSharePreemptions);
        assertEquals(2, h.deferrals, "b0 and b1 went ahead of a4 and a5");
        assertEquals(List.of("b0", "b1"), h.finished.subList(0, 2));
      } else {
        // without shares b waits until a's first four finish, then alternates with a by rank
        assertEquals(List.of("a0", "a1", "a2", "a3", "a4", "b0", "a5", "b1"), h.admissions);
        assertEquals(List.of("a0", "a1", "a2", "a3"), h.finished.subList(0, 4));
        assertEquals(0, h.fairSharePreemptions);
        assertEquals(0, h.deferrals);
      }
      assertEquals(8, h.finished.size());
    }
  }

  @Test
  void threeClientsWithUnequalLoadsTakeTurnsByShare() {
    EngineHarness h = harness(6, 6, true);
    int[] next = {0};
    submit(h, "a", 5, 0, 2, next);
    submit(h, "b", 3, 0, 2, next);
    submit(h, "c", 1, 0, 2, next);
    runAll(h);
    // share 6 / 3 = 2: a b c a b fill five slots; the sixth goes to a (a and b both at their
    // share, each running 2, a's prompt first in the policy's order); when all six finish
    // together, a and b (share 3 now) alternate again
    assertEquals(List.of("a0", "b0", "c0", "a1", "b1", "a2", "a3", "b2", "a4"), h.admissions);
  }

  @Test
  void aRequestOverItsCapYieldsToAnotherRequestOfTheSameClient() {
    EngineHarness h = harness(4, 2, true);
    int[] next = {0};
    for (int i = 0; i < 6; i++) {
      h.submit("big" + i, "big", "x", 0, prompt(next[0]++), 1, 4, false);
    }
    h.step(); // big0..big3: nothing else waits, so the cap of 2 does not hold them back
    h.submit("small0", "small", "x", 0, prompt(next[0]++), 1, 1, false);
    runAll(h);
    assertEquals(List.of("big0", "big1", "big2", "big3", "small0", "big3", "big4", "big5"),
        h.admissions);
    assertEquals(1, h.fairSharePreemptions);
    assertEquals("small0", h.finished.getFirst());
  }

  @Test
  void priorityOrdersWithinAClientButAFloodOfHighPriorityKeepsToItsShare() {
    EngineHarness h = harness(4, 4, true);
    int[] next = {0};
    submit(h, "low", 2, 5, 2, next); // client "low", priority 5
    h.step();
    // client "low" sends two urgent prompts: they preempt its own priority-5 prompts
    for (int i = 0; i < 2; i++) {
      h.submit("urgent" + i, "urgent-req", "low", -1, prompt(next[0]++), 1, 2, false);
    }
    // client "flood" sends 6 prompts at priority -100, client "calm" one at priority 0
    submit(h, "flood", 6, -100, 2, next);
    submit(h, "calm", 1, 0, 2, next);
    h.step();
    // share 4 / 3 = 1: flood0 and calm0 take the two free slots (their clients are below their
    // shares; flood's priority does not get it more); urgent0 and urgent1 preempt their own
    // client's priority-5 prompts; the rest of flood waits, its client at its share
    assertEquals(List.of("low0", "low1", "flood0", "calm0", "urgent0", "urgent1"), h.admissions);
    assertEquals(2, h.fairSharePreemptions);
    runAll(h);
    assertTrue(h.finished.indexOf("calm0") < h.finished.indexOf("flood1"), h.finished.toString());
    assertEquals(11, h.finished.size());
  }

  /**
   * Random clients, requests, priorities and lengths: after every schedule, while a client below
   * its share has a sequence waiting, no other client runs more than its share; while a request
   * below the cap waits, no other request of its client runs more than the cap; everything
   * finishes and every block comes back.
   */
  @Test
  void noClientExceedsItsShareWhileAnotherWaits() {
    for (long seed = 0; seed < 40; seed++) {
      Random rnd = new Random(seed);
      int maxNumSeqs = 2 + rnd.nextInt(10);
      int cap = 1 + rnd.nextInt(maxNumSeqs);
      EngineHarness h = harness(maxNumSeqs, cap, true);
      List<String> problems = new ArrayList<>();
      long s = seed;
      h.afterSchedule = () -> check(h, maxNumSeqs, cap, problems, s);
      int[] next = {0};
      int submitted = 0;
      for (int round = 0; round < 30; round++) {
        if (rnd.nextInt(3) == 0) {
          String client = "c" + rnd.nextInt(4);
          String request = "r" + round;
          int prompts = 1 + rnd.nextInt(2 * maxNumSeqs);
          int priority = rnd.nextInt(3) - 1;
          for (int i = 0; i < prompts; i++) {
            h.submit(request + "-" + i, request, client, priority, prompt(next[0]++), 1,
                1 + rnd.nextInt(6), false);
            submitted++;
          }
        }
        h.step();
        h.assertAccounting();
      }
      runAll(h);
      assertEquals(List.of(), problems, "seed " + seed);
      assertEquals(submitted, h.finished.size(), "seed " + seed);
    }
  }

  private static void check(EngineHarness h, int maxNumSeqs, int cap, List<String> problems,
      long seed) {
    List<Sequence> running = h.scheduler.running();
    Set<String> clients = new HashSet<>();
    Map<String, Integer> byClient = new HashMap<>();
    Map<String, Integer> byRequest = new HashMap<>();
    for (Sequence s : running) {
      clients.add(s.request.client());
      byClient.merge(s.request.client(), 1, Integer::sum);
      byRequest.merge(s.request.group(), 1, Integer::sum);
    }
    h.scheduler.waiting().forEach(s -> clients.add(s.request.client()));
    if (clients.isEmpty()) {
      return;
    }
    int share = Math.max(1, maxNumSeqs / clients.size());
    if (running.size() > maxNumSeqs) {
      problems.add("seed " + seed + ": " + running.size() + " running > " + maxNumSeqs);
    }
    for (Sequence w : h.scheduler.waiting()) {
      String c = w.request.client();
      if (byClient.getOrDefault(c, 0) < share) {
        byClient.forEach((other, n) -> {
          if (!other.equals(c) && n > share) {
            problems.add("seed " + seed + ": " + other + " runs " + n + " > share " + share
                + " while " + c + " waits with " + byClient.getOrDefault(c, 0));
          }
        });
      }
      if (byRequest.getOrDefault(w.request.group(), 0) < cap) {
        for (Sequence r : running) {
          if (r.request.client().equals(c) && !r.request.group().equals(w.request.group())
              && byRequest.get(r.request.group()) > cap && r.request.priority()
              >= w.request.priority()) {
            problems.add("seed " + seed + ": request " + r.request.group() + " runs "
                + byRequest.get(r.request.group()) + " > cap " + cap + " while "
                + w.request.group() + " of the same client waits");
            break;
          }
        }
      }
    }
  }
}
