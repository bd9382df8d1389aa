package dev.radixserve.server.spec;

import dev.radixserve.cache.CacheListener;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Drafts from what the prefix cache holds: an index from each {@value NGram#N}-token run in the
 * radix tree to the tokens that follow it there, per namespace. It is kept up to date by the
 * cache's {@link CacheListener} events (a stored leaf indexes its own tokens, once), never by a
 * scan of the tree, and it holds at most {@code maxEntries} entries, the least recently stored
 * or used going first, so its memory is bounded whatever the cache holds.
 *
 * <p>Tenants stay isolated: the namespace is part of every key, so a request's drafts come only
 * from token runs cached in its own namespace. An entry whose leaf was evicted is dropped when a
 * lookup meets it (its tokens may no longer be what that namespace holds).
 *
 * <p>Engine thread only: the cache calls its listeners on the engine thread, and proposals are
 * made there.
 */
public final class RadixDraftIndex implements CacheListener {

  private record Continuation(long nodeId, int[] tokens) {}

  private final int blockSize;
  private final int maxTokens;
  private final Map<NGram, Continuation> entries;
  private final Set<Long> liveNodes = new HashSet<>();

  /**
   * @param blockSize the cache's tokens per block (to find where a stored leaf's tokens begin)
   * @param maxTokens most tokens an entry keeps after its n-gram (the most a draft proposes)
   * @param maxEntries most n-grams indexed; about {@code 64 + 4 * maxTokens} bytes each
   */
  public RadixDraftIndex(int blockSize, int maxTokens, int maxEntries) {
    this.blockSize = blockSize;
    this.maxTokens = maxTokens;
    this.entries = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<NGram, Continuation> eldest) {
        return size() > maxEntries;
      }
    };
  }

  @Override
  public void stored(String namespace, long nodeId, long parentId, int[] pathTokens,
      int[] blocks) {
    liveNodes.add(nodeId);
    int pathBlocks = (pathTokens.length + blockSize - 1) / blockSize;
    int leafStart = (pathBlocks - blocks.length) * blockSize;
    // every position of the new leaf with an n-gram before it and a token after it; an n-gram
    // may start in the parent's tokens, which the path holds too
    for (int e = Math.max(NGram.N, leafStart); e < pathTokens.length; e++) {
      entries.put(NGram.before(namespace, pathTokens, e), new Continuation(nodeId,
          Arrays.copyOfRange(pathTokens, e, Math.min(pathTokens.length, e + maxTokens))));
    }
  }

  @Override
  public void evicted(String namespace, long nodeId, int[] pathTokens, int[] blocks) {
    liveNodes.remove(nodeId);
  }

  /** Entries indexed now (at most {@code maxEntries}). */
  public int size() {
    return entries.size();
  }

  /** Proposals from the token runs cached in {@code namespace} only. */
  public DraftSource in(String namespace) {
    return (tokens, length, max) -> propose(namespace, tokens, length, max);
  }

  /** {@link DraftSource#propose} from the token runs cached in {@code namespace} only. */
  public int[] propose(String namespace, int[] tokens, int length, int max) {
    if (length < NGram.N) {
      return DraftSource.NONE;
    }
    NGram key = NGram.before(namespace, tokens, length);
    Continuation c = entries.get(key);
    if (c == null) {
      return DraftSource.NONE;
    }
    if (!liveNodes.contains(c.nodeId())) {
      entries.remove(key);
      return DraftSource.NONE;
    }
    return Arrays.copyOf(c.tokens(), Math.min(max, c.tokens().length));
  }
}
