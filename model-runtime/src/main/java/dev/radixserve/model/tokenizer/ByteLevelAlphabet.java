package dev.radixserve.model.tokenizer;

import java.io.ByteArrayOutputStream;

/**
 * GPT-2's reversible byte-to-character mapping ({@code bytes_to_unicode} in its encoder.py).
 * vocab.json, merges.txt and tokenizer.json spell tokens with one printable character per byte:
 * printable Latin-1 bytes map to themselves, the other 68 to U+0100.. in byte order.
 */
public final class ByteLevelAlphabet {

  private static final char[] BYTE_TO_CHAR = new char[256];
  private static final int[] CHAR_TO_BYTE = new int[0x200];

  static {
    java.util.Arrays.fill(CHAR_TO_BYTE, -1);
    int extra = 0;
    for (int b = 0; b < 256; b++) {
      boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char c = printable ? (char) b : (char) (256 + extra++);
      BYTE_TO_CHAR[b] = c;
      CHAR_TO_BYTE[c] = b;
    }
  }

  private ByteLevelAlphabet() {}

  /** The byte-level spelling of {@code bytes} (as vocab.json and merges.txt write tokens). */
  public static String encode(byte[] bytes) {
    StringBuilder sb = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      sb.append(BYTE_TO_CHAR[b & 0xff]);
    }
    return sb.toString();
  }

  /** Bytes a byte-level token string spells; IllegalArgumentException for a foreign character. */
  static byte[] decode(String token) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(token.length());
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -2;
      if (b < 0) {
        throw new IllegalArgumentException(
            "token " + token + " has character U+" + Integer.toHexString(c).toUpperCase()
                + " outside the byte-level alphabet");
      }
      out.write(b);
    }
    return out.toByteArray();
  }
}
