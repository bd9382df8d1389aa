package dev.radixserve.server.cacheview;

import dev.radixserve.cache.CacheStats;
import dev.radixserve.cache.TreeSnapshot;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One snapshot of the cache as the view serves it: every node (namespace roots included) by id in
 * depth-first order, with its parent, depth, decoded edge text and its subtree's totals. Built
 * and read on the view's thread; immutable once built.
 */
final class CacheTree {

  /** Sizes of a subtree (the node itself included; a root counts as no node). */
  record Totals(int nodes, int blocks, long tokens, int locked, int evictable) {

    static final Totals NONE = new Totals(0, 0, 0, 0, 0);

    Totals plus(Totals o) {
      return new Totals(nodes + o.nodes, blocks + o.blocks, tokens + o.tokens,
          locked + o.locked, evictable + o.evictable);
    }
  }

  /**
   * @param parent the parent's id; null for a namespace root
   * @param namespace the namespace the node lives in
   * @param depth 0 for a root
   * @param text the edge's tokens decoded ("" for a root)
   * @param children child ids, by id
   * @param subtree this node and everything below it
   */
  record Node(long id, Long parent, String namespace, int depth, int tokens, int blocks,
      int lockRef, long hits, long lastAccess, boolean evictable, String text, List<Long> children,
      Totals subtree) {

    boolean isRoot() {
      return parent == null;
    }
  }

  private final CacheSample sample;
  private final Map<Long, Node> nodes;
  private final List<Long> roots;

  private CacheTree(CacheSample sample, Map<Long, Node> nodes, List<Long> roots) {
    this.sample = sample;
    this.nodes = nodes;
    this.roots = roots;
  }

  /** An empty tree (prefix caching off, or nothing sampled yet). */
  static CacheTree empty(int blockSize) {
    return new CacheTree(new CacheSample(0, 0, System.currentTimeMillis(), blockSize,
        new TreeSnapshot(0, List.of()), new CacheStats(0, 0, 0, 0, 0, 0, 0, 0), 0),
        Map.of(), List.of());
  }

  static CacheTree build(CacheSample sample, EdgeTexts texts) {
    Map<Long, Node> nodes = new LinkedHashMap<>();
    List<Long> roots = new ArrayList<>();
    for (TreeSnapshot.Root r : sample.tree().roots()) {
      roots.add(r.id());
      // reserve the root's place first so the map stays in depth-first order
      nodes.put(r.id(), null);
      Totals sum = Totals.NONE;
      List<Long> children = new ArrayList<>();
      for (TreeSnapshot.Node c : r.children()) {
        sum = sum.plus(add(c, r.id(), r.namespace(), 1, nodes, texts));
        children.add(c.id());
      }
      nodes.put(r.id(), new Node(r.id(), null, r.namespace(), 0, 0, 0, 0, 0, 0, false, "",
          List.copyOf(children), sum));
    }
    return new CacheTree(sample, nodes, List.copyOf(roots));
  }

  private static Totals add(TreeSnapshot.Node n, long parent, String namespace, int depth,
      Map<Long, Node> nodes, EdgeTexts texts) {
    nodes.put(n.id(), null);
    Totals sum = new Totals(1, n.blocks(), n.tokens(), n.lockRef() > 0 ? 1 : 0,
        n.evictable() ? 1 : 0);
    List<Long> children = new ArrayList<>(n.children().size());
    for (TreeSnapshot.Node c : n.children()) {
      sum = sum.plus(add(c, n.id(), namespace, depth + 1, nodes, texts));
      children.add(c.id());
    }
    nodes.put(n.id(), new Node(n.id(), parent, namespace, depth, n.tokens(), n.blocks(),
        n.lockRef(), n.hits(), n.lastAccess(), n.evictable(), texts.text(n.id(), n.tokenIds()),
        List.copyOf(children), sum));
    return sum;
  }

  CacheSample sample() {
    return sample;
  }

  Node node(long id) {
    return nodes.get(id);
  }

  /** The parent of {@code n}; null for a root. */
  Node parent(Node n) {
    return n.parent() == null ? null : nodes.get(n.parent());
  }

  /** Every node, parents before children. */
  Collection<Node> nodes() {
    return nodes.values();
  }

  List<Long> roots() {
    return roots;
  }

  /** The totals over every namespace. */
  Totals totals() {
    Totals t = Totals.NONE;
    for (long r : roots) {
      t = t.plus(nodes.get(r).subtree());
    }
    return t;
  }

  /** Ids from the namespace root down to {@code id}; empty when it is not in the tree. */
  List<Long> path(long id) {
    List<Long> path = new ArrayList<>();
    for (Node n = nodes.get(id); n != null; n = parent(n)) {
      path.add(n.id());
    }
    return path.reversed();
  }
}
