package dev.radixserve.model.tokenizer;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.weights.JsonFile;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds GPT-2 tokenizers from a Hugging Face model directory, or GPT-2's own vocabulary.
 * Every failure is a {@link ModelLoadException} naming the file.
 */
public final class TokenizerLoader {

  public static final String TOKENIZER_JSON = "tokenizer.json";
  public static final String TOKENIZER_CONFIG_JSON = "tokenizer_config.json";
  public static final String VOCAB_JSON = "vocab.json";
  public static final String MERGES_TXT = "merges.txt";

  private TokenizerLoader() {}

  /**
   * The tokenizer of a model directory: {@code tokenizer.json} if present, else
   * {@code vocab.json} + {@code merges.txt}, else (neither present) GPT-2's standard vocabulary.
   * One of vocab.json and merges.txt without the other is an error.
   */
  public static BpeTokenizer load(Path dir) {
    Path tokenizerJson = dir.resolve(TOKENIZER_JSON);
    Path vocab = dir.resolve(VOCAB_JSON);
    Path merges = dir.resolve(MERGES_TXT);
    if (Files.isRegularFile(tokenizerJson)) {
      return fromTokenizerJson(tokenizerJson);
    }
    boolean hasVocab = Files.isRegularFile(vocab);
    boolean hasMerges = Files.isRegularFile(merges);
    if (hasVocab && hasMerges) {
      return fromVocabAndMerges(vocab, merges);
    }
    if (hasVocab || hasMerges) {
      Path missing = hasVocab ? merges : vocab;
      throw new ModelLoadException(missing, "file is missing (" + (hasVocab ? VOCAB_JSON : MERGES_TXT)
          + " is present, and the two come together)");
    }
    return standard();
  }

  /** Which files {@link #load} reads in {@code dir}, in words (for summaries and messages). */
  public static String describe(Path dir) {
    if (Files.isRegularFile(dir.resolve(TOKENIZER_JSON))) {
      return TOKENIZER_JSON;
    }
    if (Files.isRegularFile(dir.resolve(VOCAB_JSON))) {
      return VOCAB_JSON + " + " + MERGES_TXT;
    }
    return "GPT-2's standard vocabulary (no tokenizer files)";
  }

  /** GPT-2's vocabulary (r50k_base), 50,257 tokens. Builds a fresh instance (about 0.1 s). */
  public static BpeTokenizer standard() {
    R50kVocabulary v = R50kVocabulary.load();
    return new BpeTokenizer(v.tokenBytes(), v.merges(),
        Map.of(BpeTokenizer.END_OF_TEXT, R50kVocabulary.END_OF_TEXT_ID));
  }

