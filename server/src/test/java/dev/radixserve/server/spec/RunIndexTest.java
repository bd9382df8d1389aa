package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.junit.jupiter.api.Test;

class RunIndexTest {

  @Test
  void findsTheLatestEarlierRunAndWhetherItRepeatedAsAScanWould() {
    Random random = new Random(7);
    for (int n = 1; n <= 5; n++) {
      // few ids: most runs repeat; many: most occur once and the table grows past its first size
      for (int vocabulary : new int[] {2, 5, 40, 5000}) {
        int[] tokens = new int[1500];
        for (int i = 0; i < tokens.length; i++) {
          tokens[i] = random.nextInt(vocabulary);
        }
        RunIndex index = new RunIndex(n);
        int onceSeen = 0;
        int repeatedSeen = 0;
        for (int at = n; at <= tokens.length; at++) {
          String where = "n " + n + ", vocabulary " + vocabulary + ", at " + at;
          assertEquals(scanLatest(tokens, n, at), index.latest(tokens, at), where);
          int count = scanCount(tokens, n, at);
          assertEquals(count == 1 ? scanLatest(tokens, n, at) : -1, index.once(tokens, at), where);
          onceSeen += count == 1 ? 1 : 0;
          repeatedSeen += count > 1 ? 1 : 0;
          if (at < tokens.length) {
            index.put(tokens, at);
          }
        }
        assertTrue(index.capacity() <= Math.max(16, 4 * index.size()),
            index.capacity() + " slots for " + index.size() + " runs");
        if (vocabulary <= 5) {
          assertTrue(onceSeen > 0 && repeatedSeen > 0, "both answers seen: " + onceSeen + ", "
              + repeatedSeen);
        }
      }
    }
  }

  @Test
  void countsDistinctRunsAndRefusesEmptyRuns() {
    int[] tokens = {1, 2, 1, 2, 1, 2, 3};
    RunIndex pairs = new RunIndex(2);
    for (int end = 2; end <= tokens.length; end++) {
      pairs.put(tokens, end);
    }
    // (1,2) (2,1) (2,3)
    assertEquals(3, pairs.size());
    assertThrows(IllegalArgumentException.class, () -> new RunIndex(0));
  }

  /** The latest e in [n, at) whose run equals the run before {@code at}, or -1. */
  private static int scanLatest(int[] tokens, int n, int at) {
    for (int e = at - 1; e >= n; e--) {
      if (same(tokens, n, e, at)) {
        return e;
      }
    }
    return -1;
  }

  private static int scanCount(int[] tokens, int n, int at) {
    int count = 0;
    for (int e = n; e < at; e++) {
      count += same(tokens, n, e, at) ? 1 : 0;
    }
    return count;
  }

  private static boolean same(int[] tokens, int n, int a, int b) {
    for (int k = 1; k <= n; k++) {
      if (tokens[a - k] != tokens[b - k]) {
        return false;
      }
    }
    return true;
  }
}
