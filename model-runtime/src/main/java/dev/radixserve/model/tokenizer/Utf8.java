package dev.radixserve.model.tokenizer;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * UTF-8 decoding with U+FFFD for malformed input. {@link BpeTokenizer#decode} and
 * {@link StreamDecoder} both decode through a {@link CharsetDecoder} configured here, so
 * streaming deltas concatenate to exactly what a one-shot decode gives.
 */
final class Utf8 {

  private Utf8() {}

  static CharsetDecoder newDecoder() {
    return StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPLACE)
        .onUnmappableCharacter(CodingErrorAction.REPLACE);
  }

  static String decode(byte[] bytes) {
    try {
      CharBuffer chars = newDecoder().decode(ByteBuffer.wrap(bytes));
      return chars.toString();
    } catch (CharacterCodingException e) {
      throw new IllegalStateException("a replacing decoder threw " + e, e);
    }
  }
}
