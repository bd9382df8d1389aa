package dev.radixserve.model.gguf;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.tokenizer.HfTokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * A GGUF file's tokenizer as llama.cpp's {@code llama_vocab} reads it, built as the {@code
 * tokenizer.json} that says the same and run by Hugging Face's tokenizers ({@link HfTokenizer}):
 * {@code tokenizer.ggml.model gpt2} is byte-level BPE over {@code tokens} and {@code merges},
 * pre-tokenized by the regex of {@code tokenizer.ggml.pre} ({@link #PRE}); control and
 * user-defined tokens ({@code token_type} 3 and 4) are added tokens, matched in the text before
 * BPE (control ones special); BOS (EOS) is put before (after) a text under {@code add_bos_token}
 * ({@code add_eos_token}), whose defaults are llama.cpp's per pre-tokenizer. SentencePiece
 * vocabularies ({@code tokenizer.ggml.model llama}) are tokenized as llama.cpp does ({@link
 * GgufSpmTokenizer}).
 */
final class GgufTokenizer {

  /**
   * A BPE pre-tokenizer of llama.cpp's {@code llama_vocab::impl::load} / {@code
   * llm_tokenizer_bpe}: the regex as the family's tokenizer.json spells it (llama.cpp's own is
   * the same pattern without {@code (?i:)}), whether merges are skipped for whole-vocabulary
   * words, and add_bos_token's default.
   *
   * @param regex null: GPT-2's ByteLevel pre-tokenizer with its built-in regex
   * @param digits each digit split off first (llama.cpp's {@code \p{N}} expression before the
   *     regex; Hugging Face's {@code Digits} with {@code individual_digits})
   */
  record Pre(String regex, boolean ignoreMerges, boolean addBos, boolean digits) {

    Pre(String regex, boolean ignoreMerges, boolean addBos) {
      this(regex, ignoreMerges, addBos, false);
    }
  }

  static final String LLAMA3_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
      + "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  static final String QWEN2_REGEX = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+"
      + "|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

  /**
   * o200k's (GPT-4o's, Phi-4-mini's) as its tokenizer.json spells it: llama.cpp's {@code
   * LLAMA_VOCAB_PRE_TYPE_GPT4O} keeps it as "the original regex from tokenizer.json" and runs an
   * adaptation for its own regex engine.
   */
  static final String GPT4O_REGEX = "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}"
      + "\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}"
      + "\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s"
      + "|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+"
      + "|\\s+(?!\\S)|\\s+";

  /** tokenizer.ggml.pre → its pre-tokenizer (llama.cpp's names). */
  static final Map<String, Pre> PRE = Map.of(
      "llama-bpe", new Pre(LLAMA3_REGEX, true, true),
      "llama3", new Pre(LLAMA3_REGEX, true, true),
      "llama-v3", new Pre(LLAMA3_REGEX, true, true),
      "qwen2", new Pre(QWEN2_REGEX, false, false),
      "deepseek-r1-qwen", new Pre(QWEN2_REGEX, false, false),
      "gpt-2", new Pre(null, false, false),
      // SmolLM / SmolLM2: digits one by one, then GPT-2's
      "smollm", new Pre(null, false, false, true),
      "gpt-4o", new Pre(GPT4O_REGEX, false, false));

  static final int CONTROL = 3;
  static final int USER_DEFINED = 4;

  /**
   * The texts llama.cpp's vocabulary loader takes for end-of-generation tokens whatever the
   * metadata says ({@code special_eog_ids}, by text).
   */
  static final Set<String> EOG_TEXTS = Set.of("<|eot_id|>", "<|im_end|>", "<|end|>",
      "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>", "<|end_of_text|>",
      "<end_of_utterance>");

  private static final ObjectMapper JSON = new ObjectMapper();

  private GgufTokenizer() {}

  /** The tokenizer.json text the file's vocabulary is served as. */
  static String tokenizerJson(GgufFile f) {
    String model = string(f, GgufKeys.TOKENIZER_MODEL);
    if (!model.equals("gpt2")) {
      throw new ModelLoadException(f.primary(), GgufKeys.TOKENIZER_MODEL + " " + model
          + " is not served from the file (gpt2: byte-level BPE; llama: SentencePiece BPE); put"
          + " the model's tokenizer.json beside it");
    }
    Object preName = f.get(GgufKeys.TOKENIZER_PRE);
    Pre pre = PRE.get(preName == null ? "" : preName.toString());
    if (pre == null) {
      throw new ModelLoadException(f.primary(), GgufKeys.TOKENIZER_PRE + " " + preName
          + " is not served (" + String.join(", ", new java.util.TreeSet<>(PRE.keySet()))
          + "); put the model's tokenizer.json beside the file");
    }
    List<?> tokens = list(f, GgufKeys.TOKENS);
    List<?> types = f.get(GgufKeys.TOKEN_TYPE) == null ? null : list(f, GgufKeys.TOKEN_TYPE);
    List<?> merges = list(f, GgufKeys.MERGES);
    if (types != null && types.size() != tokens.size()) {
      throw new ModelLoadException(f.primary(), GgufKeys.TOKEN_TYPE + " has " + types.size()
          + " entries for " + tokens.size() + " tokens");
    }
    ObjectNode root = JSON.createObjectNode();
    root.put("version", "1.0");
    root.putNull("truncation");
    root.putNull("padding");
    ArrayNode added = root.putArray("added_tokens");
    java.util.function.Predicate<String> rstripped = rstrip(f);
    ObjectNode vocab = JSON.createObjectNode();
    for (int id = 0; id < tokens.size(); id++) {
      String text = tokens.get(id).toString();
      int type = types == null ? 1 : ((Number) types.get(id)).intValue();
      if (!vocab.has(text)) {
        vocab.put(text, id);
      }
      if (type == CONTROL || type == USER_DEFINED) {
        ObjectNode a = added.addObject();
        a.put("id", id);
        a.put("content", text);
        a.put("single_word", false);
        a.put("lstrip", false);
        a.put("rstrip", rstripped.test(text));
        a.put("normalized", false);
        a.put("special", type == CONTROL);
      }
    }
    root.putNull("normalizer");
    ObjectNode byteLevel = JSON.createObjectNode();
    byteLevel.put("type", "ByteLevel");
    byteLevel.put("add_prefix_space", false);
    byteLevel.put("trim_offsets", true);
    byteLevel.put("use_regex", pre.regex() == null);
    if (pre.regex() == null && !pre.digits()) {
      root.set("pre_tokenizer", byteLevel);
    } else {
      ObjectNode seq = root.putObject("pre_tokenizer");
      seq.put("type", "Sequence");
      ArrayNode list = seq.putArray("pretokenizers");
      if (pre.digits()) {
        list.addObject().put("type", "Digits").put("individual_digits", true);
      }
      if (pre.regex() != null) {
        ObjectNode split = list.addObject();
        split.put("type", "Split");
        split.putObject("pattern").put("Regex", pre.regex());
        split.put("behavior", "Isolated");
        split.put("invert", false);
      }
      list.add(byteLevel);
    }
    root.set("post_processor", postProcessor(f, pre, tokens));
    ObjectNode decoder = root.putObject("decoder");
    decoder.put("type", "ByteLevel");
    decoder.put("add_prefix_space", true);
    decoder.put("trim_offsets", true);
    decoder.put("use_regex", true);
    ObjectNode bpe = root.putObject("model");
    bpe.put("type", "BPE");
    bpe.putNull("dropout");
    bpe.putNull("unk_token");
    bpe.putNull("continuing_subword_prefix");
    bpe.putNull("end_of_word_suffix");
    bpe.put("fuse_unk", false);
    bpe.put("byte_fallback", false);
    bpe.put("ignore_merges", pre.ignoreMerges());
    bpe.set("vocab", vocab);
    ArrayNode m = bpe.putArray("merges");
    for (Object merge : merges) {
      m.add(merge.toString());
    }
    return root.toString();
  }

  /** BOS / EOS around a plain encoding, as add_bos_token / add_eos_token say. */
  private static ObjectNode postProcessor(GgufFile f, Pre pre, List<?> tokens) {
    boolean addBos = bool(f, GgufKeys.ADD_BOS, pre.addBos());
    boolean addEos = bool(f, GgufKeys.ADD_EOS, false);
    Object sep = f.get("tokenizer.ggml.add_sep_token");
    if (Boolean.TRUE.equals(sep)) {
      throw new ModelLoadException(f.primary(), "tokenizer.ggml.add_sep_token true is not served");
    }
    ObjectNode p = JSON.createObjectNode();
    p.put("type", "TemplateProcessing");
    ArrayNode single = p.putArray("single");
    ArrayNode pair = p.putArray("pair");
    ObjectNode specials = p.putObject("special_tokens");
    String bos = addBos ? token(f, GgufKeys.BOS_ID, tokens) : null;
    String eos = addEos ? token(f, GgufKeys.EOS_ID, tokens) : null;
    for (ArrayNode seq : List.of(single, pair)) {
      if (bos != null) {
        seq.addObject().putObject("SpecialToken").put("id", bos).put("type_id", 0);
      }
      seq.addObject().putObject("Sequence").put("id", "A").put("type_id", 0);
      if (seq == pair) {
        seq.addObject().putObject("Sequence").put("id", "B").put("type_id", 0);
      }
      if (eos != null) {
        seq.addObject().putObject("SpecialToken").put("id", eos).put("type_id", 0);
      }
    }
    for (String key : new String[] {GgufKeys.BOS_ID, GgufKeys.EOS_ID}) {
      String text = key.equals(GgufKeys.BOS_ID) ? bos : eos;
      if (text != null) {
        ObjectNode s = specials.putObject(text);
        s.put("id", text);
        s.putArray("ids").add(((Number) f.get(key)).intValue());
        s.putArray("tokens").add(text);
      }
    }
    return p;
  }

  /**
   * The tokenizer: {@code tokenizer.json} (and {@code tokenizer_config.json}) in the file's folder
   * when there is one, else the file's own vocabulary.
   *
   * @return the tokenizer and where it came from
   */
  static Loaded load(GgufFile f) {
    Path dir = f.primary().toAbsolutePath().getParent();
    if (Files.isRegularFile(dir.resolve(TokenizerLoader.TOKENIZER_JSON))) {
      return new Loaded(HfTokenizer.load(dir), dir.resolve(TokenizerLoader.TOKENIZER_JSON)
          .toString());
    }
    if ("llama".equals(f.get(GgufKeys.TOKENIZER_MODEL))) {
      return new Loaded(new GgufSpmTokenizer(f), "the file's " + GgufKeys.TOKENIZER_MODEL
          + " llama (SentencePiece BPE as llama.cpp's llm_tokenizer_spm)");
    }
    String json = tokenizerJson(f);
    Path tmp = null;
    try {
      tmp = Files.createTempDirectory("radixserve-gguf-tokenizer");
      Files.writeString(tmp.resolve(TokenizerLoader.TOKENIZER_JSON), json);
      ObjectNode config = JSON.createObjectNode();
      Object eos = f.get(GgufKeys.EOS_ID);
      if (eos != null) {
        config.put("eos_token", token(f, GgufKeys.EOS_ID, list(f, GgufKeys.TOKENS)));
      }
      Files.writeString(tmp.resolve(TokenizerLoader.TOKENIZER_CONFIG_JSON), config.toString());
      return new Loaded(HfTokenizer.load(tmp), "the file's " + GgufKeys.TOKENIZER_MODEL + " "
          + f.get(GgufKeys.TOKENIZER_MODEL) + ", pre " + f.get(GgufKeys.TOKENIZER_PRE));
    } catch (IOException e) {
      throw new ModelLoadException(f.primary(), "cannot stage its tokenizer: " + e, e);
    } finally {
      deleteQuietly(tmp);
    }
  }

  record Loaded(dev.radixserve.model.Tokenizer tokenizer, String source) {}

  /** Special tokens llama.cpp never strips after, even in a Phi-3 file ({@link #rstrip}). */
  private static final java.util.Set<String> NOT_RSTRIPPED =
      java.util.Set.of("<unk>", "<s>", "<|endoftext|>");

  /**
   * Which special tokens llama.cpp strips the whitespace after ({@code LLAMA_TOKEN_ATTR_RSTRIP}),
   * which it sets by the file's {@code general.name}: in a file whose name, lowercased, contains
   * {@code phi-3} or {@code phi3}, every special token but {@code <unk>}, {@code <s>} and {@code
   * <|endoftext|>} (as Phi-3's own tokenizer.json marks its chat markers {@code rstrip}); in any
   * other file none.
   */
  static java.util.function.Predicate<String> rstrip(GgufFile f) {
    String name = f.get(GgufKeys.NAME) instanceof String n ? n.toLowerCase(java.util.Locale.ROOT)
        : "";
    boolean phi3 = name.contains("phi-3") || name.contains("phi3");
    return text -> phi3 && !NOT_RSTRIPPED.contains(text);
  }

  /**
   * The ids that end generation, as llama.cpp's {@code special_eog_ids}: eos, eot and eom, and
   * every token whose text is one of {@link #EOG_TEXTS}.
   */
  static Set<Integer> endOfGeneration(GgufFile f) {
    Set<Integer> ids = new LinkedHashSet<>();
    for (String key : new String[] {GgufKeys.EOS_ID, GgufKeys.EOT_ID, GgufKeys.EOM_ID}) {
      if (f.get(key) instanceof Number n) {
        ids.add(n.intValue());
      }
    }
    List<?> tokens = list(f, GgufKeys.TOKENS);
    for (int id = 0; id < tokens.size(); id++) {
      if (EOG_TEXTS.contains(tokens.get(id).toString())) {
        ids.add(id);
      }
    }
    return ids;
  }

  private static void deleteQuietly(Path dir) {
    if (dir == null) {
      return;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException ignored) {
      // a temporary folder left behind holds only a tokenizer copy
    }
  }

  private static String token(GgufFile f, String key, List<?> tokens) {
    Object id = f.get(key);
    if (!(id instanceof Number n) || n.longValue() < 0 || n.longValue() >= tokens.size()) {
      throw new ModelLoadException(f.primary(), key + " " + id + " is not a token id of the "
          + tokens.size() + " tokens");
    }
    return tokens.get(n.intValue()).toString();
  }

  private static boolean bool(GgufFile f, String key, boolean absent) {
    Object v = f.get(key);
    return v == null ? absent : (Boolean) v;
  }

  private static String string(GgufFile f, String key) {
    if (!(f.get(key) instanceof String s)) {
      throw new ModelLoadException(f.primary(), "metadata " + key + " is missing");
    }
    return s;
  }

  private static List<?> list(GgufFile f, String key) {
    if (!(f.get(key) instanceof List<?> l)) {
      throw new ModelLoadException(f.primary(), "metadata " + key + " is missing");
    }
    return l;
  }
}
