package dev.radixserve.model.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Exact ids against Python's {@code tokenizers} on a fixed corpus (English, code, whitespace runs,
 * digits, CJK, emoji, special tokens inside text), for a Llama-3-style and a Qwen2-style
 * byte-level tokenizer and a SentencePiece-style one with byte fallback (Mistral, TinyLlama).
 * Fixtures and the script that made them: {@code src/test/resources/hf-tokenizers}.
 */
class HfTokenizerTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  static Path fixture(String name) {
    try {
      return Path.of(HfTokenizerTest.class.getResource("/hf-tokenizers/" + name + "/tokenizer.json")
          .toURI()).getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama3", "qwen2", "sentencepiece"})
  void idsAndTextEqualHuggingFaces(String name) throws IOException {
    Path dir = fixture(name);
    JsonNode expected = JSON.readTree(Files.readString(dir.resolve("expected.json")));
    try (HfTokenizer t = HfTokenizer.load(dir)) {
      for (JsonNode line : expected) {
        String text = line.get("text").asText();
        int[] plain = ints(line.get("ids_no_specials"));
        assertArrayEquals(ints(line.get("ids")), t.encode(text), name + ": " + text);
        assertArrayEquals(plain, t.encodeTemplated(text), name + ": " + text);
        assertEquals(line.get("decoded").asText(), t.decode(plain), name + ": " + text);
        // streaming: the tokens' bytes spell the text (SentencePiece: after its prepended ▁)
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        for (int id : plain) {
          bytes.writeBytes(t.tokenBytes(id));
        }
        String streamed = bytes.toString(StandardCharsets.UTF_8);
        if (name.equals("sentencepiece")) {
          // Prepend("▁") runs on each piece between special tokens: check plain text only
          if (!text.contains("</s>") && !text.contains("<s>")) {
            assertEquals(text.isEmpty() ? "" : " " + text, streamed, name + ": " + text);
          }
        } else {
          assertEquals(text, streamed, name + ": " + text);
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama3", "sentencepiece"})
  void aLongTextIsNeverTruncated(String name) {
    try (HfTokenizer t = HfTokenizer.load(fixture(name))) {
      String text = "The quick brown fox jumps over the lazy dog. ".repeat(400);
      int[] ids = t.encodeTemplated(text);
      assertTrue(ids.length > 1000, ids.length + " tokens"); // DJL's default would cut at 512
      assertEquals(text, t.decode(ids));
    }
  }

  private static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  @org.junit.jupiter.api.Test
  void addedSpecialTokensAreSpecialAndVocabularyTokensAreNot() {
    try (HfTokenizer t = HfTokenizer.load(fixture("llama3"))) {
      for (int id = 529; id <= 533; id++) { // <|begin_of_text|> .. <|eot_id|>, special: true
        assertTrue(t.isSpecial(id), "id " + id);
      }
      assertTrue(t.isSpecial(-1) && t.isSpecial(t.vocabSize()));
      for (int id = 0; id < 529; id++) {
        assertEquals(false, t.isSpecial(id), "id " + id);
      }
    }
  }
}
