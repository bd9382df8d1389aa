package dev.radixserve.model.tokenizer;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.weights.JsonFile;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A model's {@code tokenizer.json} run by Hugging Face's own Rust {@code tokenizers} (through
 * DJL's {@code ai.djl.huggingface:tokenizers}, whose jar carries the native library for linux
 * x86-64 and aarch64): normalizers, pre-tokenizer regexes, byte-level or SentencePiece-style BPE
 * with byte fallback, added and special tokens all behave as in Python, because they are the same
 * code. What Java adds: each token's bytes for streaming ({@link #tokenBytes}, from the vocabulary
 * and the decoder's kind), and {@code tokenizer_config.json}'s {@code add_bos_token} /
 * {@code add_eos_token} where transformers honours them (the Llama tokenizer classes).
 */
public final class HfTokenizer implements Tokenizer, AutoCloseable {

  /** transformers' classes that rebuild the post-processor from add_bos_token / add_eos_token. */
  private static final Set<String> LLAMA_CLASSES = Set.of("LlamaTokenizer", "LlamaTokenizerFast",
      "CodeLlamaTokenizer", "CodeLlamaTokenizerFast", "GemmaTokenizer", "GemmaTokenizerFast");
  private static final Pattern BYTE_TOKEN = Pattern.compile("<0x([0-9A-Fa-f]{2})>");

  private final HuggingFaceTokenizer native_;
  private final byte[][] tokenBytes;
  private final Optional<Integer> eos;
  /** Ids to put around a plain encoding, when transformers overrides tokenizer.json's template. */
  private final Optional<int[][]> bosEos;
  /** Added tokens marked special in tokenizer.json: no text (structured outputs skip them). */
  private final java.util.BitSet special;

  private HfTokenizer(HuggingFaceTokenizer tokenizer, byte[][] tokenBytes, Optional<Integer> eos,
      Optional<int[][]> bosEos, java.util.BitSet special) {
    this.native_ = tokenizer;
    this.tokenBytes = tokenBytes;
    this.eos = eos;
    this.bosEos = bosEos;
    this.special = special;
  }

  /** The tokenizer of {@code dir}: its tokenizer.json, and tokenizer_config.json if present. */
  public static HfTokenizer load(Path dir) {
    Path file = dir.resolve(TokenizerLoader.TOKENIZER_JSON);
    JsonNode root = JsonFile.readObject(file);
    Path configFile = dir.resolve(TokenizerLoader.TOKENIZER_CONFIG_JSON);
    JsonNode config = Files.isRegularFile(configFile)
        ? JsonFile.readObject(configFile) : JsonFile.emptyObject();
    Map<String, Integer> ids = new java.util.HashMap<>();
    byte[][] bytes = tokenBytes(root, file, ids);
    Optional<Integer> eos = specialId(config, "eos_token", ids)
        .or(() -> firstPresent(ids, "</s>", "<|end_of_text|>", "<|endoftext|>", "<|im_end|>"));
    Optional<int[][]> bosEos = Optional.empty();
    if (LLAMA_CLASSES.contains(config.path("tokenizer_class").asText())) {
      boolean addBos = config.path("add_bos_token").asBoolean(true);
      boolean addEos = config.path("add_eos_token").asBoolean(false);
      int[] before = addBos ? required(specialId(config, "bos_token", ids), configFile, "bos_token") : new int[0];
      int[] after = addEos ? required(eos, configFile, "eos_token") : new int[0];
      bosEos = Optional.of(new int[][] {before, after});
    }
    try {
      HuggingFaceTokenizer t = HuggingFaceTokenizer.newInstance(file,
          Map.of("addSpecialTokens", "true", "truncation", "false", "padding", "false"));
      java.util.BitSet special = new java.util.BitSet();
      for (JsonNode a : root.path("added_tokens")) {
        if (a.path("special").asBoolean(false)) {
          special.set(a.path("id").asInt());
        }
      }
      eos.ifPresent(special::set);
      return new HfTokenizer(t, bytes, eos, bosEos, special);
    } catch (IOException | RuntimeException e) {
      throw new ModelLoadException(file, "Hugging Face tokenizers cannot load it: " + e.getMessage(), e);
    }
  }

  private static int[] required(Optional<Integer> id, Path file, String key) {
    return new int[] {id.orElseThrow(() -> new ModelLoadException(file, key
        + " is missing or not a token of tokenizer.json, and the tokenizer adds it"))};
  }

  /** {@code "<s>"} or {@code {"content": "<s>", ...}}, looked up among the tokens. */
  private static Optional<Integer> specialId(JsonNode config, String key, Map<String, Integer> ids) {
    JsonNode v = config.path(key);
    String content = v.isTextual() ? v.asText() : v.path("content").asText(null);
    return content == null ? Optional.empty() : Optional.ofNullable(ids.get(content));
  }

