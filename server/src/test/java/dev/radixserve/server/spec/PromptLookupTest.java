package dev.radixserve.server.spec;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PromptLookupTest {

  @Test
  void proposesWhatFollowedTheLatestEarlierOccurrenceOfTheLastThreeTokens() {
    //            0  1  2  3  4  5  6  7  8  9 10 11 12
    int[] seq = {1, 2, 3, 4, 5, 9, 2, 3, 4, 7, 8, 2, 3};
    PromptLookup lookup = new PromptLookup();
    // suffix (8, 2, 3) never occurred before: nothing
    assertArrayEquals(new int[0], lookup.propose(seq, 13, 4));
    // suffix (2, 3, 4) at length 9 occurred at 1..3 (followed by 5, 9, 2, 3)
    int[] grown = Arrays.copyOf(seq, 14);
    grown[13] = 4;
    // latest earlier (2, 3, 4) ends at 9: what follows is 7, 8, 2, 3, 4, and then, copying on
    // into what it copied (the match overlaps the end), 7, 8, 2, 3, 4 again
    assertArrayEquals(new int[] {7, 8, 2}, lookup.propose(grown, 14, 3));
    assertArrayEquals(new int[] {7, 8, 2, 3, 4, 7, 8, 2, 3, 4},
        lookup.propose(grown, 14, 10));
  }

  @Test
  void theLongestMatchGoesBeforeALaterShorterOne() {
    //           0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18
    int[] seq = {6, 1, 2, 3, 4, 5, 9, 8, 8, 2, 3, 4, 7, 0, 6, 1, 2, 3, 4};
    // (2, 3, 4) last occurred at 9..11 (then 7); (6, 1, 2, 3, 4) only at 0..4 (then 5, 9)
    assertArrayEquals(new int[] {5, 9}, new PromptLookup().propose(seq, 19, 2));
    // with four tokens of the suffix matching there: (1, 2, 3, 4) at 1..4
    int[] four = seq.clone();
    four[14] = 0;
    assertArrayEquals(new int[] {5, 9}, new PromptLookup().propose(four, 19, 2));
    // with only three matching anywhere, the latest three
    int[] three = seq.clone();
    three[15] = 0;
    assertArrayEquals(new int[] {7, 0}, new PromptLookup().propose(three, 19, 2));
  }

  @Test
  void incrementalIndexProposesWhatAFreshOneDoes() {
    int[] seq = new int[200];
    for (int i = 0; i < seq.length; i++) {
      seq[i] = (i * 7 + i / 13) % 11;
    }
    PromptLookup grown = new PromptLookup();
    for (int len = 1; len <= seq.length; len++) {
      assertArrayEquals(new PromptLookup().propose(seq, len, 5), grown.propose(seq, len, 5),
          "length " + len);
    }
  }

  @Test
  void aLoopIsProposedForTheWholeDraft() {
    int[] seq = {5, 5, 5, 5};
    assertArrayEquals(new int[] {5, 5, 5}, new PromptLookup().propose(seq, 4, 3));
    int[] period2 = {1, 6, 7, 6, 7, 6};
    // (6, 7, 6) last ended at 4: 7, 6, then the copy's own 7, 6, 7
    assertArrayEquals(new int[] {7, 6, 7, 6, 7}, new PromptLookup().propose(period2, 6, 5));
    assertArrayEquals(new int[0], new PromptLookup().propose(seq, 3, 3)); // no earlier run yet
  }

  @Test
  void proposesWhatAScanForTheLongestLatestMatchFinds() {
    Random random = new Random(3);
    for (int vocabulary : new int[] {3, 8, 60}) {
      int[] seq = new int[800];
      for (int i = 0; i < seq.length; i++) {
        // runs copied from earlier, as text that quotes itself, between random tokens
        seq[i] = i > 20 && random.nextInt(3) > 0 ? seq[i - 1 - random.nextInt(20)]
            : random.nextInt(vocabulary);
      }
      PromptLookup grown = new PromptLookup();
      for (int len = 1; len <= seq.length; len++) {
        assertArrayEquals(scan(seq, len, 6), grown.propose(seq, len, 6),
            "vocabulary " + vocabulary + ", length " + len);
      }
    }
  }

  /** The reference: the latest earlier match of the last 5, else 4, else 3 tokens, by a scan. */
  private static int[] scan(int[] seq, int length, int max) {
    for (int n = Math.min(PromptLookup.LONGEST, length - 1); n >= NGram.N; n--) {
      for (int end = length - 1; end >= n; end--) {
        if (Arrays.equals(seq, end - n, end, seq, length - n, length)) {
          return PromptLookup.copyAfter(seq, length, end, max);
        }
      }
    }
    return new int[0];
  }
}
