package dev.radixserve.model.gguf;

import dev.radixserve.model.ModelShape;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.graph.PagedGraph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.weights.Tensor;
import java.util.Map;
import java.util.Set;

/**
 * A GGUF file's weights: the Llama family's or GPT-2's, described as the file holds
 * them (architecture, file type, ggml types per tensor, the tokenizer's source), with the file's
 * identity for the cache ({@link GgufModelLoader#identity}).
 */
public final class GgufWeights implements ModelWeights {

  private final ModelWeights weights;
  private final String description;
  private final String identity;
  private final QuantMode requantize;
  private final Set<String> offsetWeights;
  private final Set<String> q8Tables;

  GgufWeights(ModelWeights weights, GgufFile f, GgufTensors tensors, String tokenizerSource,
      String identity) {
    this.weights = weights;
    this.identity = identity;
    this.requantize = tensors.requantize();
    this.offsetWeights = tensors.offsetWeights();
    this.q8Tables = tensors.q8Tables();
    long bytes = 0;
    for (GgufFile.TensorInfo t : f.tensors()) {
      bytes += t.data().byteSize();
    }
    this.description = String.format("%s%ngguf        %s (%s), file type %s; tensors %s, %,d bytes;"
        + " projections %s%ntokenizer   %s", weights.describe(),
        f.files().size() == 1 ? f.primary().getFileName() : f.files().size() + " shards from "
            + f.primary().getFileName(), f.get(GgufKeys.ARCHITECTURE),
        f.get(GgufKeys.FILE_TYPE), tensors.describeTypes(), bytes,
        tensors.describeProjections(), tokenizerSource)
        + (tensors.ropeFactors() == null ? "" : String.format("%nrope        llama.cpp's"
            + " rope_freqs.weight: each of the %d frequencies divided by its factor (Llama 3's"
            + " scaling as the converter wrote it)", tensors.ropeFactors().length));
  }

  /** size@mtime of each file and the header's hash: what tells this file from another. */
  public String identity() {
    return identity;
  }

  @Override
  public ModelShape config() {
    return weights.config();
  }

  @Override
  public PagedGraph graph() {
    return weights.graph();
  }

  @Override
  public Tensor tensor(String name) {
    return weights.tensor(name);
  }

  @Override
  public Map<String, Tensor> tensors() {
    return weights.tensors();
  }

  @Override
  public String describe() {
    return description;
  }

  @Override
  public CheckpointQuantization checkpointQuantization() {
    return weights.checkpointQuantization();
  }

  @Override
  public QuantMode requantizeAs() {
    return requantize;
  }

  @Override
  public Set<String> offsetWeights() {
    return offsetWeights;
  }

  @Override
  public Set<String> q8Tables() {
    return q8Tables;
  }

  @Override
  public void close() {
    weights.close();
  }
}
