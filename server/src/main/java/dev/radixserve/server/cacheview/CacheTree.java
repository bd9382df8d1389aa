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

  /**
   * Sizes of a subtree (the node itself included; a root counts as no node). Nodes, blocks and
   * tokens count what the pool holds; the offloaded ones (held only by a tier below the pool)
   * are counted apart.
   */
  record Totals(int nodes, int blocks, long tokens, int locked, int evictable,
      int offloadedNodes, int offloadedBlocks, long offloadedTokens) {

    static final Totals NONE = new Totals(0, 0, 0, 0, 0, 0, 0, 0);

    Totals plus(Totals o) {
      return new Totals(nodes + o.nodes, blocks + o.blocks, tokens + o.tokens,
          locked + o.locked, evictable + o.evictable, offloadedNodes + o.offloadedNodes,
          offloadedBlocks + o.offloadedBlocks, offloadedTokens + o.offloadedTokens);
    }
  }

  /**
   * @param parent the parent's id; null for a namespace root
   * @param namespace the namespace the node lives in
   * @param depth 0 for a root
   * @param text the edge's tokens decoded ("" for a root)
   * @param children child ids, by id
   * @param subtree this node and everything below it
   * @param media for an offloaded node, the tiers holding its blocks, fastest first, as the KV
   *     events name them ("CPU", "DISK"); empty for a node in the pool
   * @param offloadedBlocks an offloaded node's blocks (its {@code blocks}, pool blocks, is 0)
   * @param branchAt tokens into the parent's edge where an offloaded node leaves it, when not
   *     at its end (the pool's node was not split there); -1 otherwise
   */
  record Node(long id, Long parent, String namespace, int depth, int tokens, int blocks,
      int lockRef, long hits, long lastAccess, boolean evictable, String text, List<Long> children,
      Totals subtree, List<String> media, int offloadedBlocks, int branchAt) {

    boolean isRoot() {
      return parent == null;
    }

    boolean offloaded() {
      return !media.isEmpty();
    }
  }

  private final CacheSample sample;
  private final Map<Long, Node> nodes;
  private final List<Long> roots;
  private final int unplacedOffloaded;

  private CacheTree(CacheSample sample, Map<Long, Node> nodes, List<Long> roots,
      int unplacedOffloaded) {
    this.sample = sample;
    this.nodes = nodes;
    this.roots = roots;
    this.unplacedOffloaded = unplacedOffloaded;
  }

  /** An empty tree (prefix caching off, or nothing sampled yet). */
  static CacheTree empty(int blockSize) {
    return new CacheTree(new CacheSample(0, 0, System.currentTimeMillis(), blockSize,
        new TreeSnapshot(0, List.of()), new CacheStats(0, 0, 0, 0, 0, 0, 0, 0), 0),
        Map.of(), List.of(), 0);
  }

  static CacheTree build(CacheSample sample, EdgeTexts texts) {
    OffloadedNodes off = OffloadedNodes.place(sample);
    Map<Long, Node> nodes = new LinkedHashMap<>();
    List<Long> roots = new ArrayList<>();
    for (TreeSnapshot.Root r : sample.tree().roots()) {
      root(r.id(), r.namespace(), r.children(), off, nodes, roots, texts);
    }
    off.syntheticRoots().forEach((ns, id) -> root(id, ns, List.of(), off, nodes, roots, texts));
    return new CacheTree(sample, nodes, List.copyOf(roots), off.unplaced());
  }

  private static void root(long id, String namespace, List<TreeSnapshot.Node> resident,
      OffloadedNodes off, Map<Long, Node> nodes, List<Long> roots, EdgeTexts texts) {
    roots.add(id);
    // reserve the root's place first so the map stays in depth-first order
    nodes.put(id, null);
    Totals sum = Totals.NONE;
    List<Long> children = new ArrayList<>();
    for (TreeSnapshot.Node c : resident) {
      sum = sum.plus(add(c, id, namespace, 1, off, nodes, texts));
      children.add(c.id());
    }
    for (OffloadedNodes.Chain c : off.atRoot(namespace)) {
      sum = sum.plus(add(c, id, namespace, 1, nodes, texts));
      children.add(c.id());
    }
    nodes.put(id, new Node(id, null, namespace, 0, 0, 0, 0, 0, 0, false, "",
        List.copyOf(children), sum, List.of(), 0, -1));
  }

  private static Totals add(TreeSnapshot.Node n, long parent, String namespace, int depth,
      OffloadedNodes off, Map<Long, Node> nodes, EdgeTexts texts) {
    nodes.put(n.id(), null);
    Totals sum = new Totals(1, n.blocks(), n.tokens(), n.lockRef() > 0 ? 1 : 0,
        n.evictable() ? 1 : 0, 0, 0, 0);
    List<Long> children = new ArrayList<>(n.children().size());
    for (TreeSnapshot.Node c : n.children()) {
      sum = sum.plus(add(c, n.id(), namespace, depth + 1, off, nodes, texts));
      children.add(c.id());
    }
    for (OffloadedNodes.Chain c : off.under(n.id())) {
      sum = sum.plus(add(c, n.id(), namespace, depth + 1, nodes, texts));
      children.add(c.id());
    }
    nodes.put(n.id(), new Node(n.id(), parent, namespace, depth, n.tokens(), n.blocks(),
        n.lockRef(), n.hits(), n.lastAccess(), n.evictable(), texts.text(n.id(), n.tokenIds()),
        List.copyOf(children), sum, List.of(), 0, -1));
    return sum;
  }

  /** An offloaded node: no pool block, no lock, never evictable from the pool. */
  private static Totals add(OffloadedNodes.Chain c, long parent, String namespace, int depth,
      Map<Long, Node> nodes, EdgeTexts texts) {
    nodes.put(c.id(), null);
    Totals sum = new Totals(0, 0, 0, 0, 0, 1, c.blocks(), c.tokens().length);
    List<Long> children = new ArrayList<>(c.children().size());
    for (OffloadedNodes.Chain k : c.children()) {
      sum = sum.plus(add(k, c.id(), namespace, depth + 1, nodes, texts));
      children.add(k.id());
    }
    nodes.put(c.id(), new Node(c.id(), parent, namespace, depth, c.tokens().length, 0, 0, 0, 0,
        false, texts.text(c.id(), c.tokens()), List.copyOf(children), sum, c.media(), c.blocks(),
        c.branchAt()));
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

  /** Whether the server has tiers below the pool (the JSON then counts offloaded nodes). */
  boolean tiered() {
    return sample.tiers() != null;
  }

  /** Blocks held only by a tier that no chain reaches (see {@link OffloadedNodes}). */
  int unplacedOffloaded() {
    return unplacedOffloaded;
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
