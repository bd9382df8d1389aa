package dev.radixserve.cache;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One tree node: the edge into it ({@code tokens}) and the blocks that hold those tokens' KV.
 * Roots (one per namespace) have no edge and no parent.
 *
 * <pre>
 *   parent ──key = first min(B, n) tokens──▶ node: tokens [t0 ... t(n-1)], blocks [b0 ... b(k-1)]
 *     the edge starts on a block boundary: depthTokens - n is a multiple of B
 *     k = ceil(n / B): block i holds tokens [iB, min((i + 1)B, n)) of the edge
 *     n % B != 0 only for a leaf (its last block is partial)
 * </pre>
 *
 * All fields are owned by {@link RadixCache}; the eviction keys are cached here so the
 * evictable set's order cannot change while the node is in it.
 */
final class RadixNode implements NodeHandle, EvictionPolicy.Candidate {

  private static final int[] NONE = new int[0];

  final long id;
  final String namespace;
  RadixNode parent;
  PageKey key;
  int[] tokens;
  int[] blocks;
  /** Tokens from the root to the end of this node. */
  int depthTokens;
  /** Created lazily: most nodes are leaves. */
  Map<PageKey, RadixNode> children;

  int lockRef;
  long lastAccess;
  long hits;
  int priority;

  boolean inEvictableSet;
  long evictPrimary;
  long evictSecondary;
  /** Set once the node has left the tree; a handle to it can no longer be locked. */
  boolean evicted;

  private RadixNode(long id, String namespace) {
    this.id = id;
    this.namespace = namespace;
  }

  static RadixNode root(long id, String namespace) {
    RadixNode root = new RadixNode(id, namespace);
    root.tokens = NONE;
    root.blocks = NONE;
    return root;
  }

  static RadixNode child(long id, RadixNode parent, int[] tokens, int[] blocks, int pageSize) {
    RadixNode node = new RadixNode(id, parent.namespace);
    node.parent = parent;
    node.tokens = tokens;
    node.blocks = blocks;
    node.key = keyOf(tokens, pageSize);
    node.depthTokens = parent.depthTokens + tokens.length;
    return node;
  }

  /** A child's key: its first page, or its whole edge when that is shorter (a partial leaf). */
  static PageKey keyOf(int[] tokens, int pageSize) {
    return new PageKey(tokens, 0, Math.min(pageSize, tokens.length));
  }

  boolean isRoot() {
    return parent == null;
  }

  boolean isLeaf() {
    return children == null || children.isEmpty();
  }

  RadixNode child(PageKey page) {
    return children == null ? null : children.get(page);
  }

  Collection<RadixNode> children() {
    return children == null ? List.of() : children.values();
  }

  void putChild(RadixNode child) {
    if (children == null) {
      children = new HashMap<>(4);
    }
    children.put(child.key, child);
  }

  void removeChild(RadixNode child) {
    children.remove(child.key);
  }

  @Override
  public long lastAccess() {
    return lastAccess;
  }

  @Override
  public long hits() {
    return hits;
  }

  @Override
  public int priority() {
    return priority;
  }

  @Override
  public String toString() {
    return "node#" + id + "[" + tokens.length + " tokens, " + blocks.length + " blocks, lockRef "
        + lockRef + "]";
  }
}
