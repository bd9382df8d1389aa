package dev.radixserve.server.cacheview;

import dev.radixserve.server.api.ApiException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What {@code GET /cache/tree} asks for, and the bounded selection of nodes it answers with.
 *
 * <p>Nodes are taken breadth-first from the start (a namespace root each, or {@code node}), the
 * heaviest subtrees (most blocks) first, until {@code maxNodes} are taken or {@code depth} is
 * reached. Nodes a client needs to see are added beyond the budget: the path of each looked-up
 * request, the first {@value #MAX_MATCHES} search matches with their ancestors, and the children
 * (at most {@value #EXPAND_CHILDREN}) of each node in {@code expand}. Whatever is left out is
 * summed up per parent (see {@link TreeJson}).
 *
 * @param node start below this node (pagination by subtree); null for every namespace root
 * @param depth levels below the start to include at most
 * @param maxNodes node budget
 * @param request a request id whose matched path to include; null for none
 * @param search text to find in decoded edges (case-insensitive); null for none
 * @param expand nodes whose children to include beyond the budget
 */
record TreeQuery(Long node, int depth, int maxNodes, String request, String search,
    List<Long> expand) {

  static final int DEFAULT_MAX_NODES = 500;
  static final int MAX_NODES = 5000;
  static final int MAX_DEPTH = 100_000;
  static final int MAX_MATCHES = 50;
  static final int MAX_EXPAND = 50;
  static final int EXPAND_CHILDREN = 200;
  static final int MAX_TEXT = 256;
  private static final Set<String> PARAMS =
      Set.of("node", "depth", "max_nodes", "request", "q", "expand");

  /** The nodes chosen, parents before children, and the search result. */
  record Selection(Set<Long> ids, List<Long> matches, int matchesTotal, boolean truncated) {}

  /** Parses and validates query parameters. @throws ApiException 400 naming the parameter */
  static TreeQuery parse(Map<String, List<String>> params) {
    for (String p : params.keySet()) {
      if (!PARAMS.contains(p)) {
        throw ApiException.badRequest(p, "unknown parameter '" + p + "'; allowed: node, depth,"
            + " max_nodes, request, q, expand");
      }
    }
    String node = single(params, "node");
    String depth = single(params, "depth");
    String max = single(params, "max_nodes");
    String expand = single(params, "expand");
    List<Long> expanded = new ArrayList<>();
    if (expand != null && !expand.isEmpty()) {
      for (String id : expand.split(",")) {
        expanded.add(number(id, "expand", MIN_ID, Long.MAX_VALUE));
      }
      if (expanded.size() > MAX_EXPAND) {
        throw ApiException.badRequest("expand", "at most " + MAX_EXPAND + " node ids");
      }
    }
    return new TreeQuery(node == null ? null : number(node, "node", MIN_ID, Long.MAX_VALUE),
        depth == null ? MAX_DEPTH : (int) number(depth, "depth", 0, MAX_DEPTH),
        max == null ? DEFAULT_MAX_NODES : (int) number(max, "max_nodes", 1, MAX_NODES),
        text(params, "request"), text(params, "q"), List.copyOf(expanded));
  }

  /** Node ids are positive in the pool, negative for offloaded nodes (above -2^53). */
  static final long MIN_ID = -(1L << 53);

  private static String single(Map<String, List<String>> params, String name) {
    List<String> values = params.get(name);
    if (values == null) {
      return null;
    }
    if (values.size() != 1) {
      throw ApiException.badRequest(name, "'" + name + "' given " + values.size() + " times");
    }
    return values.getFirst();
  }

  private static String text(Map<String, List<String>> params, String name) {
    String v = single(params, name);
    if (v == null || v.isEmpty()) {
      return null;
    }
    if (v.length() > MAX_TEXT) {
      throw ApiException.badRequest(name, "'" + name + "' is longer than " + MAX_TEXT
          + " characters");
    }
    return v;
  }

  private static long number(String v, String name, long min, long max) {
    try {
      long n = Long.parseLong(v.trim());
      if (n >= min && n <= max) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw ApiException.badRequest(name, "'" + name + "' must be an integer in [" + min + ", "
        + max + "], got '" + v + "'");
  }

  /** @param forced nodes to include beyond the budget with their ancestors (a request's path) */
  Selection select(CacheTree tree, List<Long> forced) {
    List<Long> start = node == null ? tree.roots() : List.of(node);
    Set<Long> ids = new HashSet<>();
    Deque<long[]> queue = new ArrayDeque<>(); // {id, levels below the start}
    start.forEach(id -> queue.add(new long[] {id, 0}));
    Comparator<Long> heaviestFirst = Comparator
        .comparingInt((Long id) -> tree.node(id).subtree().blocks()).reversed()
        .thenComparing(id -> id);
    while (!queue.isEmpty() && ids.size() < maxNodes) {
      long[] next = queue.poll();
      CacheTree.Node n = tree.node(next[0]);
      ids.add(n.id());
      if (next[1] < depth) {
        n.children().stream().sorted(heaviestFirst)
            .forEach(c -> queue.add(new long[] {c, next[1] + 1}));
      }
    }
    boolean truncated = !queue.isEmpty();
    Set<Long> startSet = Set.copyOf(start);
    for (long id : forced) {
      includeWithAncestors(tree, id, startSet, ids);
    }
    for (long id : expand) {
      CacheTree.Node n = tree.node(id);
      if (n != null && includeWithAncestors(tree, id, startSet, ids)) {
        n.children().stream().limit(EXPAND_CHILDREN).forEach(ids::add);
      }
    }
    List<Long> matches = new ArrayList<>();
    int total = 0;
    if (search != null) {
      String needle = search.toLowerCase(Locale.ROOT);
      for (CacheTree.Node n : tree.nodes()) {
        if (!n.isRoot() && n.text().toLowerCase(Locale.ROOT).contains(needle)
            && inside(tree, n.id(), startSet)) {
          if (total++ < MAX_MATCHES) {
            matches.add(n.id());
            includeWithAncestors(tree, n.id(), startSet, ids);
          }
        }
      }
    }
    Set<Long> ordered = new LinkedHashSet<>();
    for (CacheTree.Node n : tree.nodes()) {
      if (ids.contains(n.id())) {
        ordered.add(n.id());
      }
    }
    return new Selection(ordered, matches, total, truncated);
  }

  /** Adds {@code id} and its ancestors up to a start node; false when it lies outside them. */
  private static boolean includeWithAncestors(CacheTree tree, long id, Set<Long> start,
      Set<Long> ids) {
    if (!inside(tree, id, start)) {
      return false;
    }
    for (CacheTree.Node n = tree.node(id); n != null; n = tree.parent(n)) {
      ids.add(n.id());
      if (start.contains(n.id())) {
        break;
      }
    }
    return true;
  }

  private static boolean inside(CacheTree tree, long id, Set<Long> start) {
    for (CacheTree.Node n = tree.node(id); n != null; n = tree.parent(n)) {
      if (start.contains(n.id())) {
        return true;
      }
    }
    return false;
  }
}
