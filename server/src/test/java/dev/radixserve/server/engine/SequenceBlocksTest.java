package dev.radixserve.server.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.EvictionPolicy;
import dev.radixserve.cache.PrefixCache;
import dev.radixserve.cache.RadixCache;
import dev.radixserve.model.ForwardBatch;
import dev.radixserve.model.sampling.LogitsSampler;
import dev.radixserve.model.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link SequenceBlocks}' contract operation by operation (match, lock, allocate, copy-on-write,
 * free, preempt), on a real pool and radix cache, with its invariant check after each one. The
 * scheduler's tests drive the same class through whole steps ({@link EngineHarness}).
 */
class SequenceBlocksTest {

  private static final int B = 4;

  private final BlockPool pool = new BlockPool(8);
  private final RadixCache cache = new RadixCache(pool, B, EvictionPolicy.lru());
  private int evicted;
  private final EngineObserver observer = new EngineObserver() {
    @Override
    public void evicted(int blocks) {
      evicted += blocks;
    }
  };
  private final List<Sequence> live = new ArrayList<>();

  private SequenceBlocks blocks(boolean caching) {
    return new SequenceBlocks(pool, caching ? Optional.<PrefixCache>of(cache) : Optional.empty(),
        B, observer);
  }

  private Sequence sequence(String id, int[] prompt) {
    EngineRequest r = new EngineRequest(id, id, prompt, SamplingParams.greedy(), 1, 4, true, "",
        new TokenSink() {
          @Override
          public void onOutput(ChoiceOutput output) {}

          @Override
          public void onComplete(RequestUsage usage) {}

          @Override
          public void onError(int httpStatus, String message) {}
        });
    Sequence s = new Sequence(r, new RequestState(r, 0), 0, new LogitsSampler(r.params(), 1000));
    live.add(s);
    return s;
  }

  private static int[] tokens(int n) {
    return IntStream.range(100, 100 + n).toArray();
  }

  /** Runs the one invariant check; returns the snapshot when it passed. */
  private EngineSnapshot check(SequenceBlocks blocks) {
    EngineSnapshot s = blocks.snapshot(live, 0, 0);
    assertNull(s.integrityError(), s.toString());
    return s;
  }

  /** As if a step computed the whole table of {@code s}: grows it, then marks it computed. */
  private void compute(SequenceBlocks blocks, Sequence s) {
    assertTrue(blocks.ensureCapacity(s, s.length()));
    s.numComputed = s.length();
  }

  private void finish(SequenceBlocks blocks, Sequence s) {
    blocks.cacheAndRelease(s);
    live.remove(s);
  }

  /** A request of {@code n} prompt tokens ran and finished: the cache holds them. */
  private void ranBefore(SequenceBlocks blocks, int n) {
    Sequence a = sequence("before", tokens(n));
    assertEquals(0, blocks.admit(a));
    compute(blocks, a);
    finish(blocks, a);
  }

  /** Aborted or failed: every block and lock goes back, nothing is cached. */
  private void drop(SequenceBlocks blocks, Sequence s) {
    blocks.release(s);
    live.remove(s);
  }

  @Test
  void aMatchTakesTheCachedPrefixLockedUntilReleased() {
    SequenceBlocks blocks = blocks(true);
    Sequence a = sequence("a", tokens(9));
    assertEquals(0, blocks.admit(a));
    compute(blocks, a);
    check(blocks);
    finish(blocks, a); // caches its 9 computed tokens: 2 whole blocks and a partial one
    assertTrue(check(blocks).quiescent());
    assertEquals(3, cache.cachedBlocks());

    Sequence b = sequence("b", tokens(9)); // the same prompt: all but its last token match
    assertEquals(8, blocks.probe(b));
    assertEquals(8, blocks.admit(b));
    assertEquals(2, b.tableSize());
    assertNull(b.pendingCopy, "the match ends on a block boundary");
    assertEquals(1, cache.evict(3), "only the unlocked partial leaf may go");
    EngineSnapshot held = check(blocks);
    assertEquals(2, held.cachedBlocks());
    assertEquals(0, held.evictableBlocks());
    drop(blocks, b);
    assertEquals(2, check(blocks).evictableBlocks());
    assertTrue(check(blocks).quiescent());
  }

