package dev.radixserve.model.weights;

import dev.radixserve.model.GemmaConfig;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.CheckpointRepacker;
import dev.radixserve.model.quant.QuantizationException;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.ChatMlTemplate;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.chat.ChatTemplates;
import dev.radixserve.model.tokenizer.HfTokenizer;
import java.time.Clock;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.nio.file.Files;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.List;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.logging.Logger;

/**
 * Loads a model directory in Hugging Face layout, GPT-2, a Llama-family decoder or Gemma 2/3: {@code
 * config.json} ({@link HfConfig}), the weights ({@code model.safetensors} or shards through
 * {@code model.safetensors.index.json}, memory-mapped, F32/F16/BF16, names with or without the
 * family's prefix, {@code transformer.} or {@code model.}; see {@link
 * CheckpointFiles}), the tokenizer files ({@link TokenizerLoader#load}) and the EOS ids ({@link
 * EosTokens}). Every problem is a {@link ModelLoadException} naming the file.
 */
public final class HfModelLoader {

  public static final String CONFIG_JSON = "config.json";
  public static final String SAFETENSORS = CheckpointFiles.SAFETENSORS;
  public static final String SAFETENSORS_INDEX = CheckpointFiles.INDEX;
  static final String PREFIX = "transformer.";
  private static final Logger LOG = Logger.getLogger(HfModelLoader.class.getName());

  /** The integer tensors of a GPTQ/AWQ layer (checked by {@link CheckpointRepacker#check}). */
  private static final java.util.regex.Pattern PACKED =
      java.util.regex.Pattern.compile("\\.(qweight|qzeros|g_idx)$");

