package dev.radixserve.model.gguf;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.weights.ModelLoadException;
import java.util.Arrays;
import java.util.Map;

/**
 * Phi-3's fused projections in a GGUF file as the Llama layout's separate ones, as {@code
 * weights.FusedProjections} splits a safetensors checkpoint's: {@code attn_qkv} ([(H + 2·KVH)·D]
 * rows: q's, then k's, then v's; llama.cpp's {@code build_qkv} views it so) and {@code ffn_up}
 * holding {@code gate_up_proj} (2·I rows: gate's, then up's; llama.cpp's {@code LLM_FFN_SWIGLU}
 * gates with the first half). A GGUF row is whole blocks of any type, stored contiguously, so
 * every part is a slice of the mapping in the file's own type: Q8_0/Q4_0 parts are still
 * repacked bit for bit, K-quant parts served like any other tensor of their type.
 */
final class GgufFusedTensors {

  static final String QKV = "self_attn.qkv_proj.weight";
  static final String GATE_UP = "mlp.gate_up_proj.weight";

  private GgufFusedTensors() {}

  /** Replaces each layer's fused tensors in {@code names} (canonical names) by their parts. */
  static void split(LlamaConfig c, Map<String, GgufFile.TensorInfo> names) {
    long q = (long) c.nHeads() * c.headDim();
    long kv = (long) c.kvHeads() * c.headDim();
    long inter = c.intermediateSize();
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "layers." + i + ".";
      if (names.containsKey(p + QKV)) {
        cut(names, p + QKV, new String[] {p + "self_attn.q_proj.weight",
            p + "self_attn.k_proj.weight", p + "self_attn.v_proj.weight"},
            new long[] {q, kv, kv}, c.hiddenSize());
      }
      if (names.containsKey(p + GATE_UP)) {
        cut(names, p + GATE_UP, new String[] {p + "mlp.gate_proj.weight",
            p + "mlp.up_proj.weight"}, new long[] {inter, inter}, c.hiddenSize());
      }
    }
  }

  private static void cut(Map<String, GgufFile.TensorInfo> names, String fused, String[] parts,
      long[] rows, long cols) {
    GgufFile.TensorInfo t = names.remove(fused);
    long total = Arrays.stream(rows).sum();
    if (t.ne().length != 2 || t.ne()[0] != cols || t.ne()[1] != total) {
      throw new ModelLoadException(t.file(), "tensor " + t.name() + " has ne "
          + Arrays.toString(t.ne()) + ", expected [" + cols + ", " + total + "]");
    }
    for (String part : parts) {
      if (names.containsKey(part)) {
        throw new ModelLoadException(t.file(), "tensor " + t.name() + " and a separate "
            + part + " both given");
      }
    }
    long rowBytes = t.type().rowBytes(cols);
    long offset = 0;
    for (int k = 0; k < parts.length; k++) {
      names.put(parts[k], new GgufFile.TensorInfo(t.name() + "[" + offset + ":"
          + (offset + rows[k]) + "]", new long[] {cols, rows[k]}, t.type(),
          t.data().asSlice(offset * rowBytes, rows[k] * rowBytes), t.file()));
      offset += rows[k];
    }
  }
}
