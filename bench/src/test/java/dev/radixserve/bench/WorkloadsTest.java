package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkloadsTest {

  private static final WorkloadParams DEFAULTS = new WorkloadParams(0, null, 32, 1024);

  private static int[] lengths(Workload w) {
    return w.requests().stream().mapToInt(BenchRequest::promptLength).toArray();
  }

  @Test
  void everyNameHasOneSpellingAndAnyOtherIsRefusedWithTheList() {
    List<String> names = Workloads.names();
    for (String n : names) {
      assertTrue(n.matches("[a-z0-9]+(-[a-z0-9]+)*"), "kebab-case: " + n);
    }
    // no two names differ only in separators (eviction-pressure and eviction_pressure did)
    assertEquals(names.size(), names.stream().map(n -> n.replace("-", "")).distinct().count());
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Workloads.create("shared_prefix_basic", DEFAULTS));
    for (String n : names) {
      assertTrue(e.getMessage().contains(n), e.getMessage());
    }
  }

  @Test
  void sharedSystemPromptFitsTheSystemPromptIntoTheContext() {
    Workload w = Workloads.create("shared-system-prompt", DEFAULTS);
    assertEquals(32, w.size());
    // 1,000 would leave no room for 20 user tokens + 32 output tokens in 1,024: 972 + 20.
    assertTrue(Arrays.stream(lengths(w)).allMatch(n -> n == 992));
    Workload roomy = Workloads.create("shared-system-prompt", new WorkloadParams(0, 4, 4, 2048));
    assertTrue(Arrays.stream(lengths(roomy)).allMatch(n -> n == 1020));
    // the 1,000-token system prompt is 62 whole blocks of 16 = 992 tokens
    assertEquals(3 * 992, Arrays.stream(TheoreticalMaximum.perRequest(roomy, 16)).sum());
  }

  @Test
  void multiTurnGrowsByAnswerAndFollowUp() {
    Workload w = Workloads.create("multi-turn", new WorkloadParams(0, 10, 8, 1024));
    assertEquals(10, w.size());
    // 3 conversations (4 + 4 + 2 turns), planned turn by turn across conversations.
    assertArrayEquals(new int[] {48, 48, 48, 80, 80, 80, 112, 112, 144, 144}, lengths(w));
    assertArrayEquals(new int[] {0, 1, 2, 0, 1, 2, 0, 1, 0, 1},
        w.requests().stream().mapToInt(BenchRequest::session).toArray());
    BenchRequest first = w.requests().get(0);
    BenchRequest second = w.requests().get(3);
    assertArrayEquals(first.prompt(), Arrays.copyOf(second.prompt(), 48));
    // Turn t can reuse all of turn t-1's whole blocks: 48 → 48, 80 → 80, 112 → 112 at block 16.
    assertArrayEquals(new int[] {0, 0, 0, 48, 48, 48, 80, 80, 112, 112},
        TheoreticalMaximum.perRequest(w, 16));
  }

  @Test
  void fewShotAgentUniqueAndEvictionSizes() {
    assertTrue(Arrays.stream(lengths(Workloads.create("few-shot", DEFAULTS)))
        .allMatch(n -> n == 664));
    Workload agents = Workloads.create("agent-loop", DEFAULTS);
    assertEquals(24, agents.size());
    assertEquals(416 + 5 * (32 + 32), agents.maxPromptLength());
    Workload unique = Workloads.create("unique", DEFAULTS);
    assertEquals(32 * 256, unique.totalPromptTokens());
    assertEquals(0, Arrays.stream(TheoreticalMaximum.perRequest(unique, 16)).sum());
    Workload eviction = Workloads.create("eviction-pressure", DEFAULTS);
    assertEquals(48, eviction.size());
    // Rounds 2 and 3 can reuse each 512-token document: 32 × 512.
    assertEquals(32 * 512, Arrays.stream(TheoreticalMaximum.perRequest(eviction, 16)).sum());
  }

  @Test
  void tieredSystemPromptsHaveAWorkingSetOfSixtyFourLongPromptsDrawnZipf() {
    Workload w = Workloads.create("tiered-system-prompts", DEFAULTS);
    assertEquals(192, w.size());
    int prefix = 1024 - 16 - 32; // as long as GPT-2's context allows
    assertTrue(Arrays.stream(lengths(w)).allMatch(n -> n == prefix + 16));
    java.util.Map<String, Integer> uses = new java.util.HashMap<>();
    for (BenchRequest r : w.requests()) {
      uses.merge(Arrays.toString(Arrays.copyOf(r.prompt(), prefix)), 1, Integer::sum);
    }
    assertTrue(uses.size() > 32 && uses.size() <= 64, uses.size() + " distinct system prompts");
    int hottest = uses.values().stream().max(Integer::compare).orElseThrow();
    assertTrue(hottest >= 192 / 8, "the hottest prompt draws " + hottest);
    // every request after a prompt's first can reuse its whole blocks
    assertEquals((192 - uses.size()) * (prefix / 16) * 16,
        Arrays.stream(TheoreticalMaximum.perRequest(w, 16)).sum());
    assertFalse(Workloads.select(Workloads.ALL, DEFAULTS).stream()
        .anyMatch(x -> x.name().equals("tiered-system-prompts")));
  }

  @Test
  void sameSeedSamePromptsOtherSeedOthers() {
    for (String name : Workloads.names()) {
      Workload a = Workloads.create(name, DEFAULTS);
      Workload b = Workloads.create(name, DEFAULTS);
      Workload c = Workloads.create(name, new WorkloadParams(1, null, 32, 1024));
      assertEquals(a, b, name);
      assertFalse(Arrays.equals(a.requests().get(0).prompt(), c.requests().get(0).prompt()), name);
      for (BenchRequest r : a.requests()) {
        assertTrue(Arrays.stream(r.prompt()).allMatch(id -> id >= 0 && id < 50256), name);
      }
    }
  }

  @Test
  void workloadsDoNotSharePrefixesWithEachOther() {
    TheoreticalMaximum max = new TheoreticalMaximum(4);
    for (String name : List.of("unique", "low-reuse-control", "shared-prefix-basic")) {
      for (BenchRequest r : Workloads.create(name, DEFAULTS).requests()) {
        if (r.index() == 0) {
          assertEquals(0, max.offer(r.prompt()), name + " shares with an earlier workload");
        } else {
          max.offer(r.prompt());
        }
      }
    }
  }

  @Test
  void rejectsWhatDoesNotFitAndUnknownNames() {
    var e = assertThrows(IllegalArgumentException.class,
        () -> Workloads.create("multi-turn", new WorkloadParams(0, null, 300, 1024)));
    assertEquals("multi-turn: longest prompt 1020 + max_tokens 300 exceeds --max-model-len 1024;"
        + " lower --max-tokens or --num-requests", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> Workloads.create("nope", DEFAULTS));
    assertEquals(12, Workloads.select("all", DEFAULTS).size());
  }
}
