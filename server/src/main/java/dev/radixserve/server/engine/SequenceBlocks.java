package dev.radixserve.server.engine;

import dev.radixserve.cache.InsertResult;
import dev.radixserve.cache.MatchResult;
import dev.radixserve.cache.PrefixCache;
import java.util.Arrays;
import java.util.Optional;

/**
 * Moves KV blocks between the pool, the prefix cache and sequences: admission matches, growth
 * (evicting when the pool is short), caching of computed prefixes, forking and release. With
 * prefix caching off ({@code cache} empty) nothing is matched or inserted: blocks are allocated
 * and freed.
 */
final class SequenceBlocks {

  private final BlockSource pool;
  private final Optional<PrefixCache> cache;
  private final int blockSize;
  private final EngineObserver observer;

  SequenceBlocks(BlockSource pool, Optional<PrefixCache> cache, int blockSize,
      EngineObserver observer) {
    this.pool = pool;
    this.cache = cache;
    this.blockSize = blockSize;
    this.observer = observer;
  }

  int blockSize() {
    return blockSize;
  }

  boolean cachingEnabled() {
    return cache.isPresent();
  }

  /** Tokens of {@code s} the cache holds now (never its last token); 0 with caching off. */
  int probe(Sequence s) {
    return cache.map(c -> c.matchPrefix(s.tokensArray(), matchable(s), s.request.namespace())
        .matchedTokens()).orElse(0);
  }

  /**
   * Tokens of {@code s} a cache match may cover: never its last (its logits are needed), none
   * while it needs its prompt's logits (a cached prefix has none; vLLM skips the cache then too).
   */
  private static int matchable(Sequence s) {
    return s.needsPromptLogits() ? 0 : s.length() - 1;
  }

  /** Free blocks plus those eviction could free. */
  int available() {
    return pool.freeBlocks() + cache.map(PrefixCache::evictableBlocks).orElse(0);
  }

  static int blocksFor(int tokens, int blockSize) {
    return (tokens + blockSize - 1) / blockSize;
  }

  /**
   * Starts {@code s}: takes the cached prefix (locked) as its first blocks.
   *
   * @return tokens reused from the cache
   */
  int admit(Sequence s) {
    if (s.tableSize() != 0 || s.hold != null) {
      throw new IllegalStateException("admitting " + s + " which still holds blocks");
    }
    if (cache.isEmpty()) {
      return 0;
    }
    PrefixCache c = cache.get();
    MatchResult m = c.matchPrefix(s.tokensArray(), matchable(s), s.request.namespace());
    s.hold = new CacheHold(c, m.node());
    s.appendBlocks(m.blockIds());
    s.heldBlocks = m.blockIds().length;
    s.numComputed = m.matchedTokens();
    return m.matchedTokens();
  }

  /** Grows the table of {@code s} to cover {@code tokens} positions; false if blocks ran out. */
  boolean ensureCapacity(Sequence s, int tokens) {
    int need = blocksFor(tokens, blockSize) - s.tableSize();
    if (need <= 0) {
      return true;
    }
    if (pool.freeBlocks() < need && cache.isPresent()) {
      int evicted = cache.get().evict(need - pool.freeBlocks());
      if (evicted > 0) {
        observer.evicted(evicted);
      }
    }
    if (pool.freeBlocks() < need) {
      return false;
    }
    s.appendBlocks(pool.allocate(need));
    return true;
  }

  /**
   * Inserts the full computed blocks of a running {@code s} into the cache and moves its lock to
   * the new node, so concurrent requests can share them (SGLang's "cache unfinished request").
   */
  void cacheComputed(Sequence s) {
    if (cache.isEmpty()) {
      return;
    }
    PrefixCache c = cache.get();
    int full = s.numComputed / blockSize;
    if (full <= s.heldBlocks) {
      return;
    }
    int[] ids = Arrays.copyOf(s.blockTable(), full);
    InsertResult inserted = c.insert(s.tokensArray(), ids, s.request.namespace());
    MatchResult m = c.matchPrefix(s.tokensArray(), full * blockSize, s.request.namespace());
    if (m.matchedTokens() != full * blockSize) {
      throw new IllegalStateException("inserted " + full * blockSize + " tokens of " + s
          + " but the cache matches only " + m.matchedTokens());
    }
    PrefixHold newHold = new CacheHold(c, m.node());
    s.hold.release();
    s.hold = newHold;
    s.replaceBlocks(m.blockIds());
    s.heldBlocks = full;
    pool.free(inserted.duplicateBlockIds());
  }

  /**
   * Makes the prompt's full blocks of {@code parent} shareable and gives {@code child} a claim on
   * them; the child recomputes the prompt's partial last block (fewer than B tokens) itself.
   */
  void fork(Sequence parent, Sequence child) {
    int full = parent.promptLen / blockSize;
    if (cache.isPresent()) {
      cacheComputed(parent);
    } else if (parent.heldBlocks < full) {
      if (parent.hold != null) {
        throw new IllegalStateException("fork of " + parent + " with a partial shared prefix");
      }
      SharedBlocks shared = new SharedBlocks(Arrays.copyOf(parent.blockTable(), full), pool);
      parent.hold = shared.newHold();
      parent.heldBlocks = full;
    }
    int held = Math.min(parent.heldBlocks, full);
    child.hold = parent.hold == null ? null : parent.hold.share();
    child.appendBlocks(Arrays.copyOf(parent.blockTable(), held));
    child.heldBlocks = held;
    child.numComputed = held * blockSize;
  }

  /** Caches what {@code s} computed (cache on), then lets go of every block. */
  void cacheAndRelease(Sequence s) {
    if (cache.isPresent() && s.hold != null) {
      int full = s.numComputed / blockSize;
      if (full > s.heldBlocks) {
        int[] ids = Arrays.copyOf(s.blockTable(), full);
        InsertResult inserted = cache.get().insert(s.tokensArray(), ids, s.request.namespace());
        pool.free(inserted.duplicateBlockIds());
        s.hold.release();
        pool.free(Arrays.copyOfRange(s.blockTable(), full, s.tableSize()));
        s.clearBlocks();
        return;
      }
    }
    release(s);
  }

  /** Lets go of every block of {@code s} without caching anything (its K/V may be invalid). */
  void release(Sequence s) {
    if (s.hold != null) {
      s.hold.release();
    }
    pool.free(s.ownedBlocks());
    s.clearBlocks();
  }
}
