package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The latest admission match of the most recent {@value #CAPACITY} requests, by engine request
 * id, so the page can highlight the path a request matched. View thread only.
 */
final class RequestPaths {

  static final int CAPACITY = 4096;
  /** Prompts of one HTTP request looked up at most (engine ids {@code <id>-0, <id>-1, ...}). */
  static final int MAX_PROMPTS = 16;

  private final Map<String, CacheEvent.Matched> byId =
      new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, CacheEvent.Matched> eldest) {
          return size() > CAPACITY;
        }
      };

  void add(CacheEvent.Matched m) {
    byId.remove(m.requestId()); // re-admission after preemption: latest wins, newest place
    byId.put(m.requestId(), m);
  }

  /**
   * Matches for {@code id}: the engine request itself, or every prompt of the HTTP response
   * with that id.
   */
  List<CacheEvent.Matched> find(String id) {
    CacheEvent.Matched exact = byId.get(id);
    if (exact != null) {
      return List.of(exact);
    }
    List<CacheEvent.Matched> found = new ArrayList<>();
    for (int i = 0; i < MAX_PROMPTS; i++) {
      CacheEvent.Matched m = byId.get(id + "-" + i);
      if (m == null) {
        break;
      }
      found.add(m);
    }
    return found;
  }

  /**
   * {@code {"id", "found", "matches": [{"request", "choice", "namespace", "node",
   * "matched_tokens", "queried_tokens", "path": [ids], "in_cache"}]}}: {@code path} runs from the
   * namespace root to the matched node in {@code tree}; {@code in_cache} is false when that node
   * has been evicted since.
   */
  static ObjectNode json(String id, List<CacheEvent.Matched> matches, CacheTree tree) {
    ObjectNode o = TreeJson.JSON.createObjectNode();
    o.put("id", id);
    o.put("found", !matches.isEmpty());
    ArrayNode list = o.putArray("matches");
    for (CacheEvent.Matched m : matches) {
      ObjectNode j = list.addObject();
      j.put("request", m.requestId());
      j.put("choice", m.choice());
      j.put("namespace", m.namespace());
      j.put("node", m.node());
      j.put("matched_tokens", m.matchedTokens());
      j.put("queried_tokens", m.queriedTokens());
      List<Long> path = tree.path(m.node());
      ArrayNode p = j.putArray("path");
      path.forEach(p::add);
      j.put("in_cache", !path.isEmpty());
    }
    return o;
  }
}
