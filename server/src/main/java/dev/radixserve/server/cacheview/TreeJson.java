package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.cache.CacheStats;
import java.util.ArrayList;
import java.util.List;

/**
 * The wire format of the cache view: nodes, the bounded tree of {@code GET /cache/tree}, and the
 * diffs between two snapshots streamed by {@code GET /cache/events}.
 *
 * <pre>
 * node: {"id", "parent" (absent on a root), "depth", "tokens", "blocks", "lock", "hits",
 *        "last_access", "evictable", "children" (count), "text" (edge preview),
 *        "subtree": {"nodes", "blocks", "tokens", "locked", "evictable"}}
 *       a namespace root adds "root": true and "namespace"; tokens/blocks are 0
 *       an offloaded node (its blocks held only by a tier below the pool) adds "offloaded": true,
 *       "medium" (the fastest tier holding it: "CPU" or "DISK", as in the KV events), "media",
 *       "offloaded_blocks" and, when it leaves its parent's edge before the end, "branch_at";
 *       its "blocks" (pool blocks) is 0
 * with tiers below the pool, subtree/totals/more also count "offloaded_nodes",
 *       "offloaded_blocks", "offloaded_tokens" apart from the pool's nodes, blocks and tokens;
 *       totals add "offloaded_unplaced_blocks"
 * tree: {"version", "event_seq", "taken_at", "clock", "block_size", "totals", "stats",
 *        "truncated", "nodes": [node + "more" where children were left out], ...}
 * diff: {"version", "from", "event_seq", "totals", "upserts": [node], "removed": [id]}
 *       or {"version", "from", "event_seq", "totals", "resync": true} when too much changed
 * </pre>
 */
final class TreeJson {

  static final ObjectMapper JSON = new ObjectMapper();
  /** Characters of edge text in a node at most; the whole edge is searched. */
  static final int PREVIEW_CHARS = 80;

  private TreeJson() {}

  /** {@code n} as JSON; {@code tiered}: the server has tiers (the offloaded counts are sent). */
  static ObjectNode node(CacheTree.Node n, boolean tiered) {
    ObjectNode o = JSON.createObjectNode();
    o.put("id", n.id());
    if (n.isRoot()) {
      o.put("root", true);
      o.put("namespace", n.namespace());
    } else {
      o.put("parent", n.parent());
    }
    o.put("depth", n.depth());
    o.put("tokens", n.tokens());
    o.put("blocks", n.blocks());
    o.put("lock", n.lockRef());
    o.put("hits", n.hits());
    o.put("last_access", n.lastAccess());
    o.put("evictable", n.evictable());
    o.put("children", n.children().size());
    o.put("text", preview(n.text()));
    totals(o.putObject("subtree"), n.subtree(), tiered);
    if (n.offloaded()) {
      o.put("offloaded", true);
      o.put("medium", n.media().getFirst());
      n.media().forEach(o.putArray("media")::add);
      o.put("offloaded_blocks", n.offloadedBlocks());
      if (n.branchAt() >= 0) {
        o.put("branch_at", n.branchAt());
      }
    }
    return o;
  }

  /** The whole edge, or its start and end around "…" (siblings often differ only at the end). */
  static String preview(String text) {
    if (text.length() <= PREVIEW_CHARS) {
      return text;
    }
    int head = PREVIEW_CHARS / 2;
    int tail = text.length() - (PREVIEW_CHARS - head - 1);
    if (Character.isHighSurrogate(text.charAt(head - 1))) {
      head--;
    }
    if (Character.isLowSurrogate(text.charAt(tail))) {
      tail++;
    }
    return text.substring(0, head) + "…" + text.substring(tail);
  }

  private static void totals(ObjectNode o, CacheTree.Totals t, boolean tiered) {
    o.put("nodes", t.nodes());
    o.put("blocks", t.blocks());
    o.put("tokens", t.tokens());
    o.put("locked", t.locked());
    o.put("evictable", t.evictable());
    if (!tiered) {
      return; // without tiers the format is what it was before there were any
    }
    o.put("offloaded_nodes", t.offloadedNodes());
    o.put("offloaded_blocks", t.offloadedBlocks());
    o.put("offloaded_tokens", t.offloadedTokens());
  }

  /** What every tree, diff and hello starts with: the snapshot's version, clock and totals. */
  static ObjectNode header(CacheTree tree) {
    CacheSample s = tree.sample();
    ObjectNode o = JSON.createObjectNode();
    o.put("version", s.version());
    o.put("event_seq", s.eventSeq());
    o.put("taken_at", s.takenMillis());
    o.put("clock", s.tree().clock());
    o.put("block_size", s.blockSize());
    ObjectNode totals = o.putObject("totals");
    totals(totals, tree.totals(), tree.tiered());
    totals.put("namespaces", tree.roots().size());
    if (tree.tiered()) {
      totals.put("offloaded_unplaced_blocks", tree.unplacedOffloaded());
    }
    return o;
  }

  /**
   * The selected part of {@code tree}; a node whose children were not all selected carries
   * {@code "more": {"children", "nodes", "blocks", "tokens", "locked", "evictable"}} summing
   * the subtrees left out.
   */
  static ObjectNode tree(CacheTree tree, TreeQuery.Selection sel) {
    ObjectNode o = header(tree);
    CacheStats st = tree.sample().stats();
    ObjectNode stats = o.putObject("stats");
    stats.put("queries", st.queries());
    stats.put("query_tokens", st.queryTokens());
    stats.put("hit_tokens", st.hitTokens());
    stats.put("inserted_blocks", st.insertedBlocks());
    stats.put("evicted_blocks", st.evictedBlocks());
    o.put("truncated", sel.truncated());
    o.put("shown", sel.ids().size());
    ArrayNode nodes = o.putArray("nodes");
    for (long id : sel.ids()) {
      CacheTree.Node n = tree.node(id);
      ObjectNode j = node(n, tree.tiered());
      int left = 0;
      CacheTree.Totals more = CacheTree.Totals.NONE;
      for (long c : n.children()) {
        if (!sel.ids().contains(c)) {
          left++;
          more = more.plus(tree.node(c).subtree());
        }
      }
      if (left > 0) {
        ObjectNode m = j.putObject("more");
        m.put("children", left);
        totals(m, more, tree.tiered());
      }
      nodes.add(j);
    }
    return o;
  }

  /**
   * What changed from {@code from} to {@code to}: new or changed nodes (parents first) and the
   * ids that left; a {@code resync} marker instead when more than {@code limit} nodes changed.
   */
  static ObjectNode diff(CacheTree from, CacheTree to, int limit) {
    ObjectNode o = header(to);
    o.put("from", from.sample().version());
    List<CacheTree.Node> upserts = new ArrayList<>();
    List<Long> removed = new ArrayList<>();
    for (CacheTree.Node n : to.nodes()) {
      if (!n.equals(from.node(n.id()))) {
        upserts.add(n);
      }
    }
    for (CacheTree.Node n : from.nodes()) {
      if (to.node(n.id()) == null) {
        removed.add(n.id());
      }
    }
    if (upserts.size() + removed.size() > limit) {
      o.put("resync", true);
      return o;
    }
    ArrayNode up = o.putArray("upserts");
    upserts.forEach(n -> up.add(node(n, to.tiered())));
    ArrayNode rm = o.putArray("removed");
    removed.forEach(rm::add);
    return o;
  }
}
