package dev.radixserve.cache;

import java.util.Comparator;
import java.util.TreeSet;

/**
 * The live set of unlocked leaves, ordered by the eviction policy's keys, then node id. Kept up to
 * date on every transition (a node becoming or ceasing to be an unlocked leaf, or being touched),
 * so eviction never walks the tree: O(log n) per node.
 */
final class EvictableLeaves {

  private static final Comparator<RadixNode> ORDER = Comparator
      .comparingLong((RadixNode n) -> n.evictPrimary)
      .thenComparingLong(n -> n.evictSecondary)
      .thenComparingLong(n -> n.id);

  private final EvictionPolicy policy;
  private final TreeSet<RadixNode> leaves = new TreeSet<>(ORDER);

  EvictableLeaves(EvictionPolicy policy) {
    this.policy = policy;
  }

  void add(RadixNode node) {
    if (node.inEvictableSet) {
      return;
    }
    node.evictPrimary = policy.primaryKey(node);
    node.evictSecondary = policy.secondaryKey(node);
    leaves.add(node);
    node.inEvictableSet = true;
  }

  void remove(RadixNode node) {
    if (node.inEvictableSet) {
      leaves.remove(node);
      node.inEvictableSet = false;
    }
  }

  /** Call after changing a node's statistics: re-reads its keys if it is in the set. */
  void rekey(RadixNode node) {
    if (node.inEvictableSet) {
      remove(node);
      add(node);
    }
  }

  /** Removes and returns the next leaf to evict; null when empty. */
  RadixNode pollFirst() {
    RadixNode node = leaves.pollFirst();
    if (node != null) {
      node.inEvictableSet = false;
    }
    return node;
  }

  boolean contains(RadixNode node) {
    return leaves.contains(node);
  }

  int size() {
    return leaves.size();
  }

  Iterable<RadixNode> inOrder() {
    return leaves;
  }
}
