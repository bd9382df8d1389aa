package dev.radixserve.cache;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A naive, uncompressed model of what the cache should hold: every stored page-aligned prefix
 * (namespace + tokens) with its block id, lock count, access tick, hits and priority. No splits,
 * no compression, no sets: plain maps and linear scans.
 *
 * <p>Why it is independent of the tree: inserts and matches are modelled from the caller's side
 * (what was inserted, what was locked). The one thing the model cannot predict is which node an
 * eviction picks, so the cache reports each evicted node through {@link
 * CacheListener#evicted}; the oracle then <em>checks</em> that choice instead of trusting it: the
 * removed pages must be stored, carry the reported block ids, have lock count 0, end in a leaf
 * (no stored extension), and the node's eviction key must be minimal among all unlocked leaves
 * under the policy. Everything else (matched length, matched ids, duplicates, already-cached
 * counts, freed counts) is predicted exactly.
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
    final int blockId;
    int children;
    int locks;
    long access;
    long hits;
    int priority;

    Page(int blockId) {
      this.blockId = blockId;
    }
  }

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

  private Page page(String ns, int[] tokens, int pages) {
    return this.pages.get(key(ns, tokens, pages * pageSize));
  }

  /** Expected match: the block ids of the longest stored prefix of tokens[0, length). */
  int[] match(int[] tokens, int length, String ns) {
    List<Integer> ids = new ArrayList<>();
    List<Page> path = new ArrayList<>();
    for (int k = 1; k * pageSize <= length; k++) {
      Page p = page(ns, tokens, k);
      if (p == null) {
        break;
      }
      ids.add(p.blockId);
      path.add(p);
    }
    tick++;
    for (Page p : path) {
      p.access = tick;
      p.hits++;
    }
    return ids.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Records an insert; returns the expected duplicates; {@code cached[0]} gets the count. */
  int[] insert(int[] tokens, int[] ids, String ns, int priority, int[] cached) {
    tick++;
    List<Integer> dups = new ArrayList<>();
    cached[0] = ids.length * pageSize;
    boolean fresh = false;
    for (int k = 1; k <= ids.length; k++) {
      Page p = page(ns, tokens, k);
      if (p == null) {
        if (!fresh) {
          cached[0] = (k - 1) * pageSize;
          fresh = true;
        }
        p = new Page(ids[k - 1]);
        this.pages.put(key(ns, tokens, k * pageSize), p);
        if (k > 1) {
          page(ns, tokens, k - 1).children++;
        }
      } else if (p.blockId != ids[k - 1]) {
        dups.add(ids[k - 1]);
      }
      p.access = tick;
      p.priority = Math.max(p.priority, priority);
    }
    return dups.stream().mapToInt(Integer::intValue).toArray();
  }

  /** Adds (or removes) one lock on the first {@code pages} pages of tokens. */
  void lock(int[] tokens, int pagesLocked, String ns, int delta) {
    for (int k = 1; k <= pagesLocked; k++) {
      Page p = page(ns, tokens, k);
      if (p == null) {
        throw new AssertionError("oracle: lock on a page not stored, page " + k);
      }
      p.locks += delta;
    }
  }

  /** Checks and applies one eviction the cache reported. */
  void evicted(String ns, int[] pathTokens, int[] blocks) {
    int total = pathTokens.length / pageSize;
    Page deepest = page(ns, pathTokens, total);
    if (deepest == null || deepest.children != 0 || deepest.locks != 0) {
      throw new AssertionError("evicted a node that is not an unlocked stored leaf: " + ns
          + " " + Arrays.toString(pathTokens));
    }
    long[] key = {policy.primary(deepest), deepest.access};
    for (Page p : this.pages.values()) {
      if (p.children == 0 && p.locks == 0) {
        long primary = policy.primary(p);
        if (primary < key[0] || (primary == key[0] && p.access < key[1])) {
          throw new AssertionError("evicted key (" + key[0] + ", " + key[1] + ") but an unlocked"
              + " leaf has (" + primary + ", " + p.access + ")");
        }
      }
    }
    for (int j = 0; j < blocks.length; j++) {
      int k = total - blocks.length + 1 + j;
      Page p = page(ns, pathTokens, k);
      if (p == null || p.blockId != blocks[j] || p.locks != 0) {
        throw new AssertionError("evicted page " + k + " with block " + blocks[j]
            + " but the oracle has " + (p == null ? "nothing" : "block " + p.blockId
            + " with " + p.locks + " locks"));
      }
    }
    for (int k = total; k > total - blocks.length; k--) {
      this.pages.remove(key(ns, pathTokens, k * pageSize));
    }
    if (total - blocks.length >= 1) {
      page(ns, pathTokens, total - blocks.length).children--;
    }
  }

  int storedPages() {
    return pages.size();
  }
}
