package dev.radixserve.model.tokenizer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class StreamDecoderTest {

  static BpeTokenizer tokenizer;

  @BeforeAll
  static void load() {
    tokenizer = TokenizerLoader.standard();
  }

  @Test
  void emojiSplitOverTokensIsHeldBackUntilComplete() {
    int[] ids = tokenizer.encode("😀");
    StreamDecoder d = new StreamDecoder(tokenizer);
    assertEquals("", d.push(ids[0]));
    assertEquals(3, d.heldBackBytes());
    assertEquals("😀", d.push(ids[1]));
    assertEquals(0, d.heldBackBytes());
    assertEquals("", d.finish());
  }

  @Test
  void unfinishedCharacterAtEndBecomesReplacement() {
    int[] ids = tokenizer.encode("a😀");
    StreamDecoder d = new StreamDecoder(tokenizer);
    assertEquals("a", d.push(ids[0]));
    assertEquals("", d.push(ids[1]));
    assertEquals("\uFFFD", d.finish());
    assertEquals("a\uFFFD", tokenizer.decode(new int[] {ids[0], ids[1]}));
  }

  @Test
  void malformedBytesAreReplacedAsSoonAsKnown() {
    int lone80 = BpeTokenizerTest.idOfBytes(tokenizer, new byte[] {(byte) 0x80});
    StreamDecoder d = new StreamDecoder(tokenizer);
    assertEquals("\uFFFD", d.push(lone80)); // a continuation byte can start nothing
    assertEquals(0, d.heldBackBytes());
  }

  @Test
  void textOfTrickyStringsStreamsExactly() {
    for (String s : Gpt2Reference.TRICKY) {
      StreamDecoder d = new StreamDecoder(tokenizer);
      StringBuilder sb = new StringBuilder();
      for (int id : tokenizer.encode(s)) {
        sb.append(d.push(id));
      }
      sb.append(d.finish());
      assertEquals(s, sb.toString());
    }
  }

  /**
   * Random id sequences biased towards byte tokens and multi-byte pieces, so characters are split
   * across tokens and invalid sequences are common: deltas concatenate to decode(all), and no
   * delta ends inside a surrogate pair.
   */
  @Test
  void deltasConcatenateToDecodeOfAllIds() {
    SplittableRandom random = new SplittableRandom(2024);
    List<Integer> pool = new ArrayList<>();
    for (int b = 0; b < 256; b++) {
      pool.add(BpeTokenizerTest.idOfBytes(tokenizer, new byte[] {(byte) b}));
    }
    for (String s : List.of("😀", "👨‍👩‍👧", "日本語", "é", "€", "Hello", " world", "\n")) {
      for (int id : tokenizer.encode(s)) {
        pool.add(id);
      }
    }
    for (int trial = 0; trial < 2000; trial++) {
      int n = random.nextInt(1, 25);
      int[] ids = new int[n];
      for (int i = 0; i < n; i++) {
        ids[i] = random.nextInt(4) == 0 ? random.nextInt(50257) : pool.get(random.nextInt(pool.size()));
      }
      StreamDecoder d = new StreamDecoder(tokenizer);
      StringBuilder sb = new StringBuilder();
      for (int id : ids) {
        String delta = d.push(id);
        if (!delta.isEmpty()) {
          assertFalse(Character.isHighSurrogate(delta.charAt(delta.length() - 1)), "delta ends mid-pair");
          assertFalse(Character.isLowSurrogate(delta.charAt(0)), "delta starts mid-pair");
        }
        sb.append(delta);
      }
      sb.append(d.finish());
      assertEquals(tokenizer.decode(ids), sb.toString(), () -> "ids " + java.util.Arrays.toString(ids));
    }
  }
}
