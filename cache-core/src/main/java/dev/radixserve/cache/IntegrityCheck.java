package dev.radixserve.cache;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collection;
import java.util.List;

/**
 * One full recount of a {@link RadixCache} against its incremental state (see {@link
 * RadixCache#checkIntegrity(int)} for the list). Walks the whole tree, so it belongs in tests and
 * idle-time checks, not on the hot path.
 */
final class IntegrityCheck {

  private final RadixCache cache;
  private final BlockPool pool;
  private final int pageSize;

  private final BitSet seen;
  private int nodes;
  private int unlockedLeaves;
  private long evictableBlocks;
  private long protectedBlocks;
  private long evictableTokens;
  private long protectedTokens;

  IntegrityCheck(RadixCache cache, BlockPool pool, int pageSize) {
    this.cache = cache;
    this.pool = pool;
    this.pageSize = pageSize;
    this.seen = new BitSet(pool.total());
  }

  void run(Collection<RadixNode> roots, int inUseBlocks) {
    pool.checkIntegrity();
    ArrayDeque<RadixNode> stack = new ArrayDeque<>();
    for (RadixNode root : roots) {
      if (!root.isRoot() || root.blocks.length != 0 || root.lockRef != 0) {
        throw new IllegalStateException("root of namespace '" + root.namespace + "' has a parent,"
            + " blocks (" + root.blocks.length + ") or lock refs (" + root.lockRef + ")");
      }
      stack.push(root);
    }
    while (!stack.isEmpty()) {
      RadixNode node = stack.pop();
      if (node.isLeaf()) {
        continue;
      }
      List<RadixNode> children = node.children();
      for (RadixNode child : children) {
        checkNode(node, child);
        stack.push(child);
      }
      checkSiblings(node, children);
    }
    compare("nodes", nodes, cache.nodeCount());
    compare("evictable blocks", evictableBlocks, cache.evictableBlocks());
    compare("protected blocks", protectedBlocks, cache.protectedBlocks());
    compare("evictable tokens", evictableTokens, cache.evictableTokens());
    compare("protected tokens", protectedTokens, cache.protectedTokens());
    EvictableLeaves set = cache.evictableSet();
    compare("evictable-set size vs unlocked leaves", set.size(), unlockedLeaves);
    for (RadixNode n : set.inOrder()) {
      if (n.evicted || !n.isLeaf() || n.lockRef != 0 || !n.inEvictableSet) {
        throw new IllegalStateException("evictable set holds " + n + " (evicted " + n.evicted
            + ", leaf " + n.isLeaf() + ")");
      }
    }
    if (!seen.equals(cache.ownedBlocks())) {
      throw new IllegalStateException("tree holds " + seen.cardinality() + " block ids but "
          + cache.ownedBlocks().cardinality() + " are marked owned by it");
    }
    int cached = seen.cardinality();
    int free = pool.freeCount();
    if ((long) cached + free + inUseBlocks != pool.total()) {
      throw new IllegalStateException("cached " + cached + " + free " + free + " + in use "
          + inUseBlocks + " = " + ((long) cached + free + inUseBlocks) + " != total "
          + pool.total());
    }
  }

  /** Siblings are found by first token and differ in their first page (or partial edge). */
  private void checkSiblings(RadixNode parent, List<RadixNode> children) {
    for (RadixNode a : children) {
      boolean found = false;
      for (RadixNode b : parent.startingWith(a.tokens[0])) {
        found |= b == a;
        if (b != a && Arrays.equals(a.tokens, 0, Math.min(pageSize, a.tokens.length),
            b.tokens, 0, Math.min(pageSize, b.tokens.length))) {
          throw new IllegalStateException(a + " and " + b + " under " + parent
              + " share their first page");
        }
      }
      if (!found) {
        throw new IllegalStateException(a + " is not found by its first token under " + parent);
      }
    }
  }

  private void checkNode(RadixNode parent, RadixNode child) {
    nodes++;
    String where = child + " under " + (parent.isRoot() ? "root '" + parent.namespace + "'"
        : parent.toString());
    if (child.parent != parent || child.evicted) {
      throw new IllegalStateException(where + ": parent link broken or node marked evicted");
    }
    int n = child.tokens.length;
    if (n < 1 || child.blocks.length != (n + pageSize - 1) / pageSize) {
      throw new IllegalStateException(where + ": " + n + " tokens for " + child.blocks.length
          + " blocks of " + pageSize);
    }
    if (parent.depthTokens % pageSize != 0) {
      throw new IllegalStateException(where + ": starts at token " + parent.depthTokens
          + ", inside a block of " + pageSize + " (only a leaf may end inside a block)");
    }
    if (n % pageSize != 0 && !child.isLeaf()) {
      throw new IllegalStateException(where + ": ends inside a block but has children");
    }
    if (child.depthTokens != parent.depthTokens + n) {
      throw new IllegalStateException(where + ": depth " + child.depthTokens + " != "
          + parent.depthTokens + " + " + n);
    }
    if (child.lockRef < 0 || (!parent.isRoot() && parent.lockRef < child.lockRef)) {
      throw new IllegalStateException(where + ": lock ref " + child.lockRef + ", parent's "
          + parent.lockRef);
    }
    if (child.lockRef == 0) {
      evictableBlocks += child.blocks.length;
      evictableTokens += child.tokens.length;
      if (child.isLeaf()) {
        unlockedLeaves++;
        if (!child.inEvictableSet || !cache.evictableSet().contains(child)) {
          throw new IllegalStateException(where + ": unlocked leaf missing from evictable set");
        }
      }
    } else {
      protectedBlocks += child.blocks.length;
      protectedTokens += child.tokens.length;
    }
    if (child.inEvictableSet && (child.lockRef != 0 || !child.isLeaf())) {
      throw new IllegalStateException(where + ": in the evictable set but locked or inner");
    }
    for (int id : child.blocks) {
      if (id < 0 || id >= pool.total()) {
        throw new IllegalStateException(where + ": block id " + id + " out of range [0, "
            + pool.total() + ")");
      }
      if (seen.get(id)) {
        throw new IllegalStateException(where + ": block " + id + " held twice in the tree");
      }
      if (pool.isFree(id)) {
        throw new IllegalStateException(where + ": block " + id + " is in the tree and free");
      }
      seen.set(id);
    }
  }

  private static void compare(String what, long counted, long kept) {
    if (counted != kept) {
      throw new IllegalStateException(what + ": recount " + counted + ", kept " + kept);
    }
  }
}
