package dev.radixserve.model.gguf;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.chat.ChatMlTemplate;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.chat.ChatTemplates;
import dev.radixserve.model.chat.JinjaChatTemplate;
import dev.radixserve.model.weights.EosTokens;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.LoadedModel;
import dev.radixserve.model.weights.ModelLoadException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Loads a GGUF file (or the first of its shards) as llama.cpp reads it: the architecture's
 * hyper-parameters ({@link GgufConfig}), its tensors under radixserve's names ({@link
 * GgufTensors}), its tokenizer ({@link GgufTokenizer}), end-of-generation ids and chat template.
 * Architectures {@code llama} (Llama 2/3, Mistral, SmolLM as llama.cpp converts them), {@code
 * qwen2}, {@code qwen3}, {@code phi3} (its fused projections split, {@link GgufFusedTensors}),
 * {@code gemma2}, {@code gemma3} ({@link GgufGemmaConfig}) and {@code gpt2}. Every problem is a {@link ModelLoadException} naming the file.
 */
public final class GgufModelLoader {

  public static final String EXTENSION = ".gguf";

  private GgufModelLoader() {}

  /** Whether {@code path} names a GGUF file (rather than a Hugging Face directory). */
  public static boolean isGguf(Path path) {
    return path != null && path.getFileName() != null
        && path.getFileName().toString().toLowerCase(Locale.ROOT).endsWith(EXTENSION)
        && !Files.isDirectory(path);
  }

  /** Weights, tokenizer, EOS ids and chat template of the file; close the result to unmap it. */
  public static LoadedModel load(Path file) {
    return load(file, Clock.systemDefaultZone());
  }

  /** @param clock the date a chat template's {@code strftime_now} prints */
  public static LoadedModel load(Path file, Clock clock) {
    if (!Files.isRegularFile(file)) {
      throw new ModelLoadException(file, "is not a file");
    }
    Arena arena = Arena.ofShared();
    dev.radixserve.model.Tokenizer tokenizer = null;
    try {
      GgufFile f = GgufFile.map(file, arena);
      String arch = architecture(f);
      GgufKeys.checkKnown(f, arch);
      GgufTensors tensors = GgufTensors.read(f, arch, arena);
      dev.radixserve.model.ModelShape config = tensors.config();
      GgufTokenizer.Loaded t = GgufTokenizer.load(f);
      tokenizer = t.tokenizer();
      if (tokenizer.vocabSize() > config.vocabSize()) {
        throw new ModelLoadException(file, "the tokenizer (" + t.source() + ") has "
            + tokenizer.vocabSize() + " tokens, token_embd.weight " + config.vocabSize() + " rows");
      }
      EosTokens eos = new EosTokens(GgufTokenizer.endOfGeneration(f), "tokenizer.ggml");
      dev.radixserve.model.ModelWeights family = switch (config) {
        case LlamaConfig c -> new LlamaWeights(c, tensors.quantization(), tensors.tensors(), arena);
        case dev.radixserve.model.GemmaConfig c -> new dev.radixserve.model.weights.GemmaWeights(
            c, tensors.quantization(), tensors.tensors(), arena);
        case dev.radixserve.model.ModelConfig c ->
            new dev.radixserve.model.weights.GptWeights(c, tensors.quantization(),
                tensors.tensors(), arena);
        default -> throw new IllegalStateException("no weights for " + config);
      };
      GgufWeights weights = new GgufWeights(family, f, tensors, t.source(), identity(f));
      return new LoadedModel(weights, tokenizer, eos, f.files(), chatTemplate(f, clock));
    } catch (IllegalArgumentException e) {
      closeQuietly(tokenizer);
      arena.close();
      throw new ModelLoadException(file, e.getMessage(), e);
    } catch (RuntimeException e) {
      closeQuietly(tokenizer);
      arena.close();
      throw e;
    }
  }

  private static void closeQuietly(dev.radixserve.model.Tokenizer t) {
    if (t instanceof AutoCloseable c) {
      try {
        c.close();
      } catch (Exception ignored) {
        // the load already failed; that failure is the one reported
      }
    }
  }

  private static String architecture(GgufFile f) {
    if (!(f.get(GgufKeys.ARCHITECTURE) instanceof String arch)) {
      throw new ModelLoadException(f.primary(), "has no " + GgufKeys.ARCHITECTURE);
    }
    if (!GgufKeys.ARCHITECTURES.containsKey(arch)) {
      throw new ModelLoadException(f.primary(), GgufKeys.ARCHITECTURE + " " + arch
          + " is not served from GGUF (" + String.join(", ",
              new java.util.TreeSet<>(GgufKeys.ARCHITECTURES.keySet())) + ")");
    }
    return arch;
  }

  /**
   * {@code tokenizer.chat_template} through the Jinja engine, with the BOS/EOS texts llama.cpp
   * passes it; ChatML-like when the file has none. {@code tokenizer.chat_template.tool_use}
   * (the converter's copy of a checkpoint's template named tool_use) renders the requests that
   * pass tools, as llama-server renders them.
   */
  static ChatTemplate chatTemplate(GgufFile f, Clock clock) {
    if (!(f.get(GgufKeys.CHAT_TEMPLATE) instanceof String source)) {
      return new ChatMlTemplate();
    }
    String bos = tokenText(f, GgufKeys.BOS_ID);
    String eos = tokenText(f, GgufKeys.EOS_ID);
    Optional<JinjaChatTemplate> toolUse = f.get(GgufKeys.CHAT_TEMPLATE_TOOL_USE)
        instanceof String t ? Optional.of(new JinjaChatTemplate(t, bos, eos, clock))
        : Optional.empty();
    return ChatTemplates.withToolUse(new JinjaChatTemplate(source, bos, eos, clock), toolUse);
  }

  private static String tokenText(GgufFile f, String key) {
    if (f.get(key) instanceof Number id && f.get(GgufKeys.TOKENS) instanceof List<?> tokens
        && id.longValue() >= 0 && id.longValue() < tokens.size()) {
      return tokens.get(id.intValue()).toString();
    }
    return null;
  }

  /**
   * What tells this file from another under the same name, for the cache identity (KV events,
   * tiers, the disk tier's fingerprint): each file's size and modification time, and the SHA-256 of
   * the first file's header (metadata and tensor infos).
   */
  public static String identity(GgufFile f) {
    StringBuilder b = new StringBuilder();
    for (Path p : f.files()) {
      try {
        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
        b.append(a.size()).append('@').append(a.lastModifiedTime().toMillis()).append(';');
      } catch (IOException e) {
        throw new ModelLoadException(p, "cannot be read: " + e, e);
      }
    }
    return b.append(f.headerHash(), 0, 16).toString();
  }

  /** {@link #identity(GgufFile)} of the file at {@code path} (maps it briefly). */
  public static String identity(Path path) {
    try (Arena arena = Arena.ofConfined()) {
      return identity(GgufFile.map(path, arena));
    }
  }
}
