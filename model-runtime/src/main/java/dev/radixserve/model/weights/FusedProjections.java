package dev.radixserve.model.weights;

import dev.radixserve.model.LlamaConfig;
import java.nio.file.Path;
import java.util.Map;

/**
 * Phi-3's fused projections as the Llama layout's separate ones: {@code self_attn.qkv_proj}
 * ([(H + 2·KVH)·D, E]: q's rows, then k's, then v's, as transformers' Phi3Attention slices them)
 * and {@code mlp.gate_up_proj} ([2·I, E]: gate's rows, then up's, transformers' {@code
 * chunk(2)}). nn.Linear keeps each output row contiguous, so every part is a slice of the mapped
 * tensor: no copy.
 */
final class FusedProjections {

  private FusedProjections() {}

  /** Replaces each layer's fused tensors in {@code tensors} by their parts. */
  static void split(LlamaConfig c, Map<String, Tensor> tensors, Map<String, Path> fileOf,
      Path primary) {
    long q = (long) c.nHeads() * c.headDim();
    long kv = (long) c.kvHeads() * c.headDim();
    long inter = c.intermediateSize();
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "layers." + i + ".";
      cut(tensors, fileOf, primary, p + "self_attn.qkv_proj.weight", new String[] {
          p + "self_attn.q_proj.weight", p + "self_attn.k_proj.weight",
          p + "self_attn.v_proj.weight"}, new long[] {q, kv, kv}, c.hiddenSize());
      cut(tensors, fileOf, primary, p + "mlp.gate_up_proj.weight", new String[] {
          p + "mlp.gate_proj.weight", p + "mlp.up_proj.weight"}, new long[] {inter, inter},
          c.hiddenSize());
    }
  }

  private static void cut(Map<String, Tensor> tensors, Map<String, Path> fileOf, Path primary,
      String fused, String[] parts, long[] rows, long cols) {
    Tensor t = tensors.remove(fused);
    Path file = fileOf.getOrDefault(fused, primary);
    if (t == null) {
      throw new ModelLoadException(file, "missing tensor " + fused);
    }
    long total = 0;
    for (long r : rows) {
      total += r;
    }
    if (t.shape().length != 2 || t.shape()[0] != total || t.shape()[1] != cols) {
      throw new ModelLoadException(file, "tensor " + fused + " has shape "
          + java.util.Arrays.toString(t.shape()) + ", expected [" + total + ", " + cols + "]");
    }
    long rowBytes = cols * t.dtype().bytes();
    long offset = 0;
    for (int k = 0; k < parts.length; k++) {
      tensors.put(parts[k], new Tensor(parts[k], t.dtype(), new long[] {rows[k], cols},
          t.data().asSlice(offset * rowBytes, rows[k] * rowBytes)));
      fileOf.put(parts[k], file);
      offset += rows[k];
    }
  }
}
