package dev.radixserve.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A naive, uncompressed model of what the cache should hold: every stored page, keyed by the
 * prefix that ends with it (namespace + tokens), with its block id, lock count, access tick, hits
 * and priority. No splits, no compression, no sets: plain maps and linear scans.
 *
 * <p>Pages (B tokens per block): a <em>whole</em> page ends at a multiple of B; a <em>partial</em>
 * page ends inside its block (its prefix length is not a multiple of B) and never has pages below
 * it. A page's parent is the whole page ending where its block starts. Several pages may start at
 * the same boundary (siblings); a longer sequence never extends a partial page but has its own
 * page for those tokens.
 *
 * <p>The rules modelled, from the caller's side: a match takes whole pages while the query goes
 * on, then borrows the first tokens of the best sibling page at the next boundary (most matching
 * tokens, then whole before partial, then the smaller tokens); an insert reuses a stored page
 * where the same prefix is stored (for its partial last page: any page at that boundary that
 * starts with its tokens, the one holding the caller's block first) and stores a new page
 * everywhere else.
 *
 * <p>The one thing the model cannot predict is which node an eviction picks, so the cache
 * reports each evicted node through {@link CacheListener#evicted}; the oracle then <em>checks</em>
 * that choice instead of trusting it: the removed pages must be stored, carry the reported block
 * ids, have lock count 0, end in a leaf (no stored page below), and the node's eviction key must
 * be minimal among all unlocked leaves under the policy. Everything else (matched length, matched
 * ids, duplicates, already-cached counts, freed counts) is predicted exactly.
 */
final class PageOracle {

  /** How an eviction key is derived from a page's stats (mirrors the policy's contract). */
  enum Policy {
    LRU, LFU, PRIORITY;

    long primary(Page p) {
      return switch (this) {
        case LRU -> p.access;
        case LFU -> p.hits;
        case PRIORITY -> p.priority;
      };
    }
  }

  static final class Page {
    final String ns;
    final int[] prefix;
    final int blockId;
    int children;
    int locks;
    long access;
    long hits;
    int priority;

    Page(String ns, int[] prefix, int blockId) {
      this.ns = ns;
      this.prefix = prefix;
      this.blockId = blockId;
    }
  }

  /**
   * An expected match.
   *
   * @param tokens matched tokens
   * @param ids whole blocks, then the borrowed block when {@code partial > 0}
   * @param partial tokens taken from the borrowed block
   * @param whole the pages of the whole blocks
   * @param all the whole pages and the borrowed one
   */
  record Match(int tokens, int[] ids, int partial, List<Page> whole, List<Page> all) {}

  /** An expected insert: duplicates, tokens already cached, and the pages of its path. */
  record Insert(int[] duplicates, int alreadyCached, List<Page> path) {}

  private final int pageSize;
  private final Policy policy;
  private final Map<String, Page> pages = new HashMap<>();
  private long tick;

  PageOracle(int pageSize, Policy policy) {
    this.pageSize = pageSize;
    this.policy = policy;
  }

  private static String key(String ns, int[] tokens, int length) {
    return ns + "|" + Arrays.toString(Arrays.copyOf(tokens, length));
  }

  private Page page(String ns, int[] tokens, int length) {
    return pages.get(key(ns, tokens, length));
  }

  /** Stored pages starting at token {@code start} (a boundary) below {@code tokens[0, start)}. */
  private List<Page> siblingsAt(String ns, int[] tokens, int start) {
    List<Page> out = new ArrayList<>();
    for (Page p : pages.values()) {
      int len = p.prefix.length;
      if (p.ns.equals(ns) && len > start && len <= start + pageSize
          && Arrays.equals(p.prefix, 0, start, tokens, 0, start)) {
        out.add(p);
      }
    }
    return out;
  }

  private int common(Page p, int[] tokens, int start, int end) {
    int span = Math.min(p.prefix.length, end) - start;
    int m = Arrays.mismatch(p.prefix, start, start + span, tokens, start, start + span);
    return m < 0 ? span : m;
  }

  /** Whole before partial, then the smaller tokens. */
  private boolean before(Page a, Page b, int start) {
    boolean aWhole = a.prefix.length == start + pageSize;
    boolean bWhole = b.prefix.length == start + pageSize;
    if (aWhole != bWhole) {
      return aWhole;
    }
    return Arrays.compare(a.prefix, start, a.prefix.length, b.prefix, start, b.prefix.length) < 0;
  }

  /** The expected result of {@code matchPrefix(tokens, length, ns)}; touches what it uses. */
  Match match(int[] tokens, int length, String ns) {
    List<Page> whole = new ArrayList<>();
    int k = 0;
    while ((k + 1) * pageSize <= length) {
      Page p = page(ns, tokens, (k + 1) * pageSize);
      if (p == null) {
        break;
      }
      whole.add(p);
      k++;
    }
    int start = k * pageSize;
    int end = Math.min(length, start + pageSize);
    Page borrowed = null;
    int partial = 0;
    if (start < length) {
      for (Page p : siblingsAt(ns, tokens, start)) {
        int c = common(p, tokens, start, end);
        if (c > partial || (c == partial && c > 0 && before(p, borrowed, start))) {
          borrowed = p;
          partial = c;
        }
      }
    }
    tick++;
    List<Page> all = new ArrayList<>(whole);
    if (borrowed != null) {
      if (partial >= pageSize) {
        throw new AssertionError("oracle: a whole page borrowed at token " + start);
      }
      all.add(borrowed);
    }
    for (Page p : all) {
      p.access = tick;
      p.hits++;
    }
    int[] ids = all.stream().mapToInt(p -> p.blockId).toArray();
    return new Match(start + partial, ids, partial, whole, all);
  }

  /** Records {@code insert(tokens, length, ids, ns, priority)}; returns what it must report. */
  Insert insert(int[] tokens, int length, int[] ids, String ns, int priority) {
    tick++;
    List<Integer> dups = new ArrayList<>();
    List<Page> path = new ArrayList<>();
    int cached = length;
    for (int k = 1; k <= ids.length; k++) {
      int end = Math.min(k * pageSize, length);
      int start = (k - 1) * pageSize;
      Page p = end % pageSize == 0 ? page(ns, tokens, end) : covering(ns, tokens, start, end,
          ids[k - 1]);
      if (p == null) {
        if (cached == length) {
          cached = start;
        }
        p = new Page(ns, Arrays.copyOf(tokens, end), ids[k - 1]);
        pages.put(key(ns, tokens, end), p);
        if (k > 1) {
          page(ns, tokens, start).children++;
        }
      } else if (p.blockId != ids[k - 1]) {
        dups.add(ids[k - 1]);
      }
      p.access = tick;
      p.priority = Math.max(p.priority, priority);
      path.add(p);
    }
    return new Insert(dups.stream().mapToInt(Integer::intValue).toArray(), cached, path);
  }

  /** A stored page at boundary {@code start} that begins with {@code tokens[start, end)}. */
  private Page covering(String ns, int[] tokens, int start, int end, int mine) {
    Page best = null;
    for (Page p : siblingsAt(ns, tokens, start)) {
      if (p.prefix.length >= end && common(p, tokens, start, end) == end - start) {
        if (p.blockId == mine) {
          return p;
        }
        if (best == null || before(p, best, start)) {
          best = p;
        }
      }
    }
    return best;
  }

  /** Adds (or removes) one lock on each page. */
  void lock(List<Page> locked, int delta) {
    for (Page p : locked) {
      if (pages.get(key(p.ns, p.prefix, p.prefix.length)) != p) {
        throw new AssertionError("oracle: lock on a page not stored: " + Arrays.toString(p.prefix));
      }
      p.locks += delta;
      if (p.locks < 0) {
        throw new AssertionError("oracle: negative lock count on " + Arrays.toString(p.prefix));
      }
    }
  }

  /** Checks and applies one eviction the cache reported. */
  void evicted(String ns, int[] pathTokens, int[] blocks) {
    int length = pathTokens.length;
    Page deepest = page(ns, pathTokens, length);
    if (deepest == null || deepest.children != 0 || deepest.locks != 0) {
      throw new AssertionError("evicted a node that is not an unlocked stored leaf: " + ns
          + " " + Arrays.toString(pathTokens));
    }
    long[] key = {policy.primary(deepest), deepest.access};
    for (Page p : pages.values()) {
      if (p.children == 0 && p.locks == 0) {
        long primary = policy.primary(p);
        if (primary < key[0] || (primary == key[0] && p.access < key[1])) {
          throw new AssertionError("evicted key (" + key[0] + ", " + key[1] + ") but an unlocked"
              + " leaf has (" + primary + ", " + p.access + ")");
        }
      }
    }
    int last = (length + pageSize - 1) / pageSize; // pages on the path
    int first = last - blocks.length; // whole pages above the evicted node
    for (int j = 0; j < blocks.length; j++) {
      int end = Math.min((first + j + 1) * pageSize, length);
      Page p = page(ns, pathTokens, end);
      if (p == null || p.blockId != blocks[j] || p.locks != 0) {
        throw new AssertionError("evicted page ending at " + end + " with block " + blocks[j]
            + " but the oracle has " + (p == null ? "nothing" : "block " + p.blockId
            + " with " + p.locks + " locks"));
      }
    }
    for (int j = 0; j < blocks.length; j++) {
      pages.remove(key(ns, pathTokens, Math.min((first + j + 1) * pageSize, length)));
    }
    if (first >= 1) {
      page(ns, pathTokens, first * pageSize).children--;
    }
  }

  int storedPages() {
    return pages.size();
  }
}
