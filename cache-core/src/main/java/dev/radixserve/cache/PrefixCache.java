package dev.radixserve.cache;

/**
 * The prefix cache seam: token sequences (per namespace) mapped to the KV blocks that hold them.
 * Blocks come from, and go back to, one {@link BlockPool}.
 *
 * <p><b>Single-threaded by contract</b>: the engine thread alone calls it; nothing is
 * synchronized.
 *
 * <p>Ownership of block ids: each id is at any time in exactly one place: the pool's free list,
 * the cache (a node's block), or a caller (allocated and not yet inserted). So {@code free +
 * cached + inUse == total}.
 *
 * <p>Matches are token-granular: a match may end inside a block, whose cached slots the caller
 * then copies into a block of its own (copy-on-write; see {@link MatchResult}). A block the cache
 * holds is never written again. The caller decides how much of a prompt to match (a match must
 * never cover a prompt's last token, whose logits are needed: pass {@code length = promptLength -
 * 1}).
 */
public interface PrefixCache {

  /** Tokens per block (B). */
  int blockSize();

  /**
   * Finds the longest cached prefix of {@code tokens[0, length)} in {@code namespace}, to the
   * token. Splits edges at block boundaries where the match ends inside them. Touches the access
   * time (and hit count) of every node on the path, the copy source's included. Mutates the tree
   * only by such splits.
   *
   * <p>The returned block ids stay valid only while the returned node is locked (or until the
   * next call that may evict): lock it before anything else allocates. A caller that copies the
   * partial last block may lock {@link MatchResult#fullBlocksNode()} for as long as it uses the
   * whole blocks and {@link MatchResult#node()} only until its copy is done.
   *
   * @param namespace partition key (cache salt, adapter id); {@code ""} is the default
   */
  MatchResult matchPrefix(int[] tokens, int length, String namespace);

  /**
   * Inserts {@code tokens[0, length)} with its {@code ceil(length / B)} blocks, in one pass; when
   * {@code length % B != 0} the last block is partial (only its first {@code length % B} slots
   * are the sequence's), and the caller must not write it again once the cache holds it.
   *
   * <p>Where a leading part was already cached, the tree keeps its own blocks and the caller's
   * blocks for that part are returned in {@link InsertResult#duplicateBlockIds()} for the caller
   * to free (ids equal to the tree's own, e.g. from an earlier match, are not duplicates). Every
   * other caller block now belongs to the cache.
   *
   * @throws IllegalArgumentException if {@code length > tokens.length} or {@code blockIds.length
   *     != ceil(length / B)}
   * @throws IllegalStateException if a block is free, or the tree already holds it elsewhere
   */
  InsertResult insert(int[] tokens, int length, int[] blockIds, String namespace);

  /** Inserts {@code tokens[0, blockIds.length * B)}: whole blocks only (see above). */
  default InsertResult insert(int[] tokens, int[] blockIds, String namespace) {
    return insert(tokens, blockIds.length * blockSize(), blockIds, namespace);
  }

  /** Adds one lock ref to every node on the root-to-node path; locked nodes are never evicted. */
  void lock(NodeHandle node);

  /**
   * Removes one lock ref from every node on the root-to-node path.
   *
   * @throws IllegalStateException if the node is not locked
   */
  void unlock(NodeHandle node);

  /**
   * Evicts unlocked leaves in policy order (cascading to parents that become unlocked leaves)
   * until at least {@code nBlocks} blocks are freed or nothing evictable remains. May free more
   * than asked (a whole node at a time).
   *
   * @return blocks freed to the pool
   */
  int evict(int nBlocks);

  /**
   * Evicts every unlocked node ({@code /reset_prefix_cache}); returns blocks freed. Listeners
   * hear {@link CacheListener#cleared} when nothing is left.
   */
  int evictAll();

  /** Blocks held by the tree that no lock protects (can be evicted now). */
  int evictableBlocks();

  /** Blocks held by the tree under at least one lock. */
  int protectedBlocks();

  /** Blocks held by the tree: evictable + protected. */
  default int cachedBlocks() {
    return evictableBlocks() + protectedBlocks();
  }

  CacheStats stats();

  /** A read-only snapshot walk of the tree for metrics and visualisation. */
  TreeSnapshot snapshot();

  /**
   * Checks every structural and accounting invariant (see the implementation); throws
   * {@link IllegalStateException} naming the first broken one.
   *
   * @param inUseBlocks blocks callers hold right now (allocated, not in the tree, not free)
   */
  void checkIntegrity(int inUseBlocks);
}
