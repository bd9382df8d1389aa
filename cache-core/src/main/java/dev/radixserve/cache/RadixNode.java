package dev.radixserve.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One tree node: the edge into it ({@code tokens}) and the blocks that hold those tokens' KV.
 * Roots (one per namespace) have no edge and no parent.
 *
 * <pre>
 *   parent ──first token t0──▶ node: tokens [t0 ... t(n-1)], blocks [b0 ... b(k-1)]
 *     the edge starts on a block boundary: depthTokens - n is a multiple of B
 *     k = ceil(n / B): block i holds tokens [iB, min((i + 1)B, n)) of the edge
 *     n % B != 0 only for a leaf (its last block is partial)
 *     siblings differ in their first page (a partial leaf's whole edge stands for its page)
 * </pre>
 *
 * All fields are owned by {@link RadixCache}; the eviction keys are cached here so the
 * evictable set's order cannot change while the node is in it.
 */
final class RadixNode implements NodeHandle, EvictionPolicy.Candidate {

  private static final int[] NONE = new int[0];
  private static final RadixNode[] NO_NODES = new RadixNode[0];

  final long id;
  final String namespace;
  RadixNode parent;
  int[] tokens;
  int[] blocks;
  /** Tokens from the root to the end of this node. */
  int depthTokens;
  /**
   * Children by first token, created lazily (most nodes are leaves). Only the children that start
   * with a query's next token can match it, so a lookup or a search for the best partial first
   * block costs those few, not every sibling; siblings sharing a first token share an entry.
   */
  private Map<Integer, RadixNode[]> children;
  private int childCount;

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
    node.depthTokens = parent.depthTokens + tokens.length;
    return node;
  }

  boolean isRoot() {
    return parent == null;
  }

  boolean isLeaf() {
    return childCount == 0;
  }

  /** The child whose first page is {@code tokens[pos, pos + pageSize)}; null when none. */
  RadixNode childWithPage(int[] tokens, int pos, int pageSize) {
    for (RadixNode c : startingWith(tokens[pos])) {
      if (c.tokens.length >= pageSize
          && Arrays.equals(c.tokens, 0, pageSize, tokens, pos, pos + pageSize)) {
        return c;
      }
    }
    return null;
  }

  /** The children whose edge starts with {@code token}. */
  RadixNode[] startingWith(int token) {
    RadixNode[] same = children == null ? null : children.get(token);
    return same == null ? NO_NODES : same;
  }

  /** Every child, in no particular order (snapshots and checks; not on the hot path). */
  List<RadixNode> children() {
    List<RadixNode> all = new ArrayList<>(childCount);
    if (children != null) {
      children.values().forEach(same -> all.addAll(Arrays.asList(same)));
    }
    return all;
  }

  /** Adds a child; its first token must stay the same until {@link #removeChild}. */
  void putChild(RadixNode child) {
    if (children == null) {
      children = new HashMap<>(4);
    }
    RadixNode[] same = children.get(child.tokens[0]);
    if (same == null) {
      children.put(child.tokens[0], new RadixNode[] {child});
    } else {
      RadixNode[] more = Arrays.copyOf(same, same.length + 1);
      more[same.length] = child;
      children.put(child.tokens[0], more);
    }
    childCount++;
  }

  void removeChild(RadixNode child) {
    RadixNode[] same = children.get(child.tokens[0]);
    if (same.length == 1) {
      children.remove(child.tokens[0]);
    } else {
      RadixNode[] fewer = new RadixNode[same.length - 1];
      int i = 0;
      for (RadixNode c : same) {
        if (c != child) {
          fewer[i++] = c;
        }
      }
      children.put(child.tokens[0], fewer);
    }
    childCount--;
  }

  @Override
  public long id() {
    return id;
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
