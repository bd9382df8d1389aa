package dev.radixserve.model.gguf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.Tokenizer;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real hub tokenizers, read from the GGUF vocabularies llama.cpp's converter wrote of them, against
 * the ids transformers' own tokenizers give for llama.cpp's tokenizer test texts (unicode, digits,
 * whitespace runs, contractions, code, emoji; {@code hub-vocab/copy_hub_vocabs.sh} says where each
 * file comes from). The tiny trained vocabularies of the other fixtures hold the rules; these hold
 * them at full size, where merges and pieces the small ones never learn decide the ids.
 */
class GgufHubVocabTest {

  private static final String SEPARATOR = "\n__ggml_vocab_test__\n";

  @ParameterizedTest
  @ValueSource(strings = {"llama-bpe", "qwen2", "gpt-2", "phi-3", "llama-spm"})
  void idsAreTransformersOwn(String name) throws IOException {
    Path file = GgufTestFiles.fixtures().resolve("hub-vocab/ggml-vocab-" + name + ".gguf");
    List<String> texts = texts(file);
    List<String> expected = Files.readAllLines(Path.of(file + ".out"), StandardCharsets.UTF_8);
    assertEquals(texts.size(), expected.size(), "one line of ids per text");
    assertTrue(texts.size() >= 40, texts.size() + " texts");
    try (Arena arena = Arena.ofConfined()) {
      Tokenizer tokenizer = GgufTokenizer.load(GgufFile.map(file, arena)).tokenizer();
      boolean sentencePiece = name.endsWith("spm") || name.equals("phi-3");
      for (int i = 0; i < texts.size(); i++) {
        String text = texts.get(i);
        int[] want = ids(expected.get(i));
        assertArrayEquals(want, tokenizer.encodeTemplated(text), name + ": " + text);
        if (!text.isEmpty()) {
          // byte-level BPE and SentencePiece with byte fallback both give the text back (the
          // latter after the space its dummy prefix put first)
          assertEquals(sentencePiece ? " " + text : text, tokenizer.decode(want), name + ": " + text);
        }
      }
    }
  }

  /** The texts of {@code FILE.inp}: each one followed by the separator, as llama.cpp writes them. */
  private static List<String> texts(Path file) throws IOException {
    String all = Files.readString(Path.of(file + ".inp"), StandardCharsets.UTF_8);
    assertTrue(all.endsWith(SEPARATOR));
    return List.of(all.substring(0, all.length() - SEPARATOR.length()).split(SEPARATOR, -1));
  }

  /** A line of {@code .out}: " id id ...", empty for a text of no tokens. */
  private static int[] ids(String line) {
    String trimmed = line.strip();
    return trimmed.isEmpty() ? new int[0]
        : Arrays.stream(trimmed.split(" ")).mapToInt(Integer::parseInt).toArray();
  }
}
