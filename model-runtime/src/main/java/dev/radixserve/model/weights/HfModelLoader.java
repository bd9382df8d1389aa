package dev.radixserve.model.weights;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.lang.foreign.Arena;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import java.util.logging.Logger;

/**
 * Loads a GPT-2 model directory in Hugging Face layout: {@code config.json} ({@link HfConfig}),
 * the weights ({@code model.safetensors} or shards through {@code model.safetensors.index.json},
 * memory-mapped, F32/F16/BF16, names with or without {@code transformer.}; see {@link
 * CheckpointFiles}), the tokenizer files ({@link TokenizerLoader#load}) and the EOS ids ({@link
 * EosTokens}). Every problem is a {@link ModelLoadException} naming the file.
 */
public final class HfModelLoader {

  public static final String CONFIG_JSON = "config.json";
  public static final String SAFETENSORS = CheckpointFiles.SAFETENSORS;
  public static final String SAFETENSORS_INDEX = CheckpointFiles.INDEX;
  static final String PREFIX = "transformer.";
  private static final Logger LOG = Logger.getLogger(HfModelLoader.class.getName());

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
    Tokenizer tokenizer = TokenizerLoader.load(dir);
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
    Mapped mapped = map(dir, config.model());
    return new LoadedModel(mapped.weights(), tokenizer, eos, mapped.files().files());
  }

  public static ModelConfig loadConfig(Path dir) {
    return HfConfig.read(dir).model();
  }

  /** The weights alone, memory-mapped. */
  public static GptWeights loadWeights(Path dir) {
    return map(dir, loadConfig(dir)).weights();
  }

  private record Mapped(GptWeights weights, CheckpointFiles files) {}

  private static Mapped map(Path dir, ModelConfig config) {
    Arena arena = Arena.ofShared();
    try {
      CheckpointFiles files = CheckpointFiles.map(dir, arena);
      Map<String, Tensor> canonical = new LinkedHashMap<>();
      Map<String, Path> fileOf = new LinkedHashMap<>();
      for (Tensor t : files.tensors().values()) {
        String name = t.name().startsWith(PREFIX) ? t.name().substring(PREFIX.length()) : t.name();
        if (name.endsWith(".attn.bias") || name.endsWith(".attn.masked_bias")) {
          continue; // causal-mask buffers, not weights
        }
        Path file = files.fileOf().get(t.name());
        if (canonical.put(name, new Tensor(name, t.dtype(), t.shape(), t.data())) != null) {
          throw new ModelLoadException(file, "tensor " + name + " appears both with and without the prefix");
        }
        fileOf.put(name, file);
      }
      Path primary = files.files().getFirst();
      checkLmHead(config, canonical, fileOf, primary);
      Map<String, long[]> expected = GptWeights.expectedShapes(config);
      for (Map.Entry<String, long[]> e : expected.entrySet()) {
        GptWeights.shapeProblem(canonical, e.getKey(), e.getValue()).ifPresent(problem -> {
          throw new ModelLoadException(fileOf.getOrDefault(e.getKey(), primary), problem);
        });
      }
      TreeSet<String> unused = new TreeSet<>(canonical.keySet());
      unused.removeAll(expected.keySet());
      if (!unused.isEmpty()) {
        LOG.warning(() -> dir + ": ignoring tensors a GPT-2 language model does not use: " + unused);
        canonical.keySet().removeAll(unused);
      }
      return new Mapped(new GptWeights(config, canonical, arena), files);
    } catch (IllegalArgumentException e) {
      arena.close();
      throw new ModelLoadException(dir.resolve(SAFETENSORS), e.getMessage(), e);
    } catch (RuntimeException e) {
      arena.close();
      throw e;
    }
  }

  /**
   * Tied (the default): an {@code lm_head.weight} in the file must equal {@code wte.weight}, since
   * Hugging Face would silently replace it by wte. Untied: it must be there.
   */
  private static void checkLmHead(ModelConfig config, Map<String, Tensor> tensors,
      Map<String, Path> fileOf, Path primary) {
    Tensor lmHead = tensors.get(GptWeights.LM_HEAD);
    if (!config.tieWordEmbeddings()) {
      if (lmHead == null) {
        throw new ModelLoadException(primary, "has no " + GptWeights.LM_HEAD
            + ", and config.json sets tie_word_embeddings false");
      }
      return;
    }
    if (lmHead == null) {
      return;
    }
    Tensor wte = tensors.get("wte.weight");
    boolean same = wte != null && wte.dtype() == lmHead.dtype()
        && Arrays.equals(wte.shape(), lmHead.shape())
        && wte.data().mismatch(lmHead.data()) < 0;
    if (!same) {
      throw new ModelLoadException(fileOf.get(GptWeights.LM_HEAD), GptWeights.LM_HEAD
          + " differs from wte.weight, but config.json has tie_word_embeddings true (the default),"
          + " which ties the head to wte.weight: set tie_word_embeddings to false to use lm_head.weight");
    }
    tensors.remove(GptWeights.LM_HEAD);
  }
}
