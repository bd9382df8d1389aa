package dev.radixserve.model.tokenizer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file paths (vocab.json + merges.txt, tokenizer.json) against JTokkit's r50k_base: the files
 * are written from r50k's ranks (merges recovered the tiktoken-to-HF way), loaded back, and must
 * encode exactly as GPT-2 does.
 */
class TokenizerLoaderTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  static R50kVocabulary r50k;

  @TempDir Path dir;

  @BeforeAll
  static void loadRanks() {
    r50k = R50kVocabulary.load();
  }

  @Test
  void vocabAndMergesEncodeAsGpt2() throws IOException {
    writeVocabAndMerges(dir);
    BpeTokenizer t = TokenizerLoader.load(dir);
    assertMatchesGpt2(t);
  }

  @Test
  void tokenizerJsonWithStringMergesEncodesAsGpt2() throws IOException {
    writeTokenizerJson(dir, false);
    assertMatchesGpt2(TokenizerLoader.load(dir));
  }

  @Test
  void tokenizerJsonWithPairMergesEncodesAsGpt2() throws IOException {
    writeTokenizerJson(dir, true);
    assertMatchesGpt2(TokenizerLoader.load(dir));
  }

  @Test
  void emptyDirectoryGivesStandardVocabulary() {
    BpeTokenizer t = TokenizerLoader.load(dir);
    assertArrayEquals(new int[] {15496, 995}, t.encode("Hello world"));
  }

  @Test
  void vocabWithoutMergesIsAnError() throws IOException {
    writeVocabAndMerges(dir);
    Files.delete(dir.resolve("merges.txt"));
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertEquals(dir.resolve("merges.txt"), e.file());
    assertTrue(e.getMessage().startsWith("merges.txt: file is missing"), e.getMessage());
  }

  @Test
  void mergeOfUnknownTokenIsAnError() throws IOException {
    writeVocabAndMerges(dir);
    Files.writeString(dir.resolve("merges.txt"), "#version: 0.2\nĠ t\nqqqq zzzz\n");
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertTrue(e.getMessage().startsWith("merges.txt: merge 1 'qqqq zzzz' uses a token that is not in the vocabulary"),
        e.getMessage());
  }

  @Test
  void malformedMergeLineIsAnError() throws IOException {
    writeVocabAndMerges(dir);
    Files.writeString(dir.resolve("merges.txt"), "#version: 0.2\nĠt\n");
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertTrue(e.getMessage().startsWith("merges.txt: line 2 is not two tokens separated by a space: 'Ġt'"),
        e.getMessage());
  }

  @Test
  void invalidJsonIsAnError() throws IOException {
    Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": ");
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertTrue(e.getMessage().startsWith("tokenizer.json: is not valid JSON"), e.getMessage());
  }

  @Test
  void nonBpeModelIsAnError() throws IOException {
    Files.writeString(dir.resolve("tokenizer.json"), "{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}");
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertTrue(e.getMessage().startsWith("tokenizer.json: model type WordPiece is not supported (need BPE)"),
        e.getMessage());
  }

  @Test
  void vocabularyWithoutEndOfTextIsAnError() throws IOException {
    Files.writeString(dir.resolve("vocab.json"), "{\"a\": 0}");
    Files.writeString(dir.resolve("merges.txt"), "#version: 0.2\n");
    ModelLoadException e = assertThrows(ModelLoadException.class, () -> TokenizerLoader.load(dir));
    assertTrue(e.getMessage().startsWith("vocab.json: the vocabulary has no <|endoftext|> token"), e.getMessage());
  }

  private static void assertMatchesGpt2(BpeTokenizer t) {
    assertEquals(50257, t.vocabSize());
    assertEquals(50256, t.eosTokenId());
    assertArrayEquals(new int[] {15496, 995}, t.encode("Hello world"));
    for (String s : Gpt2Reference.TRICKY) {
      assertArrayEquals(Gpt2Reference.encode(s), t.encode(s), () -> "encoding of " + s);
      assertEquals(s, t.decode(t.encode(s)));
    }
    for (String s : Gpt2Reference.randomStrings(99, 200)) {
      assertArrayEquals(Gpt2Reference.encode(s), t.encode(s), () -> "encoding of " + s);
    }
  }

  /** GPT-2's own file format: byte-level spelled tokens, merges in rank order. */
  static void writeVocabAndMerges(Path dir) throws IOException {
    JSON.writeValue(dir.resolve("vocab.json").toFile(), vocabNode());
    List<String> lines = new ArrayList<>();
    lines.add("#version: 0.2");
    for (int[] m : r50k.merges()) {
      lines.add(spell(m[0]) + " " + spell(m[1]));
    }
    Files.write(dir.resolve("merges.txt"), lines, StandardCharsets.UTF_8);
  }

  static void writeTokenizerJson(Path dir, boolean pairMerges) throws IOException {
    ObjectNode root = JSON.createObjectNode();
    ArrayNode added = root.putArray("added_tokens");
    added.addObject().put("id", 50256).put("content", "<|endoftext|>").put("special", true);
    ObjectNode model = root.putObject("model");
    model.put("type", "BPE");
    model.set("vocab", vocabNode());
    ArrayNode merges = model.putArray("merges");
    for (int[] m : r50k.merges()) {
      if (pairMerges) {
        merges.addArray().add(spell(m[0])).add(spell(m[1]));
      } else {
        merges.add(spell(m[0]) + " " + spell(m[1]));
      }
    }
    JSON.writeValue(dir.resolve("tokenizer.json").toFile(), root);
  }

  private static ObjectNode vocabNode() {
    ObjectNode vocab = JSON.createObjectNode();
    for (int id = 0; id < R50kVocabulary.END_OF_TEXT_ID; id++) {
      vocab.put(spell(id), id);
    }
    vocab.put("<|endoftext|>", R50kVocabulary.END_OF_TEXT_ID);
    return vocab;
  }

  private static String spell(int id) {
    return ByteLevelAlphabet.encode(r50k.tokenBytes()[id]);
  }
}
