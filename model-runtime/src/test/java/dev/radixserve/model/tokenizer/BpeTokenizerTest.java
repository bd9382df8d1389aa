package dev.radixserve.model.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The standard GPT-2 tokenizer against JTokkit's r50k_base and ids known from GPT-2. */
class BpeTokenizerTest {

  static BpeTokenizer tokenizer;

  @BeforeAll
  static void load() {
    tokenizer = TokenizerLoader.standard();
  }

  @Test
  void knownIds() {
    assertArrayEquals(new int[] {15496, 995}, tokenizer.encode("Hello world"));
    assertArrayEquals(new int[] {50256}, tokenizer.encode("<|endoftext|>"));
    assertArrayEquals(new int[] {220}, tokenizer.encode(" "));
    assertArrayEquals(new int[] {198}, tokenizer.encode("\n"));
    assertEquals(50256, tokenizer.eosTokenId());
    assertEquals(50257, tokenizer.vocabSize());
  }

  @Test
  void trickyStringsMatchGpt2() {
    for (String s : Gpt2Reference.TRICKY) {
      assertArrayEquals(Gpt2Reference.encode(s), tokenizer.encode(s), () -> "encoding of " + s);
    }
  }

  @Test
  void randomStringsMatchGpt2() {
    for (String s : Gpt2Reference.randomStrings(42, 500)) {
      assertArrayEquals(Gpt2Reference.encode(s), tokenizer.encode(s), () -> "encoding of " + s);
    }
  }

  @Test
  void decodeInvertsEncode() {
    for (String s : Gpt2Reference.TRICKY) {
      assertEquals(s, tokenizer.decode(tokenizer.encode(s)));
    }
    for (String s : Gpt2Reference.randomStrings(7, 200)) {
      assertEquals(s, tokenizer.decode(tokenizer.encode(s)));
    }
  }

  @Test
  void encodeOrdinarySpellsSpecialTokenAsText() {
    int[] ids = tokenizer.encodeOrdinary("<|endoftext|>");
    assertArrayEquals(Gpt2Reference.R50K.encodeOrdinary("<|endoftext|>").toArray(), ids);
    assertEquals("<|endoftext|>", tokenizer.decode(ids));
  }

  @Test
  void tokenBytesAreRawBytes() {
    // 😀 is F0 9F 98 80; GPT-2 splits it over byte tokens that are not valid UTF-8 alone.
    int[] ids = tokenizer.encode("😀");
    byte[] joined = tokenizer.bytesOf(ids);
    assertArrayEquals("😀".getBytes(StandardCharsets.UTF_8), joined);
    assertEquals(2, ids.length);
    assertArrayEquals(new byte[] {(byte) 0xF0, (byte) 0x9F, (byte) 0x98}, tokenizer.tokenBytes(ids[0]));
    assertArrayEquals(new byte[] {(byte) 0x80}, tokenizer.tokenBytes(ids[1]));
    assertArrayEquals(Gpt2Reference.encode("😀"), ids);
    assertArrayEquals(" world".getBytes(StandardCharsets.UTF_8), tokenizer.tokenBytes(995));
  }

  @Test
  void invalidUtf8DecodesToReplacementCharacter() {
    int f0 = idOfBytes(new byte[] {(byte) 0xF0});
    assertEquals("\uFFFD", tokenizer.decode(new int[] {f0}));
    assertEquals("a\uFFFDb", tokenizer.decode(concat(tokenizer.encode("a"), new int[] {f0}, tokenizer.encode("b"))));
  }

  @Test
  void unknownIdIsRejected() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> tokenizer.decode(new int[] {50257}));
    assertEquals("token id 50257 is not in the vocabulary of 50257", e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> tokenizer.tokenBytes(-1));
  }

  @Test
  void longWordWithoutSpacesIsEncodedExactly() {
    String s = "x".repeat(5000) + "yz".repeat(3000);
    assertArrayEquals(Gpt2Reference.encode(s), tokenizer.encode(s));
  }

  static int idOfBytes(byte[] bytes) {
    return idOfBytes(tokenizer, bytes);
  }

  static int idOfBytes(BpeTokenizer tokenizer, byte[] bytes) {
    for (int id = 0; id < tokenizer.vocabSize(); id++) {
      if (java.util.Arrays.equals(tokenizer.tokenBytes(id), bytes)) {
        return id;
      }
    }
    throw new AssertionError("no token with these bytes");
  }
  @Test
  void encodeAtMostIsEncodeWithinTheLimitAndEmptyBeyondIt() {
    for (String s : Gpt2Reference.randomStrings(7, 200)) {
      int[] ids = tokenizer.encode(s);
      assertArrayEquals(ids, tokenizer.encodeAtMost(s, ids.length).orElseThrow(), s);
      if (ids.length > 0) {
        assertEquals(java.util.Optional.empty(), tokenizer.encodeAtMost(s, ids.length - 1), s);
      }
    }
    String special = "a<|endoftext|>b";
    assertArrayEquals(tokenizer.encode(special), tokenizer.encodeAtMost(special, 3).orElseThrow());
    assertEquals(java.util.Optional.empty(), tokenizer.encodeAtMost(special, 2));
  }

  @Test
  void aHugeTextOverTheLimitIsRefusedWithoutEncodingIt() {
    // one 8 MB pre-token: merging it would take a heap of millions of entries
    String huge = "a".repeat(8 << 20);
    assertEquals(java.util.Optional.empty(), tokenizer.encodeAtMost(huge, 1024));
    assertEquals(java.util.Optional.empty(), tokenizer.encodeAtMost("word ".repeat(1 << 20), 1024));
  }

  static int[] concat(int[]... parts) {
    return java.util.Arrays.stream(parts).flatMapToInt(java.util.Arrays::stream).toArray();
  }
}
