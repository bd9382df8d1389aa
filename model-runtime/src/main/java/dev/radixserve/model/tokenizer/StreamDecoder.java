package dev.radixserve.model.tokenizer;

import dev.radixserve.model.Tokenizer;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.util.Arrays;

/**
 * Turns a stream of token ids into text deltas for streaming responses. A token may end inside a
 * UTF-8 character (an emoji is often split over two or three tokens): those bytes are held back
 * until the character completes, so a delta never carries half a character. Malformed bytes become
 * U+FFFD as soon as they are known to be malformed.
 *
 * <p>Contract: the concatenation of every {@link #push} result and the final {@link #finish()}
 * equals {@code tokenizer.decode(allIds)}. Both decode through the same replacing UTF-8
 * {@link CharsetDecoder}, which guarantees that chunked and one-shot decoding agree.
 *
 * <p>One instance per sequence; not thread-safe.
 */
public final class StreamDecoder {

  private final Tokenizer tokenizer;
  private final CharsetDecoder decoder = Utf8.newDecoder();
  private byte[] pending = new byte[16]; // bytes not yet decoded: an incomplete character
  private int pendingLength;

  public StreamDecoder(Tokenizer tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** Adds one token; returns the text it completes (possibly empty, never null). */
  public String push(int tokenId) {
    byte[] bytes = tokenizer.tokenBytes(tokenId);
    if (pendingLength + bytes.length > pending.length) {
      pending = Arrays.copyOf(pending, Math.max(pending.length * 2, pendingLength + bytes.length));
    }
    System.arraycopy(bytes, 0, pending, pendingLength, bytes.length);
    pendingLength += bytes.length;
    return drain(false);
  }

  /** Adds several tokens; returns the text they complete. */
  public String push(int[] tokenIds) {
    StringBuilder sb = new StringBuilder();
    for (int id : tokenIds) {
      sb.append(push(id));
    }
    return sb.toString();
  }

  /**
   * Ends the stream: held-back bytes of an unfinished character become U+FFFD. The decoder is then
   * empty and may start a new stream.
   */
  public String finish() {
    String tail = drain(true);
    decoder.reset();
    return tail;
  }

  /** How many bytes are held back waiting for the rest of a character. */
  public int heldBackBytes() {
    return pendingLength;
  }

  private String drain(boolean endOfInput) {
    ByteBuffer in = ByteBuffer.wrap(pending, 0, pendingLength);
    // Each byte yields at most one char, except a 4-byte sequence that yields two: bytes + 1 suffices.
    CharBuffer out = CharBuffer.allocate(pendingLength + 1);
    CoderResult result = decoder.decode(in, out, endOfInput);
    if (endOfInput && result.isUnderflow()) {
      result = decoder.flush(out);
    }
    if (!result.isUnderflow()) {
      throw new IllegalStateException("UTF-8 decoding stopped with " + result + " on " + pendingLength + " bytes");
    }
    int left = in.remaining();
    System.arraycopy(pending, in.position(), pending, 0, left);
    pendingLength = left;
    out.flip();
    return out.toString();
  }
}
