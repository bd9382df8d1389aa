package dev.radixserve.server.cacheview;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * Cache events as the stream sends them: {@code {"events": [...], "dropped": n}}, each event
 * {@code {"seq", "t", "type", "namespace", "node", ...}} with its own fields:
 *
 * <pre>
 * stored   parent, path_tokens, blocks, text (the end of the stored path, decoded)
 * split    upper, upper_tokens
 * evicted  path_tokens, blocks, text
 * lock     lock (references after)        unlock  lock
 * match    request, choice, matched_tokens, queried_tokens
 * </pre>
 */
final class EventJson {

  /** Tokens at the end of a stored or evicted path decoded for its preview. */
  static final int TAIL_TOKENS = 24;

  private EventJson() {}

  /** @param dropped events lost so far because the engine-side queue was full */
  static ObjectNode batch(List<CacheEvent> events, long dropped, Function<int[], String> decoder) {
    ObjectNode o = TreeJson.JSON.createObjectNode();
    ArrayNode list = o.putArray("events");
    events.forEach(e -> list.add(event(e, decoder)));
    o.put("dropped", dropped);
    return o;
  }

  static ObjectNode event(CacheEvent e, Function<int[], String> decoder) {
    ObjectNode o = TreeJson.JSON.createObjectNode();
    o.put("seq", e.seq());
    o.put("t", e.time());
    switch (e) {
      case CacheEvent.Stored s -> {
        head(o, "stored", s.namespace(), s.node());
        o.put("parent", s.parent());
        path(o, s.pathTokens(), s.blocks(), decoder);
      }
      case CacheEvent.Split s -> {
        head(o, "split", s.namespace(), s.node());
        o.put("upper", s.upper());
        o.put("upper_tokens", s.upperTokens());
      }
      case CacheEvent.Evicted v -> {
        head(o, "evicted", v.namespace(), v.node());
        path(o, v.pathTokens(), v.blocks(), decoder);
      }
      case CacheEvent.Locked l -> {
        head(o, "lock", l.namespace(), l.node());
        o.put("lock", l.lockRef());
      }
      case CacheEvent.Unlocked u -> {
        head(o, "unlock", u.namespace(), u.node());
        o.put("lock", u.lockRef());
      }
      case CacheEvent.Matched m -> {
        head(o, "match", m.namespace(), m.node());
        o.put("request", m.requestId());
        o.put("choice", m.choice());
        o.put("matched_tokens", m.matchedTokens());
        o.put("queried_tokens", m.queriedTokens());
      }
    }
    return o;
  }

  private static void head(ObjectNode o, String type, String namespace, long node) {
    o.put("type", type);
    o.put("namespace", namespace);
    o.put("node", node);
  }

  private static void path(ObjectNode o, int[] path, int blocks, Function<int[], String> decoder) {
    o.put("path_tokens", path.length);
    o.put("blocks", blocks);
    int from = Math.max(0, path.length - TAIL_TOKENS);
    o.put("text", (from > 0 ? "…" : "") + decoder.apply(Arrays.copyOfRange(path, from,
        path.length)));
  }
}
