package dev.radixserve.cache;

/**
 * Orders unlocked leaves for eviction: the leaf with the smallest (primary, secondary) key goes
 * first; remaining ties go to the older node (creation order), so eviction is deterministic.
 *
 * <p>Keys are read when a leaf enters the evictable set and again whenever the cache touches it,
 * so a policy must be a pure function of the candidate's fields.
 */
public interface EvictionPolicy {

  /** What a policy may look at: the node's access statistics. */
  interface Candidate {
    /** Logical access clock at the last match or insert that passed through the node. */
    long lastAccess();

    /** Matches that passed through the node. */
    long hits();

    /** Highest priority of the inserts that passed through the node (default 0). */
    int priority();
  }

  long primaryKey(Candidate node);

  /** Tie breaker; least recently used first unless a policy says otherwise. */
  default long secondaryKey(Candidate node) {
    return node.lastAccess();
  }

  /** Least recently used first (the default). */
  static EvictionPolicy lru() {
    return Candidate::lastAccess;
  }

  /** Fewest hits first, ties least recently used first. */
  static EvictionPolicy lfu() {
    return Candidate::hits;
  }

  /** Lowest insert priority first, ties least recently used first. */
  static EvictionPolicy priority() {
    return Candidate::priority;
  }
}
