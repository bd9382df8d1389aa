package dev.radixserve.server.cacheview;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * Decoded edge texts, kept across snapshots so that each edge is decoded once (on the view's
 * thread, never the engine's). An entry is reused while the node's id, length and end tokens are
 * the same: an edge changes only by a split, which changes its length.
 */
final class EdgeTexts {

  private record Entry(int length, int first, int last, String text) {}

  private final Function<int[], String> decoder;
  private final Map<Long, Entry> entries = new HashMap<>();
  private final Set<Long> seen = new HashSet<>();

  EdgeTexts(Function<int[], String> decoder) {
    this.decoder = decoder;
  }

  String text(long id, int[] tokens) {
    seen.add(id);
    if (tokens.length == 0) {
      return "";
    }
    Entry e = entries.get(id);
    int first = tokens[0];
    int last = tokens[tokens.length - 1];
    if (e == null || e.length != tokens.length || e.first != first || e.last != last) {
      e = new Entry(tokens.length, first, last, decoder.apply(tokens));
      entries.put(id, e);
    }
    return e.text;
  }

  /** Forgets the nodes not asked for since the last call (evicted ones). */
  void retainSeen() {
    entries.keySet().retainAll(seen);
    seen.clear();
  }
}
