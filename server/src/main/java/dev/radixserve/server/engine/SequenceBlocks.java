package dev.radixserve.server.engine;

import dev.radixserve.cache.BlockPool;
import dev.radixserve.cache.InsertResult;
import dev.radixserve.cache.MatchResult;
import dev.radixserve.cache.NodeHandle;
import dev.radixserve.cache.PrefixCache;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * All of a sequence's KV block bookkeeping, between the pool, the prefix cache and the sequences'
 * block tables (nano-vllm's {@code BlockManager}, vLLM's {@code KVCacheManager}). With prefix
 * caching off ({@code cache} empty) nothing is matched or inserted: blocks are allocated and
 * freed. Engine thread only.
 *
 * <p>The contract, operation by operation:
 *
 * <ul>
 *   <li><b>match</b>: {@link #probe} (how much the cache holds, for ranking) and {@link #admit}
 *       (takes the cached prefix as the first blocks of the table). Never the last token.
 *   <li><b>lock</b>: a sequence's claim on the leading blocks of its table it does not own alone
 *       is a {@link PrefixHold}: a lock on a radix node (cache on) or a share of a forked
 *       prompt's blocks (cache off, {@link #fork}). Each is released exactly once; {@link
 *       #cacheComputed} moves the lock down the path as prefill chunks are cached.
 *   <li><b>allocate</b>: {@link #ensureCapacity} grows a table, evicting unlocked cache leaves
 *       when the pool is short, with the new blocks next to the table's last one.
 *   <li><b>copy-on-write</b>: a sequence whose borrowed prefix ends inside a block carries a
 *       {@link Sequence.PendingCopy} holding its source; the runner's next step copies the slots
 *       into the sequence's own block and {@link #copied} lets the source go.
 *   <li><b>free</b>: {@link #cacheAndRelease} (finished: what was computed goes into the cache
 *       first) or {@link #release} (aborted or failed: nothing is cached); every block and lock
 *       goes back.
 *   <li><b>preempt</b>: the scheduler's victim goes through {@link #cacheAndRelease} too; it is
 *       recomputed later from whatever of it the cache still holds.
 *   <li><b>invariants</b>: {@link #snapshot} checks DESIGN.md's block invariants in one place
 *       ({@code free + cached + inUse == total}, no block owned twice, the cache's integrity).
 * </ul>
 *
 * <p>Reuse is token-granular. A sequence whose cached prefix ends k tokens into a block holds the
 * whole blocks before it and starts with a {@link Sequence.PendingCopy}: the block's first k
 * slots go into a fresh block of its own in its next step (copy-on-write), and it computes from
 * there. A block the cache holds is never written again: so a prompt's partial last block goes
 * into the cache when its prefill ends only if the sequence can go on in a copy of it.
 *
 * <pre>
 *   B = 4, prompt of 10 tokens, the cache holds 9 of them (a repeat):
 *     cache:    | c0 | c1 | c2: 8 . . . |       c2 is the copy source (1 slot)
 *     sequence: | c0 | c1 | own: 8 9 . .|       held: c0, c1; copy c2[0, 1) → own; compute 9
 * </pre>
 */
final class SequenceBlocks {

  private final BlockPool pool;
  private final Optional<PrefixCache> cache;
  private final int blockSize;
  private final EngineObserver observer;
  private final Optional<BlockTiers> tiers;
  private final TierLoads loads;

  SequenceBlocks(BlockPool pool, Optional<PrefixCache> cache, int blockSize,
      EngineObserver observer) {
    this(pool, cache, blockSize, observer, Optional.empty(), null);
  }

  /**
   * @param tiers the tiers below the pool (only with a cache)
   * @param loads runs loads from them; null without tiers
   */
  SequenceBlocks(BlockPool pool, Optional<PrefixCache> cache, int blockSize,
      EngineObserver observer, Optional<BlockTiers> tiers, TierLoads loads) {
    if (tiers.isPresent() && (cache.isEmpty() || loads == null)) {
      throw new IllegalArgumentException("cache tiers need the prefix cache and a loader");
    }
    this.pool = pool;
    this.cache = cache;
    this.blockSize = blockSize;
    this.observer = observer;
    this.tiers = tiers;
    this.loads = loads;
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
    return pool.freeCount() + cache.map(PrefixCache::evictableBlocks).orElse(0);
  }

  static int blocksFor(int tokens, int blockSize) {
    return (tokens + blockSize - 1) / blockSize;
  }

  /** Blocks in the pool and on its free list (the engine's gauges). */
  int totalBlocks() {
    return pool.total();
  }

  int freeBlocks() {
    return pool.freeCount();
  }

  /**
   * DESIGN.md's block invariants, checked here only (the engine each time it runs dry, the
   * scheduler tests after every step): every block is free, cached or in use; a block in use is
   * owned by one sequence, or shared through holds of one forked prompt; {@code free + cached +
   * inUse == total}; the cache passes its own integrity check (with the pool: lock refs,
   * evictable leaves, nothing both free and referenced).
   *
   * @param live every sequence that may hold blocks
   * @param running sequences admitted, waiting: waiting ones (for the snapshot)
   */
  EngineSnapshot snapshot(Iterable<Sequence> live, int running, int waiting) {
    Set<Integer> inUse = new HashSet<>();
    String error = null;
    for (Sequence s : live) {
      for (int b : s.ownedBlocks()) {
        if (!inUse.add(b) && error == null) {
          error = "block " + b + " owned twice (again by " + s + ")";
        }
      }
      if (s.hold != null) {
        for (int b : s.hold.privateBlocks()) {
          inUse.add(b); // a forked prompt's blocks: one share per choice
        }
      }
    }
    for (int b : loadingBlocks()) { // a load's blocks: in no table and not cached yet
      if (!inUse.add(b) && error == null) {
        error = "block " + b + " loading and owned";
      }
    }
    int cached = cache.map(PrefixCache::cachedBlocks).orElse(0);
    int evictable = cache.map(PrefixCache::evictableBlocks).orElse(0);
    if (error == null && pool.freeCount() + cached + inUse.size() != pool.total()) {
      error = "free " + pool.freeCount() + " + cached " + cached + " + inUse " + inUse.size()
          + " != total " + pool.total();
    }
    if (error == null) {
      try {
        cache.ifPresent(c -> c.checkIntegrity(inUse.size()));
      } catch (IllegalStateException e) {
        error = e.getMessage();
      }
    }
    return new EngineSnapshot(pool.total(), pool.freeCount(), cached, evictable, inUse.size(),
        running, waiting, error);
  }

  // ---- locks: what a sequence holds of the blocks it does not own alone ----

  /**
   * A sequence's claim on the leading blocks of its block table that it does not own alone: a lock
   * on a radix-cache node (cache on) or a share of a forked prompt's blocks (cache off).
   * Released exactly once.
   */
  interface PrefixHold {

    /** A second, independent claim on the same blocks (for a forked choice). */
    PrefixHold share();

    void release();

    /** Blocks kept in use (not free, not cached) only by holds like this one; 0 for cache locks. */
    int[] privateBlocks();
  }

  /** A lock on a radix-cache node: the path's blocks cannot be evicted while held. */
  private static final class CacheHold implements PrefixHold {

    private final PrefixCache cache;
    private final NodeHandle node;
    private boolean released;

    /** Locks {@code node}. */
    CacheHold(PrefixCache cache, NodeHandle node) {
      this.cache = cache;
      this.node = node;
      cache.lock(node);
    }

    @Override
    public PrefixHold share() {
      return new CacheHold(cache, node);
    }

    @Override
    public void release() {
      if (released) {
        throw new IllegalStateException("cache lock released twice");
      }
      released = true;
      cache.unlock(node);
    }

    @Override
    public int[] privateBlocks() {
      return new int[0];
    }
  }

  /**
   * Prompt blocks shared by the choices of one request when prefix caching is off: freed when the
   * last choice lets go.
   */
  private final class SharedBlocks {

    private final int[] blockIds;
    private int refs;

    SharedBlocks(int[] blockIds) {
      this.blockIds = blockIds.clone();
    }

    PrefixHold newHold() {
      refs++;
      return new Hold();
    }

    private final class Hold implements PrefixHold {
      private boolean released;

      @Override
      public PrefixHold share() {
        return newHold();
      }

      @Override
      public void release() {
        if (released) {
          throw new IllegalStateException("shared prompt blocks released twice");
        }
        released = true;
        refs--;
        if (refs == 0) {
          pool.free(blockIds);
        }
      }

      @Override
      public int[] privateBlocks() {
        return blockIds;
      }
    }
  }

  /**
   * Starts {@code s}: takes the cached prefix (locked) as its first blocks; when it ends inside a
   * block, plans the copy of that block's cached slots, unless the locked source would leave too
   * few blocks for the admission (then the sequence recomputes those tokens instead).
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
    s.hold = new CacheHold(c, m.fullBlocksNode());
    if (s.loadedHold != null) { // the blocks it loaded are in its match now, locked by its hold
      s.loadedHold.release();
      s.loadedHold = null;
    }
    int[] whole = m.fullBlockIds();
    if (whole.length > 0) {
      tiers.ifPresent(t -> t.reused(whole));
    }
    s.appendBlocks(whole);
    s.heldBlocks = whole.length;
    s.numComputed = m.matchedTokens();
    if (m.endsInsideBlock()) {
      s.pendingCopy = new Sequence.PendingCopy(m.copySource(), m.partialTokens(), whole.length,
          new CacheHold(c, m.node()));
      // the scheduler admits when blocksFor(length + 1) - table fit in available()
      if (blocksFor(s.length() + 1, blockSize) - s.tableSize() > available()) {
        dropCopy(s);
      }
    }
    s.matchedNode = s.pendingCopy != null ? m.node() : m.fullBlocksNode();
    return s.numComputed;
  }

  /** Gives up a planned copy: the sequence computes those tokens itself. */
  private void dropCopy(Sequence s) {
    s.numComputed -= s.pendingCopy.slots();
    s.pendingCopy.sourceHold().release();
    s.pendingCopy = null;
  }

  /** After a step that ran {@code s}: its copy is done, so its source may go. */
  void copied(Sequence s) {
    if (s.pendingCopy != null) {
      s.pendingCopy.sourceHold().release();
      s.pendingCopy = null;
    }
  }

  /** Grows the table of {@code s} to cover {@code tokens} positions; false if blocks ran out. */
  boolean ensureCapacity(Sequence s, int tokens) {
    int need = blocksFor(tokens, blockSize) - s.tableSize();
    if (need <= 0) {
      return true;
    }
    if (pool.freeCount() < need && cache.isPresent()) {
      int evicted = cache.get().evict(need - pool.freeCount());
      if (evicted > 0) {
        observer.evicted(evicted);
      }
    }
    if (pool.freeCount() < need) {
      return false;
    }
    // next to the table's last block (a cached prefix's or its own) where the pool allows: the
    // attention then reads the sequence as one stream (BlockPool)
    int last = s.tableSize() == 0 ? -1 : s.block(s.tableSize() - 1);
    s.appendBlocks(pool.allocate(need, last));
    return true;
  }

  /**
   * Positions {@code s} could grow by beyond the token it decodes next without evicting anything:
   * room in its table's last block and the free blocks but {@code reserved} (what a draft may
   * take: speculation never evicts a cached block).
   */
  int draftRoom(Sequence s, int reserved) {
    return (s.tableSize() + pool.freeCount() - reserved) * blockSize - (s.numComputed + 1);
  }

  /**
   * After a verified draft: frees the blocks of {@code s} past the one its next token goes into.
   * They hold only rejected drafts' K/V. Slots past {@code numComputed} in the blocks it keeps
   * hold them too; those slots are never shared, since the cache takes a sequence's blocks with
   * its {@code numComputed} tokens only, and the next step that computes a position overwrites
   * its slot.
   */
  void rollBack(Sequence s) {
    int keep = Math.max(blocksFor(s.length(), blockSize), s.heldBlocks);
    if (s.tableSize() > keep) {
      pool.free(Arrays.copyOfRange(s.blockTable(), keep, s.tableSize()));
      s.truncateBlocks(keep);
    }
  }

  /**
   * Inserts the full computed blocks of a running {@code s} into the cache and moves its lock to
   * the new node, so concurrent requests can share them (SGLang's "cache unfinished request").
   * When its prefill is done, the partial last block goes in too (see {@link #sharePartial}).
   */
  void cacheComputed(Sequence s) {
    if (cache.isEmpty()) {
      return;
    }
    PrefixCache c = cache.get();
    int full = s.numComputed / blockSize;
    if (full > s.heldBlocks) {
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
    if (s.numComputed == s.prefillEnd && s.numComputed % blockSize != 0 && s.pendingCopy == null
        && available() > 0) {
      sharePartial(s);
    }
  }

  /**
   * Puts the partial last block of a finished prefill into the cache, so that requests sharing
   * the prompt reuse it while {@code s} still runs; {@code s} goes on in a copy of it (the cache
   * never writes a block it holds). Only with a block to spare for the copy: otherwise a request
   * that fills the pool could never finish.
   */
  private void sharePartial(Sequence s) {
    PrefixCache c = cache.get();
    int index = s.heldBlocks;
    int mine = s.block(index);
    InsertResult r = c.insert(s.tokensArray(), s.numComputed,
        Arrays.copyOf(s.blockTable(), index + 1), s.request.namespace());
    if (r.duplicateBlockIds().length != 0) {
      return; // the cache already had these tokens in a block of its own: keep writing ours
    }
    s.pendingCopy = new Sequence.PendingCopy(mine, s.numComputed - index * blockSize, index,
        new CacheHold(c, r.node()));
    pool.free(Arrays.copyOfRange(s.blockTable(), index + 1, s.tableSize())); // none, normally
    s.truncateBlocks(index); // the cache's now; the next step copies it into a fresh block
  }

  /**
   * Makes the prompt's blocks of {@code parent} shareable and gives {@code child} a claim on the
   * full ones and a copy of the partial last one (or, when the cache could not take it, the
   * child recomputes those fewer than B tokens itself). With the cache on, the parent's prompt
   * is already cached ({@link #cacheComputed} ran after its last prefill chunk).
   */
  void fork(Sequence parent, Sequence child) {
    int prompt = parent.promptLen;
    int full = prompt / blockSize;
    if (cache.isEmpty() && parent.hold == null) {
      int covered = blocksFor(prompt, blockSize); // the partial block too: the copy source
      SharedBlocks shared = new SharedBlocks(Arrays.copyOf(parent.blockTable(), covered));
      parent.hold = shared.newHold();
      parent.heldBlocks = covered;
    }
    child.hold = parent.hold.share();
    child.appendBlocks(Arrays.copyOf(parent.blockTable(), full));
    child.heldBlocks = full;
    child.numComputed = full * blockSize;
    if (prompt % blockSize == 0) {
      return;
    }
    if (cache.isEmpty()) { // the parent's own partial block, pinned by the shared blocks
      child.pendingCopy = new Sequence.PendingCopy(parent.block(full), prompt % blockSize, full,
          parent.hold.share());
      child.numComputed = prompt;
      return;
    }
    PrefixCache c = cache.get();
    MatchResult m = c.matchPrefix(parent.tokensArray(), prompt, parent.request.namespace());
    if (m.matchedTokens() == prompt) {
      child.pendingCopy = new Sequence.PendingCopy(m.copySource(), m.partialTokens(), full,
          new CacheHold(c, m.node()));
      child.numComputed = prompt;
    }
  }

  /** Caches what {@code s} computed (cache on), then lets go of every block. */
  void cacheAndRelease(Sequence s) {
    int computed = s.numComputed;
    // with a copy pending, nothing beyond the cache's own blocks was computed
    if (cache.isPresent() && s.hold != null && s.pendingCopy == null
        && computed > s.heldBlocks * blockSize) {
      int covered = blocksFor(computed, blockSize);
      InsertResult inserted = cache.get().insert(s.tokensArray(), computed,
          Arrays.copyOf(s.blockTable(), covered), s.request.namespace());
      pool.free(inserted.duplicateBlockIds());
      s.hold.release();
      pool.free(Arrays.copyOfRange(s.blockTable(), covered, s.tableSize()));
      s.clearBlocks();
      return;
    }
    release(s);
  }

  /** Lets go of every block of {@code s} without caching anything (its K/V may be invalid). */
  void release(Sequence s) {
    if (s.load != null) { // the load gives its blocks back when the loader is done with them
      loads.cancel(s.load);
      s.load = null;
    }
    if (s.loadedHold != null) {
      s.loadedHold.release();
      s.loadedHold = null;
    }
    copied(s); // or never will be: the source may go either way
    if (s.hold != null) {
      s.hold.release();
    }
    pool.free(s.ownedBlocks());
    s.clearBlocks();
  }

  // ---- the tiers below the pool ----

  /** True while {@code s} waits for blocks loading from a tier. */
  boolean loading(Sequence s) {
    return s.load != null;
  }

  /**
   * Starts loading the blocks of {@code s} that a tier holds beyond its cached prefix, when the
   * whole sequence would then fit (as its admission would check). {@code s} waits in line until
   * {@link #finishLoads} puts them into the cache; nothing else waits for it. Once per admission:
   * a sequence that loaded (or tried to) goes on to its admission with what it got.
   *
   * @return true when a load started
   */
  boolean startLoad(Sequence s) {
    if (tiers.isEmpty() || s.load != null || s.loadedHold != null) {
      return false;
    }
    int matchable = matchable(s);
    int wholeBlocks = matchable / blockSize;
    PrefixCache c = cache.get();
    String namespace = s.request.namespace();
    MatchResult m = c.matchPrefix(s.tokensArray(), matchable, namespace);
    int[] prefix = m.fullBlockIds();
    if (prefix.length >= wholeBlocks) {
      return false;
    }
    PrefixHold hold = new CacheHold(c, m.fullBlocksNode());
    if (blocksFor(s.length() + 1, blockSize) - prefix.length > available()) {
      hold.release(); // it would not be admitted now: it looks when it would
      return false;
    }
    BlockTiers.TierHits hits = tiers.get().find(namespace, s.tokensArray(), prefix.length,
        wholeBlocks);
    int n = hits.count();
    if (n == 0) {
      hold.release();
      return false;
    }
    if (pool.freeCount() < n) {
      int evicted = c.evict(n - pool.freeCount());
      if (evicted > 0) {
        observer.evicted(evicted);
      }
    }
    int[] ids = pool.allocate(n, prefix.length == 0 ? -1 : prefix[prefix.length - 1]);
    s.load = loads.start(s, hold, prefix, hits, ids);
    return true;
  }

  /**
   * Takes back the loads the loader finished: the loaded blocks go into the cache after the
   * prefix they continue (a block the cache got meanwhile from a computing sequence is freed as a
   * duplicate), and the sequence keeps a lock on them until it is admitted. A cancelled load's
   * blocks go back to the pool. Engine thread, before scheduling.
   */
  void finishLoads() {
    if (loads == null) {
      return;
    }
    for (TierLoads.Load l : loads.takeDone()) {
      Sequence s = l.seq;
      int n = l.cancelled() ? 0 : l.loaded();
      pool.free(Arrays.copyOfRange(l.ids, n, l.ids.length));
      if (l.cancelled()) {
        l.prefixHold.release();
        continue;
      }
      s.load = null;
      if (n == 0) {
        s.loadedHold = l.prefixHold; // tried: admitted with its cached prefix alone
        continue;
      }
      PrefixCache c = cache.get();
      int[] ids = Arrays.copyOf(l.prefix, l.prefix.length + n);
      System.arraycopy(l.ids, 0, ids, l.prefix.length, n);
      int tokens = ids.length * blockSize;
      String namespace = s.request.namespace();
      InsertResult inserted = c.insert(s.tokensArray(), tokens, ids, namespace);
      pool.free(inserted.duplicateBlockIds());
      MatchResult m = c.matchPrefix(s.tokensArray(), tokens, namespace);
      if (m.matchedTokens() != tokens) {
        throw new IllegalStateException("inserted " + tokens + " loaded tokens of " + s
            + " but the cache matches only " + m.matchedTokens());
      }
      s.loadedHold = new CacheHold(c, m.fullBlocksNode());
      tiers.get().reused(m.fullBlockIds()); // even if the request goes before its admission
      l.prefixHold.release();
    }
  }

  /**
   * Lets go of the locks that keep loaded blocks for waiting sequences until their admission
   * (the blocks stay cached, now evictable): when a sequence ahead of them cannot be admitted
   * otherwise.
   *
   * @return true when there was any
   */
  boolean unpinLoaded(Iterable<Sequence> waiting) {
    boolean any = false;
    for (Sequence s : waiting) {
      if (s.loadedHold != null) {
        s.loadedHold.release();
        s.loadedHold = null;
        any = true;
      }
    }
    return any;
  }

  /** True while a load is running or done but not taken back. */
  boolean loadsInFlight() {
    return loads != null && loads.busy();
  }

  /** Pool blocks owned by loads (in use: in no table and not cached). */
  List<Integer> loadingBlocks() {
    return loads == null ? List.of() : loads.blocks();
  }

  /**
   * Empties the cache (all but what running sequences lock) and every tier below it, without
   * offloading what the reset evicts.
   *
   * @return blocks freed in the pool
   */
  int resetCache() {
    if (cache.isEmpty()) {
      return 0;
    }
    tiers.ifPresent(t -> t.offloading(false));
    try {
      return cache.get().evictAll();
    } finally {
      tiers.ifPresent(t -> {
        t.clear();
        t.offloading(true);
      });
    }
  }
}