  /** GPT-2's original files: vocab.json (token → id) and merges.txt ("a b" per line). */
  public static BpeTokenizer fromVocabAndMerges(Path vocabJson, Path mergesTxt) {
    Map<String, Integer> vocab = vocabOf(JsonFile.read(vocabJson), vocabJson);
    List<String[]> pairs = new ArrayList<>();
    List<String> lines = readLines(mergesTxt);
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (line.isBlank() || (i == 0 && line.startsWith("#version"))) {
        continue;
      }
      String[] parts = line.split(" ");
      if (parts.length != 2 || parts[0].isEmpty() || parts[1].isEmpty()) {
        throw new ModelLoadException(mergesTxt, "line " + (i + 1) + " is not two tokens separated by a space: '" + line + "'");
      }
      pairs.add(parts);
    }
    Map<String, Integer> specials = new LinkedHashMap<>();
    if (vocab.containsKey(BpeTokenizer.END_OF_TEXT)) {
      specials.put(BpeTokenizer.END_OF_TEXT, vocab.get(BpeTokenizer.END_OF_TEXT));
    }
    return build(vocab, pairs, specials, mergesTxt, vocabJson);
  }

  /** Hugging Face's tokenizer.json: model.vocab, model.merges ("a b" or [a, b]), added_tokens. */
  public static BpeTokenizer fromTokenizerJson(Path file) {
    JsonNode root = JsonFile.read(file);
    JsonNode model = root.path("model");
    if (!model.isObject()) {
      throw new ModelLoadException(file, "has no \"model\" object");
    }
    String type = model.path("type").asText("BPE");
    if (!type.equals("BPE")) {
      throw new ModelLoadException(file, "model type " + type + " is not supported (need BPE)");
    }
    Map<String, Integer> vocab = vocabOf(model.path("vocab"), file);
    JsonNode mergesNode = model.path("merges");
    if (!mergesNode.isArray()) {
      throw new ModelLoadException(file, "model.merges is not an array");
    }
    List<String[]> pairs = new ArrayList<>();
    int index = 0;
    for (JsonNode m : mergesNode) {
      String[] pair;
      if (m.isTextual()) {
        pair = m.asText().split(" ");
      } else if (m.isArray() && m.size() == 2 && m.get(0).isTextual() && m.get(1).isTextual()) {
        pair = new String[] {m.get(0).asText(), m.get(1).asText()};
      } else {
        pair = new String[0];
      }
      if (pair.length != 2 || pair[0].isEmpty() || pair[1].isEmpty()) {
        throw new ModelLoadException(file, "model.merges[" + index + "] is not a pair of tokens: " + m);
      }
      pairs.add(pair);
      index++;
    }
    Map<String, Integer> specials = new LinkedHashMap<>();
    for (JsonNode added : root.path("added_tokens")) {
      if (!added.path("content").isTextual() || !added.path("id").canConvertToInt()) {
        throw new ModelLoadException(file, "added_tokens entry without content and id: " + added);
      }
      specials.put(added.get("content").asText(), added.get("id").asInt());
    }
    if (!specials.containsKey(BpeTokenizer.END_OF_TEXT) && vocab.containsKey(BpeTokenizer.END_OF_TEXT)) {
      specials.put(BpeTokenizer.END_OF_TEXT, vocab.get(BpeTokenizer.END_OF_TEXT));
    }
    return build(vocab, pairs, specials, file, file);
  }

  private static BpeTokenizer build(Map<String, Integer> vocab, List<String[]> pairs,
      Map<String, Integer> specials, Path mergesFile, Path vocabFile) {
    int size = 0;
    for (int id : vocab.values()) {
      size = Math.max(size, id + 1);
    }
    for (int id : specials.values()) {
      size = Math.max(size, id + 1);
    }
    byte[][] tokens = new byte[size][];
    for (Map.Entry<String, Integer> e : vocab.entrySet()) {
      String token = e.getKey();
      try {
        tokens[e.getValue()] = specials.containsKey(token)
            ? token.getBytes(StandardCharsets.UTF_8)
            : ByteLevelAlphabet.decode(token);
      } catch (IllegalArgumentException ex) {
        throw new ModelLoadException(vocabFile, ex.getMessage());
      }
    }
    for (Map.Entry<String, Integer> e : specials.entrySet()) {
      tokens[e.getValue()] = e.getKey().getBytes(StandardCharsets.UTF_8);
    }
    List<int[]> merges = new ArrayList<>(pairs.size());
    for (int rank = 0; rank < pairs.size(); rank++) {
      String[] pair = pairs.get(rank);
      Integer left = vocab.get(pair[0]);
      Integer right = vocab.get(pair[1]);
      if (left == null || right == null) {
        throw new ModelLoadException(mergesFile, "merge " + rank + " '" + pair[0] + " " + pair[1]
            + "' uses a token that is not in the vocabulary");
      }
      merges.add(new int[] {left, right});
    }
    if (!specials.containsKey(BpeTokenizer.END_OF_TEXT)) {
      throw new ModelLoadException(vocabFile, "the vocabulary has no " + BpeTokenizer.END_OF_TEXT + " token");
    }
    try {
      return new BpeTokenizer(tokens, merges, specials);
    } catch (IllegalArgumentException e) {
      throw new ModelLoadException(mergesFile, e.getMessage());
    }
  }

  private static Map<String, Integer> vocabOf(JsonNode node, Path file) {
    if (node == null || !node.isObject()) {
      throw new ModelLoadException(file, "vocabulary is not a JSON object of token to id");
    }
    Map<String, Integer> vocab = new HashMap<>(node.size() * 2);
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().canConvertToInt() || e.getValue().asInt() < 0) {
        throw new ModelLoadException(file, "token '" + e.getKey() + "' has id " + e.getValue() + ", expected an int >= 0");
      }
      vocab.put(e.getKey(), e.getValue().asInt());
    }
    return vocab;
  }

  private static List<String> readLines(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ModelLoadException(file, "cannot be read: " + e, e);
    }
  }
}
