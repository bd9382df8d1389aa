package dev.radixserve.server.http;

import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.StreamDecoder;

/**
 * Incremental detokenizer with stop strings for one choice, run on its connection's event loop
 * (never the engine thread).
 *
 * <p>Token bytes go through a {@link StreamDecoder}: only complete UTF-8 characters become text
 * (a character split across tokens waits for its last byte). Stop strings are matched
 * incrementally ({@link StopStrings}), so one spanning several tokens is found; the text is cut
 * where the stop string starts. Text that could be the beginning of a stop string is held back
 * from {@link Step#delta()} until it is known not to be one, so the streamed deltas never contain
 * any part of a stop string.
 */
final class ChoiceText {

  private final StreamDecoder decoder;
  private final StopStrings.Matcher stops;
  private final StringBuilder unsent = new StringBuilder(); // text not yet returned as a delta
  private int length; // chars of text so far, sent or not
  private boolean stopped;
  private final int minTokens;
  private int tokens;

  ChoiceText(Tokenizer tokenizer, StopStrings stops) {
    this(tokenizer, stops, 0);
  }

  /**
   * @param minTokens vLLM's {@code min_tokens}: stop strings are looked for only in the text of
   *     the tokens after the first {@code minTokens}
   */
  ChoiceText(Tokenizer tokenizer, StopStrings stops, int minTokens) {
    this.decoder = new StreamDecoder(tokenizer);
    this.stops = stops.matcher();
    this.minTokens = minTokens;
  }

  /** The result of adding one token. */
  record Step(String delta, boolean stopped, int tokenOffset) {}

  /** Chars of text so far (held-back text included). */
  int length() {
    return length;
  }

  /** Adds one token's bytes; reports newly final text and whether a stop string ended the text. */
  Step add(int tokenId) {
    if (stopped) {
      throw new IllegalStateException("token added after a stop string ended the text");
    }
    int offset = length;
    tokens++;
    append(decoder.push(tokenId));
    return new Step(takeDelta(stopped ? 0 : stops.partial()), stopped, offset);
  }

  /** Ends the text: flushes incomplete bytes (as U+FFFD) and returns everything not yet emitted. */
  String finish() {
    if (!stopped) {
      append(decoder.finish());
    }
    return takeDelta(0);
  }

  private void append(String piece) {
    if (piece.isEmpty()) {
      return;
    }
    int cut = tokens > minTokens ? stops.feed(piece, length) : -1;
    unsent.append(piece);
    length += piece.length();
    if (cut >= 0) {
      // held-back text covers every partial match, so a match never starts in text already sent
      unsent.setLength(unsent.length() - (length - cut));
      length = cut;
      stopped = true;
    }
  }

  private String takeDelta(int hold) {
    int send = Math.max(0, unsent.length() - hold);
    String delta = unsent.substring(0, send);
    unsent.delete(0, send);
    return delta;
  }
}