  private static Optional<Integer> firstPresent(Map<String, Integer> ids, String... tokens) {
    for (String t : tokens) {
      if (ids.containsKey(t)) {
        return Optional.of(ids.get(t));
      }
    }
    return Optional.empty();
  }

  /**
   * Each id's bytes: an added token's content as UTF-8; a vocabulary token through the decoder's
   * kind: byte-level (GPT-2's byte-to-unicode map), or SentencePiece-style ({@code ▁} is a space,
   * {@code <0xNN>} is one byte when the model falls back to bytes).
   */
  private static byte[][] tokenBytes(JsonNode root, Path file, Map<String, Integer> ids) {
    JsonNode vocab = root.path("model").path("vocab");
    if (!vocab.isObject()) {
      throw new ModelLoadException(file, "model.vocab is not an object of token to id (model type "
          + root.path("model").path("type").asText("?") + ")");
    }
    String decoder = root.path("decoder").toString();
    boolean byteLevel = decoder.contains("\"ByteLevel\"");
    boolean byteFallback = root.path("model").path("byte_fallback").asBoolean(false);
    List<String> byId = new ArrayList<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = vocab.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      put(byId, e.getValue().asInt(), e.getKey());
      ids.put(e.getKey(), e.getValue().asInt());
    }
    Set<Integer> added = new java.util.HashSet<>();
    for (JsonNode a : root.path("added_tokens")) {
      put(byId, a.path("id").asInt(), a.path("content").asText());
      ids.put(a.path("content").asText(), a.path("id").asInt());
      added.add(a.path("id").asInt());
    }
    byte[][] out = new byte[byId.size()][];
    for (int id = 0; id < out.length; id++) {
      String token = byId.get(id);
      if (token == null) {
        throw new ModelLoadException(file, "no token has id " + id + " (ids must be dense)");
      }
      Matcher m = BYTE_TOKEN.matcher(token);
      if (added.contains(id)) {
        out[id] = token.getBytes(StandardCharsets.UTF_8);
      } else if (byteLevel) {
        out[id] = ByteLevelAlphabet.decode(token);
      } else if (byteFallback && m.matches()) {
        out[id] = new byte[] {(byte) Integer.parseInt(m.group(1), 16)};
      } else {
        out[id] = token.replace('▁', ' ').getBytes(StandardCharsets.UTF_8);
      }
    }
    return out;
  }

  private static void put(List<String> byId, int id, String token) {
    while (byId.size() <= id) {
      byId.add(null);
    }
    byId.set(id, token);
  }

  /** As Hugging Face's {@code encode(text)}: the model's special tokens (BOS) added. */
  @Override
  public int[] encode(String text) {
    if (bosEos.isEmpty()) {
      return toInts(native_.encode(text, true, false).getIds());
    }
    int[] plain = encodeTemplated(text);
    int[] before = bosEos.get()[0];
    int[] after = bosEos.get()[1];
    int[] out = new int[before.length + plain.length + after.length];
    System.arraycopy(before, 0, out, 0, before.length);
    System.arraycopy(plain, 0, out, before.length, plain.length);
    System.arraycopy(after, 0, out, before.length + plain.length, after.length);
    return out;
  }

  /** No special tokens added: a rendered chat template already holds them. */
  @Override
  public int[] encodeTemplated(String text) {
    return toInts(native_.encode(text, false, false).getIds());
  }

  @Override
  public Optional<int[]> encodeTemplatedAtMost(String text, int maxTokens) {
    int[] ids = encodeTemplated(text);
    return ids.length <= maxTokens ? Optional.of(ids) : Optional.empty();
  }

  private static int[] toInts(long[] ids) {
    int[] out = new int[ids.length];
    for (int i = 0; i < ids.length; i++) {
      out[i] = Math.toIntExact(ids[i]);
    }
    return out;
  }

  /** As Hugging Face's {@code decode(ids)}, special tokens kept. */
  @Override
  public String decode(int[] ids) {
    long[] l = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      l[i] = ids[i];
    }
    return native_.decode(l, false);
  }

  @Override
  public boolean isSpecial(int id) {
    return id < 0 || id >= tokenBytes.length || special.get(id);
  }

  @Override
  public byte[] tokenBytes(int id) {
    return tokenBytes[id].clone();
  }

  @Override
  public int eosTokenId() {
    return eos.orElseThrow(() -> new IllegalStateException(
        "the tokenizer names no eos_token (tokenizer_config.json) and has no </s> or <|end_of_text|>"));
  }

  @Override
  public int vocabSize() {
    return tokenBytes.length;
  }

  @Override
  public void close() {
    native_.close();
  }
}