  private static final ValueLayout.OfInt I32_LE =
      ValueLayout.JAVA_INT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN);

  private HfModelLoader() {}

  /**
   * Weights, tokenizer and EOS ids of the directory; close the result to unmap the weights.
   *
   * <p>The tokenizer must fit the embedding: a tokenizer with more ids than {@code vocab_size} is
   * refused. A larger {@code vocab_size} is accepted (vocabularies padded to a multiple of 64 or
   * 128 for speed); the ids past the tokenizer's are padding that the server never samples.
   */
  public static LoadedModel load(Path dir) {
    HfConfig config = HfConfig.read(dir);
    Tokenizer tokenizer = tokenizer(config.model(), dir);
    int vocab = config.model().vocabSize();
    if (tokenizer.vocabSize() > vocab) {
      throw new ModelLoadException(dir.resolve(CONFIG_JSON), "vocab_size " + vocab + " is smaller"
          + " than the tokenizer's " + tokenizer.vocabSize() + " tokens ("
          + TokenizerLoader.describe(dir) + "): ids " + vocab + ".." + (tokenizer.vocabSize() - 1)
          + " would have no embedding row");
    }
    if (tokenizer.vocabSize() < vocab) {
      LOG.info(() -> "vocab_size " + vocab + " pads the tokenizer's " + tokenizer.vocabSize()
          + " tokens; ids " + tokenizer.vocabSize() + ".." + (vocab - 1) + " are never sampled");
    }
    EosTokens eos = EosTokens.resolve(dir, config, tokenizer);
    Mapped mapped = map(dir, config);
    ChatTemplate chat = ChatTemplates.load(dir, Clock.systemDefaultZone())
        .orElseGet(ChatMlTemplate::new);
    return new LoadedModel(mapped.weights(), tokenizer, eos, mapped.files().files(), chat);
  }

  /**
   * GPT-2 keeps its own exact byte-level BPE ({@link TokenizerLoader}); a Llama-family model's
   * {@code tokenizer.json} runs in Hugging Face's tokenizers ({@link HfTokenizer}), since its
   * normalizers, regexes and byte fallback vary by family.
   */
  private static Tokenizer tokenizer(ModelShape config, Path dir) {
    TokenizerClass.check(dir);
    return (config instanceof LlamaConfig || config instanceof GemmaConfig)
        && Files.isRegularFile(dir.resolve(TokenizerLoader.TOKENIZER_JSON))
        ? HfTokenizer.load(dir) : TokenizerLoader.load(dir);
  }

  public static ModelShape loadConfig(Path dir) {
    return HfConfig.read(dir).model();
  }

  /** The weights alone, memory-mapped. */
  public static ModelWeights loadWeights(Path dir) {
    return map(dir, HfConfig.read(dir)).weights();
  }

  private record Mapped(ModelWeights weights, CheckpointFiles files) {}

  /**
   * How a family's checkpoint names its tensors: the prefix Hugging Face's base model puts on
   * them, non-weight buffers some checkpoints hold, the names and shapes the weights need, and
   * the tied LM head's two names.
   */
  private record Layout(String family, String prefix, List<String> buffers,
      Map<String, long[]> expected, String embed, String lmHead, boolean tied,
      BiFunction<Map<String, Tensor>, CheckpointQuantization, ModelWeights> weights) {}

  private static Layout layout(HfConfig hf, Arena arena) {
    return switch (hf.model()) {
      case ModelConfig c -> new Layout("a GPT-2 language model", PREFIX,
          List.of(".attn.bias", ".attn.masked_bias"), GptWeights.storedShapes(c, hf.quantization()),
          "wte.weight", GptWeights.LM_HEAD, c.tieWordEmbeddings(),
          (t, q) -> new GptWeights(c, q, t, arena));
      case LlamaConfig c -> new Layout(c.modelType(), "model.", List.of(".rotary_emb.inv_freq"),
          LlamaWeights.storedShapes(c, hf.quantization()), LlamaWeights.EMBED,
          LlamaWeights.LM_HEAD, c.tieWordEmbeddings(),
          (t, q) -> new LlamaWeights(c, q, t, arena));
      case GemmaConfig c -> new Layout(c.modelType(), "model.", List.of(".rotary_emb.inv_freq"),
          GemmaWeights.expectedShapes(c), GemmaWeights.EMBED, GemmaWeights.LM_HEAD,
          c.tieWordEmbeddings(), (t, q) -> new GemmaWeights(c, t, arena));
      default -> throw new IllegalArgumentException("no checkpoint layout for " + hf.model());
    };
  }

  private static Mapped map(Path dir, HfConfig config) {
    Arena arena = Arena.ofShared();
    try {
      Layout layout = layout(config, arena);
      CheckpointFiles files = CheckpointFiles.map(dir, arena);
      Map<String, Tensor> canonical = new LinkedHashMap<>();
      Map<String, Path> fileOf = new LinkedHashMap<>();
      for (Tensor t : files.tensors().values()) {
        String name = t.name().startsWith(layout.prefix())
            ? t.name().substring(layout.prefix().length()) : t.name();
        if (layout.buffers().stream().anyMatch(name::endsWith)) {
          continue; // causal masks, rotary tables: buffers, not weights
        }
        Path file = files.fileOf().get(t.name());
        if (canonical.put(name, new Tensor(name, t.dtype(), t.shape(), t.data())) != null) {
          throw new ModelLoadException(file, "tensor " + name + " appears both with and without the prefix");
        }
        fileOf.put(name, file);
      }
      Path primary = files.files().getFirst();
      if (config.model() instanceof LlamaConfig c && c.modelType().equals("phi3")) {
        FusedProjections.split(c, canonical, fileOf, primary);
      }
      checkLmHead(layout, canonical, fileOf, primary);
      Map<String, long[]> expected = layout.expected();
      plainGroupsWhereAbsent(config.quantization(), expected, canonical);
      for (Map.Entry<String, long[]> e : expected.entrySet()) {
        TensorSet.shapeProblem(canonical, e.getKey(), e.getValue()).ifPresent(problem -> {
          throw new ModelLoadException(fileOf.getOrDefault(e.getKey(), primary), problem);
        });
        Tensor t = canonical.get(e.getKey());
        if (!t.dtype().isFloat() && !PACKED.matcher(e.getKey()).find()) {
          throw new ModelLoadException(fileOf.get(e.getKey()), "tensor " + e.getKey() + " holds "
              + t.dtype() + ", expected F32, F16 or BF16");
        }
      }
      CheckpointQuantization packed = checkPacked(config.quantization(), canonical, fileOf);
      TreeSet<String> unused = new TreeSet<>(canonical.keySet());
      unused.removeAll(expected.keySet());
      if (!unused.isEmpty()) {
        LOG.warning(() -> dir + ": ignoring tensors " + layout.family() + " does not use: " + unused);
        canonical.keySet().removeAll(unused);
      }
      return new Mapped(layout.weights().apply(canonical, packed), files);
    } catch (IllegalArgumentException e) {
      arena.close();
      throw new ModelLoadException(dir.resolve(SAFETENSORS), e.getMessage(), e);
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  /**
   * A GPTQ layer without {@code g_idx}: some exporters write it only under act-order; without it
   * input k is in group k / G, which is what the layer gets here.
   */
  private static void plainGroupsWhereAbsent(CheckpointQuantization q,
      Map<String, long[]> expected, Map<String, Tensor> tensors) {
    if (q == null || q.method() != CheckpointQuantization.Method.GPTQ) {
      return;
    }
    expected.forEach((name, shape) -> {
      if (name.endsWith(".g_idx") && !tensors.containsKey(name)
          && tensors.containsKey(name.substring(0, name.length() - ".g_idx".length())
              + ".qweight")) {
        MemorySegment data = MemorySegment.ofArray(new int[(int) shape[0]]);
        for (int k = 0; k < shape[0]; k++) {
          data.setAtIndex(I32_LE, k, k / q.groupSize());
        }
        tensors.put(name, new Tensor(name, DType.I32, shape, data));
      }
    });
  }

  /**
   * A GPTQ/AWQ checkpoint's layers, checked before anything is built from them; the checkpoint's
   * quantization as they hold it: with act-order when some layer's groups are not runs of
   * consecutive inputs ({@link CheckpointRepacker#inputOrder}), whatever {@code desc_act} says.
   */
  private static CheckpointQuantization checkPacked(CheckpointQuantization q,
      Map<String, Tensor> tensors, Map<String, Path> fileOf) {
    if (q == null) {
      return null;
    }
    boolean actOrder = false;
    for (String name : tensors.keySet()) {
      if (name.endsWith(".qweight")) {
        String module = name.substring(0, name.length() - ".qweight".length());
        try {
          actOrder |= !CheckpointRepacker.inPlace(CheckpointRepacker.check(q, module, tensors));
        } catch (QuantizationException e) {
          throw new ModelLoadException(fileOf.get(name), e.getMessage(), e);
        }
      }
    }
    return q.withActOrder(actOrder);
  }

  /**
   * Tied: an LM head in the file must equal the embedding, since Hugging Face would silently
   * replace it by the embedding. Untied: it must be there.
   */
  private static void checkLmHead(Layout layout, Map<String, Tensor> tensors,
      Map<String, Path> fileOf, Path primary) {
    String head = layout.lmHead();
    Tensor lmHead = tensors.get(head);
    if (!layout.tied()) {
      if (lmHead == null) {
        throw new ModelLoadException(primary, "has no " + head
            + ", and config.json sets tie_word_embeddings false");
      }
      return;
    }
    if (lmHead == null) {
      return;
    }
    Tensor embed = tensors.get(layout.embed());
    boolean same = embed != null && embed.dtype() == lmHead.dtype()
        && Arrays.equals(embed.shape(), lmHead.shape())
        && embed.data().mismatch(lmHead.data()) < 0;
    if (!same) {
      throw new ModelLoadException(fileOf.get(head), head + " differs from " + layout.embed()
          + ", but config.json has tie_word_embeddings true" + (layout.prefix().equals(PREFIX)
          ? " (the default)" : "") + ", which ties the head to "
          + layout.embed() + ": set tie_word_embeddings to false to use " + head);
    }
    tensors.remove(head);
  }
}