  @Test
  void aMatchEndingInsideABlockCopiesItsSlotsThenLetsTheSourceGo() {
    SequenceBlocks blocks = blocks(true);
    ranBefore(blocks, 10); // the cache holds 10 tokens: c0, c1 and c2 with 2 slots

    Sequence b = sequence("b", tokens(11));
    assertEquals(10, blocks.admit(b));
    assertEquals(2, b.tableSize());
    Sequence.PendingCopy copy = b.pendingCopy;
    assertNotNull(copy);
    assertEquals(2, copy.slots());
    assertEquals(2, copy.tableIndex());
    assertEquals(3, cache.cachedBlocks());
    assertEquals(0, cache.evictableBlocks(), "the copy source is locked with the prefix");

    assertTrue(blocks.ensureCapacity(b, b.length() + 1));
    ForwardBatch.BlockCopy c = copy.toBlockCopy(b);
    assertEquals(copy.sourceBlock(), c.srcBlock());
    assertEquals(b.block(2), c.dstBlock());
    check(blocks);
    blocks.copied(b); // the step ran: the source may be evicted again
    assertNull(b.pendingCopy);
    assertEquals(1, cache.evictableBlocks());
    drop(blocks, b);
    assertTrue(check(blocks).quiescent());
  }

  @Test
  void allocationEvictsUnlockedCacheLeavesAndFailsWithoutChangeWhenShort() {
    SequenceBlocks blocks = blocks(true);
    ranBefore(blocks, 8); // 2 cached blocks, 6 free

    Sequence b = sequence("b", IntStream.range(500, 532).toArray()); // 8 blocks, nothing shared
    blocks.admit(b);
    assertTrue(blocks.ensureCapacity(b, 32));
    assertEquals(2, evicted);
    assertEquals(8, b.tableSize());
    assertEquals(0, pool.freeCount());
    check(blocks);

    Sequence c = sequence("c", tokens(4));
    blocks.admit(c);
    assertFalse(blocks.ensureCapacity(c, 4));
    assertEquals(0, c.tableSize());
    check(blocks);
    finish(blocks, c);
    b.numComputed = 32;
    finish(blocks, b); // preemption takes this path too: computed blocks go into the cache
    assertEquals(8, cache.cachedBlocks());
    assertTrue(check(blocks).quiescent());
  }

  @Test
  void forkedChoicesShareThePromptBlocksUntilTheLastLetsGoWithTheCacheOff() {
    SequenceBlocks blocks = blocks(false);
    Sequence parent = sequence("p", tokens(6));
    assertEquals(0, blocks.admit(parent));
    compute(blocks, parent);
    int[] prompt = parent.blockTable();
    Sequence child = sequence("p", tokens(6));
    blocks.fork(parent, child);
    assertArrayEquals(new int[] {prompt[0]}, child.blockTable());
    assertEquals(prompt[1], child.pendingCopy.sourceBlock(), "the partial block is copied");
    assertEquals(6, child.numComputed);
    assertEquals(2, check(blocks).inUseBlocks());

    drop(blocks, parent);
    assertEquals(6, pool.freeCount(), "the child still holds the prompt's blocks");
    check(blocks);
    drop(blocks, child);
    assertTrue(check(blocks).quiescent());
    assertEquals(8, pool.freeCount());
  }

  @Test
  void aLockIsReleasedExactlyOnce() {
    SequenceBlocks blocks = blocks(true);
    ranBefore(blocks, 9);
    Sequence b = sequence("b", tokens(9));
    blocks.admit(b);
    SequenceBlocks.PrefixHold hold = b.hold;
    blocks.release(b);
    assertThrows(IllegalStateException.class, hold::release);
  }

  @Test
  void theCheckNamesABlockOwnedTwiceAndBlocksNobodyAccountsFor() {
    SequenceBlocks blocks = blocks(true);
    Sequence a = sequence("a", tokens(4));
    Sequence b = sequence("b", tokens(4));
    blocks.admit(a);
    compute(blocks, a);
    b.appendBlocks(a.blockTable());
    String twice = blocks.snapshot(live, 0, 0).integrityError();
    assertNotNull(twice);
    assertTrue(twice.contains("owned twice"), twice);

    live.remove(b);
    pool.allocate(1); // taken from the pool by no sequence and not cached: a leak
    String leak = blocks.snapshot(live, 0, 0).integrityError();
    assertNotNull(leak);
    assertTrue(leak.contains("!= total"), leak);
  }
}
