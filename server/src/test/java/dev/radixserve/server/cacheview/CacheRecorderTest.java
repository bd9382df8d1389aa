package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.RadixCache;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The engine-side recorder: bounded, drops and counts, copies the tree only when it changed. */
class CacheRecorderTest {

  private final BlockPool pool = new BlockPool(11);
  private final RadixCache cache = new RadixCache(pool, 4, EvictionPolicy.lru());
  private final CacheRecorder recorder = new CacheRecorder();

  CacheRecorderTest() {
    cache.addListener(recorder);
  }

  private static int[] run(int from, int n) {
    return TreeJsonTest.run(from, n);
  }

  @Test
  void anUnchangedCacheIsNotCopiedAgain() {
    cache.insert(run(1, 4), pool.allocate(1), "");
    CacheSample first = recorder.sample(cache);
    assertSame(first, recorder.sample(cache));
    cache.matchPrefix(run(1, 5), 4, ""); // a lookup touches hits and access times
    CacheSample second = recorder.sample(cache);
    assertEquals(first.version() + 1, second.version());
    assertSame(second, recorder.sample(cache));
    cache.lock(cache.matchPrefix(run(1, 5), 4, "").node());
    assertEquals(second.version() + 1, recorder.sample(cache).version());
  }

  @Test
  void eventsAreQueuedOnlyWhileWatchedExceptAdmissionMatches() {
    cache.insert(run(1, 4), pool.allocate(1), "");
    recorder.prefixMatched("cmpl-a-0", 0, "", 2, 4, 4);
    List<CacheEvent> events = new ArrayList<>();
    recorder.drainTo(events);
    assertEquals(1, events.size());
    recorder.watching(true);
    cache.insert(run(1, 8), new int[] {0, pool.allocate(1)[0]}, "");
    recorder.drainTo(events);
    assertEquals(List.of("match", "stored"), events.stream()
        .map(e -> EventJson.event(e, ids -> "").get("type").asText()).toList());
    JsonNode stored = EventJson.event(events.get(1), ids -> ids.length + " tokens");
    assertEquals("8 tokens", stored.get("text").asText());
    assertEquals(8, stored.get("path_tokens").asInt());
    assertEquals(1, stored.get("blocks").asInt());
  }

  @Test
  void aFullQueueDropsAndCountsInsteadOfGrowing() {
    recorder.watching(true);
    int extra = 10;
    for (int i = 0; i < CacheRecorder.CAPACITY + extra; i++) {
      recorder.locked("", 2, 1);
    }
    assertEquals(extra, recorder.dropped());
    List<CacheEvent> events = new ArrayList<>();
    recorder.drainTo(events);
    assertEquals(CacheRecorder.CAPACITY, events.size());
    recorder.unlocked("", 2, 0); // room again
    recorder.drainTo(events);
    assertEquals(CacheRecorder.CAPACITY + 1, events.size());
    assertEquals(extra, recorder.dropped());
  }
}
