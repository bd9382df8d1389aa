package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * A SentencePiece vocabulary as llama.cpp's converter copies it into a GGUF file (pieces,
 * scores, types; {@code spm-vocab.gguf}), tokenized as llama.cpp's SPM tokenizer does, against
 * sentencepiece's own ids of the fixed texts (unicode, digits, whitespace runs, bytes by
 * fallback): the converter's source of the vocabulary ({@code make_fixtures.py}'s spm_vocab).
 */
class GgufSpmTokenizerTest {

  @Test
  void tokenizesAsSentencePiece() throws IOException {
    JsonNode expected = new ObjectMapper().readTree(
        GgufTestFiles.fixtures().resolve("spm-expected.json").toFile());
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("spm-vocab.gguf"), arena);
      GgufSpmTokenizer t = new GgufSpmTokenizer(f);
      int bos = expected.get("bos").asInt();
      for (JsonNode c : expected.get("texts")) {
        int[] ids = IntStream.range(0, c.get("ids").size()).map(i -> c.get("ids").get(i).asInt())
            .toArray();
        String text = c.get("text").asText();
        assertArrayEquals(ids, t.encodeTemplated(text), text);
        int[] withBos = IntStream.concat(IntStream.of(bos), IntStream.of(ids)).toArray();
        assertArrayEquals(withBos, t.encode(text), text);
        if (!text.isEmpty()) {
          // pieces back to the text, the dummy prefix's space first
          assertEquals(" " + text, t.decode(ids), text);
        }
      }
    }
  }

  /** Control tokens in the text are their ids (parse_special), and a space prefix follows them. */
  @Test
  void controlTokensInTheTextAreTheirIds() {
    try (Arena arena = Arena.ofConfined()) {
      GgufFile f = GgufFile.map(GgufTestFiles.fixtures().resolve("spm-vocab.gguf"), arena);
      GgufSpmTokenizer t = new GgufSpmTokenizer(f);
      int[] plain = t.encodeTemplated("Hello world");
      int[] marked = t.encodeTemplated("</s>Hello world<s>");
      int[] want = IntStream.concat(IntStream.concat(IntStream.of(2), IntStream.of(plain)),
          IntStream.of(1)).toArray();
      assertArrayEquals(want, marked);
    }
  }
}
