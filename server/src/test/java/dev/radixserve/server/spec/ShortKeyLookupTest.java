package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ShortKeyLookupTest {

  @Test
  void proposesWhatFollowedTheLatestEarlierPairElseTheLatestEarlierToken() {
    //            0  1  2  3  4  5  6  7  8
    int[] seq = {1, 2, 3, 9, 2, 4, 7, 1, 2};
    // the pair (1, 2) last occurred before position 2: 3 followed, then 9
    assertArrayEquals(new int[] {3, 9}, new ShortKeyLookup().propose(seq, 9, 2));
    // (7, 1) never occurred before length 8; token 1 did, before position 1: 2 followed
    assertArrayEquals(new int[] {2}, new ShortKeyLookup().propose(seq, 8, 1));
    // (2, 4) never occurred before; token 4 neither: nothing
    assertArrayEquals(new int[0], new ShortKeyLookup().propose(seq, 6, 1));
    // (9, 2): no; token 2 last occurred before position 2 (its latest earlier occurrence): 3
    assertArrayEquals(new int[] {3}, new ShortKeyLookup().propose(seq, 5, 1));
  }

  @Test
  void neverFindsItsOwnSuffixAndNeedsTwoTokens() {
    assertArrayEquals(new int[0], new ShortKeyLookup().propose(new int[] {5}, 1, 1));
    assertArrayEquals(new int[0], new ShortKeyLookup().propose(new int[] {5, 6}, 2, 1));
    // a run: the latest earlier 5 is followed by 5
    assertArrayEquals(new int[] {5, 5}, new ShortKeyLookup().propose(new int[] {5, 5}, 2, 2));
  }

  @Test
  void incrementalIndexProposesWhatAFreshOneDoes() {
    int[] seq = mixed(23);
    ShortKeyLookup grown = new ShortKeyLookup();
    for (int len = 1; len <= seq.length; len++) {
      assertArrayEquals(new ShortKeyLookup().propose(seq, len, 3), grown.propose(seq, len, 3),
          "length " + len);
    }
  }

  @Test
  void aPairDraftsOnlyWhereItOccurredOnceBefore() {
    //            0  1  2  3  4  5  6  7  8  9
    int[] seq = {1, 2, 3, 4, 1, 2, 5, 3, 4, 3};
    // (3, 4) occurred once before position 9 (before 4): 1, 2, then 5 followed
    assertArrayEquals(new int[] {1, 2, 5},
        new ShortKeyLookup().proposeByUniquePair(seq, 9, 3));
    // (1, 2) occurred twice before the suffix (ending before 2 and before 6): the wrong place as
    // likely
    int[] twice = {1, 2, 3, 4, 1, 2, 5, 1, 2};
    assertArrayEquals(new int[0], new ShortKeyLookup().proposeByUniquePair(twice, 9, 3));
    // ... where the latest-occurrence lookup still proposes what followed the later one
    assertArrayEquals(new int[] {5}, new ShortKeyLookup().propose(twice, 9, 1));
    // (4, 3) never occurred before; nor does a single token count
    assertArrayEquals(new int[0], new ShortKeyLookup().proposeByUniquePair(seq, 10, 3));
    assertArrayEquals(new int[0], new ShortKeyLookup().proposeByUniquePair(new int[] {5}, 1, 2));
  }

  @Test
  void aGrownIndexFindsTheUniquePairsAFreshOneFinds() {
    int[] seq = mixed(41);
    ShortKeyLookup grown = new ShortKeyLookup();
    int proposed = 0;
    for (int len = 1; len <= seq.length; len++) {
      int[] fresh = new ShortKeyLookup().proposeByUniquePair(seq, len, 3);
      // both lookups share one index: growing it through either gives the same answers
      if (len % 2 == 0) {
        grown.propose(seq, len, 1);
      }
      assertArrayEquals(fresh, grown.proposeByUniquePair(seq, len, 3), "length " + len);
      proposed += fresh.length > 0 ? 1 : 0;
    }
    // the sequence holds unique and repeated pairs both, so the test sees both answers
    assertTrue(proposed > 10 && proposed < 290,
        "proposed at " + proposed);
  }

  /** 300 tokens below {@code vocabulary} that repeat some pairs and runs and not others. */
  private static int[] mixed(int vocabulary) {
    int[] seq = new int[300];
    for (int i = 0; i < seq.length; i++) {
      seq[i] = (i * 7 + i / 13 + i * i / 29) % vocabulary;
    }
    return seq;
  }
}
