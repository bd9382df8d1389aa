package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The incremental matcher against a plain search over the whole text, on random texts. */
class StopStringsTest {

  /** Earliest start of any stop that ends within [from, text.length()), or -1. */
  private static int naiveCut(String text, int from, List<String> stops) {
    int cut = -1;
    for (String s : stops) {
      int at = text.indexOf(s, Math.max(0, from - s.length() + 1));
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
      }
    }
    return cut;
  }

  private static int naivePartial(String text, List<String> stops) {
    int held = 0;
    for (String s : stops) {
      for (int k = Math.min(s.length() - 1, text.length()); k > held; k--) {
        if (text.endsWith(s.substring(0, k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  }

  private static String random(Random r, int length) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < length; i++) {
      b.append("abc".charAt(r.nextInt(3)));
    }
    return b.toString();
  }

  @Test
  void agreesWithAFullSearchOnRandomTextsAndPieces() {
    Random r = new Random(11);
    for (int round = 0; round < 2000; round++) {
      List<String> stops = new ArrayList<>();
      for (int k = 1 + r.nextInt(4); k > 0; k--) {
        stops.add(random(r, 1 + r.nextInt(6)));
      }
      StopStrings.Matcher m = new StopStrings(stops).matcher();
      StringBuilder text = new StringBuilder();
      while (text.length() < 60) {
        String piece = random(r, 1 + r.nextInt(4));
        int from = text.length();
        text.append(piece);
        int cut = m.feed(piece, from);
        assertEquals(naiveCut(text.toString(), from, stops), cut, stops + " in " + text);
        if (cut >= 0) {
          break;
        }
        assertEquals(naivePartial(text.toString(), stops), m.partial(), stops + " in " + text);
      }
    }
  }

  @Test
  void aLongStopStringIsMatchedLikeAShortOne() {
    String stop = "x".repeat(100_000);
    StopStrings.Matcher m = new StopStrings(List.of(stop, "", "END")).matcher();
    int at = 0;
    for (int i = 0; i < 1000; i++) {
      assertEquals(-1, m.feed("ab ", at));
      at += 3;
    }
    assertEquals(at + 2, m.feed("abEND", at));
  }
}
