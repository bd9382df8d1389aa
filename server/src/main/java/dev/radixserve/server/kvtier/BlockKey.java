package dev.radixserve.server.kvtier;

import java.util.Arrays;

/**
 * What a tier entry is stored under: the block's chained hash (the KV events' hash: model and
 * namespace inside), and, to rule out a 64-bit collision serving another prefix's KV, its
 * parent's hash and its own tokens, compared on every read.
 *
 * @param tokens the block's B token ids
 * @param salt block 0's cache salt, for the KV events (in the hash already; not compared, and
 *     null for an entry indexed from disk at start)
 */
public record BlockKey(long hash, long parent, int[] tokens, String salt) {

  public BlockKey(long hash, long parent, int[] tokens) {
    this(hash, parent, tokens, null);
  }

  /** Same block: hash, parent and tokens all equal. */
  boolean sameBlock(BlockKey other) {
    return hash == other.hash && parent == other.parent && Arrays.equals(tokens, other.tokens);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof BlockKey k && sameBlock(k);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(hash);
  }

  @Override
  public String toString() {
    return String.format("block %016x (parent %016x)", hash, parent);
  }
}
