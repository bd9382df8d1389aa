package dev.radixserve.server.engine;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.StreamDecoder;
import java.util.List;

/**
 * Incremental detokenizer with stop strings for one choice.
 *
 * <p>Token bytes go through a {@link StreamDecoder}: only complete UTF-8 characters become text
 * (a character split across tokens waits for its last byte). Stop strings are searched in the whole
 * text, so one spanning several tokens is found; the text is cut where the stop string starts.
 * Text that could be the beginning of a stop string is held back from {@link Step#delta()} until
 * it is known not to be one, so the streamed deltas never contain any part of a stop string.
 */
final class SequenceText {

  private final StreamDecoder decoder;
  private final List<String> stops;
  private final int longestStop;
  private final StringBuilder text = new StringBuilder();
  private int emitted;
  private boolean stopped;

  SequenceText(Tokenizer tokenizer, List<String> stops) {
    this.decoder = new StreamDecoder(tokenizer);
    this.stops = stops.stream().filter(s -> !s.isEmpty()).toList();
    this.longestStop = this.stops.stream().mapToInt(String::length).max().orElse(0);
  }

  /** The result of adding one token. */
  record Step(String delta, boolean stopped, int tokenOffset) {}

  /** Chars of text so far (before any held-back part is emitted). */
  int length() {
    return text.length();
  }

  /** Adds one token's bytes; reports newly final text and whether a stop string ended the text. */
  Step add(int tokenId) {
    if (stopped) {
      throw new IllegalStateException("token added after a stop string ended the text");
    }
    int offset = text.length();
    append(decoder.push(tokenId));
    return new Step(takeDelta(stopped ? 0 : heldBack()), stopped, offset);
  }

  /** Ends the text: flushes incomplete bytes (as U+FFFD) and returns everything not yet emitted. */
  String finish() {
    if (!stopped) {
      append(decoder.finish());
    }
    return takeDelta(0);
  }

  private void append(String piece) {
    if (!piece.isEmpty()) {
      int searchFrom = Math.max(0, text.length() - longestStop + 1);
      text.append(piece);
      findStop(searchFrom);
    }
  }

  private void findStop(int searchFrom) {
    int cut = Integer.MAX_VALUE;
    for (String stop : stops) {
      int at = text.indexOf(stop, searchFrom);
      if (at >= 0) {
        cut = Math.min(cut, at);
      }
    }
    if (cut != Integer.MAX_VALUE) {
      text.setLength(cut);
      stopped = true;
    }
  }

  /** Length of the longest suffix of the text that is a proper prefix of some stop string. */
  private int heldBack() {
    int held = 0;
    for (String stop : stops) {
      for (int k = Math.min(stop.length() - 1, text.length()); k > held; k--) {
        if (text.substring(text.length() - k).equals(stop.substring(0, k))) {
          held = k;
          break;
        }
      }
    }
    return held;
  }

  private String takeDelta(int hold) {
    int end = Math.max(emitted, text.length() - hold);
    String delta = text.substring(emitted, end);
    emitted = end;
    return delta;
  }
}
