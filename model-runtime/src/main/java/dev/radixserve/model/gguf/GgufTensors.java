package dev.radixserve.model.gguf;

import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.ModelLoadException;
import dev.radixserve.model.weights.Tensor;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A GGUF file's tensors as the Llama graph takes them ({@link
 * dev.radixserve.model.weights.LlamaWeights}' names and shapes):
 *
 * <ul>
 *   <li>F32, F16 and BF16 tensors are slices of the mapping, as a safetensors checkpoint's;
 *   <li>Q8_0 and Q4_0 projections are served in their own blocks when every projection of the
 *       file is in the same one of the two: kept in the mapping and written into MatMulNBits'
 *       layout when the session is made ({@link dev.radixserve.model.quant.GgmlBlockRepacker});
 *   <li>everything else that {@link GgufBlocks#dequantizable} reads (the embedding and LM head in
 *       Q8_0/Q4_0, Q4_1/Q5_0/Q5_1 and the K-quants anywhere, and the projections of a file that
 *       mixes types) stays in its blocks in the mapping and is dequantized exactly as ggml does
 *       a row at a time when the session is made ({@link GgufBlocks#decoded}): requantized into
 *       MatMulNBits' blocks one tensor at a time ({@link #requantize} by default, the
 *       quantized embedding and LM head), or widened to fp32 where a spec serves floats;
 *   <li>IQ, ternary and the other types are refused by tensor and type;
 *   <li>Llama's q/k rows (and biases), which llama.cpp's converter permutes for its interleaved
 *       rope, are read back in transformers' order ({@link GgufBlocks#unpermute});
 *   <li>GPT-2's projections, which the converter transposed into llama.cpp's [out][in], are
 *       Conv1D's [in, out] again whatever their type ({@link GgufBlocks#transposedView}): the
 *       shape {@link dev.radixserve.model.weights.GptWeights} and its graph read, as floats or
 *       (Q8_0/Q4_0) repacked from the file's rows as they lie.
 * </ul>
 *
 * @param types how many tensors of the file hold each ggml type (for check-model)
 * @param ropeFactors {@code rope_freqs.weight}, or null
 * @param requantize the MatMulNBits mode the file is served in unless another is configured
 *     ({@link #nearestMode}); NONE for float files and files served in their own blocks
 * @param offsetWeights the projections in Q4_K blocks of a file that is requantized: served on
 *     their own codes with a float offset per block under auto and int4 ({@link
 *     QuantSpec#OFFSETS_MODE}, {@link dev.radixserve.model.quant.Q4KRepacker}), requantized under
 *     a configured int8
 * @param projectionTypes how many projections hold each ggml type (for check-model)
 * @param q8Tables the token embedding and LM head tables the file holds in Q8_0 (canonical
 *     names): an int8 head serves them on their own blocks ({@link QuantSpec#q8Tables})
 */
record GgufTensors(ModelShape config, Map<String, Tensor> tensors,
    CheckpointQuantization quantization, GgmlType projectionType, Map<GgmlType, Integer> types,
    float[] ropeFactors, QuantMode requantize, Set<String> offsetWeights,
    Map<GgmlType, Integer> projectionTypes, Set<String> q8Tables) {

  /** The tables the embedding and the LM head read, by canonical name (Llama family, GPT-2). */
  private static final Set<String> TABLES =
      Set.of("embed_tokens.weight", "lm_head.weight", "wte.weight");

  private static final Set<GgmlType> FLOATS = Set.of(GgmlType.F32, GgmlType.F16, GgmlType.BF16);
  private static final String OFFSETS = "as MatMulNBits int4 on the file's own codes + a float"
      + " offset per block (block 32, not requantized)";

  static GgufTensors read(GgufFile f, String arch, Arena arena) {
    Map<String, GgufFile.TensorInfo> names = GgufTensorNames.canonical(f, arch);
    boolean gpt2 = arch.equals("gpt2");
    Map<GgmlType, Integer> types = new TreeMap<>();
    for (GgufFile.TensorInfo t : f.tensors()) {
      types.merge(t.type(), 1, Integer::sum);
      if (!GgufBlocks.dequantizable(t.type())) {
        throw new ModelLoadException(t.file(), "tensor " + t.name() + " is " + t.type()
            + ", which radixserve does not serve (F32, F16, BF16; Q8_0 and Q4_0 in their own"
            + " blocks; Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K dequantized at load). Convert the"
            + " checkpoint with llama.cpp's convert_hf_to_gguf.py --outtype q8_0, or"
            + " llama-quantize it to Q8_0, Q4_0 or a K-quant");
      }
    }
    float[] ropeFactors = vector(names.remove(GgufTensorNames.ROPE_FREQS));
    if (gpt2 && ropeFactors != null) {
      throw new ModelLoadException(f.primary(), "rope_freqs.weight in a GPT-2 file");
    }
    float[] longFactors = vector(names.remove(GgufTensorNames.ROPE_FACTORS_LONG));
    float[] shortFactors = vector(names.remove(GgufTensorNames.ROPE_FACTORS_SHORT));
    GgufConfig.LongRope longRope = longFactors == null && shortFactors == null ? null
        : new GgufConfig.LongRope(shortFactors, longFactors);
    // (a Gemma file's names never hold rope factors: GgufTensorNames refuses them by name)
    boolean gemma = arch.startsWith("gemma");
    ModelShape config = gpt2 ? GgufConfig.gpt2(f, names)
        : gemma ? GgufGemmaConfig.read(f, arch, names)
        : GgufConfig.read(f, arch, names, ropeFactors, longRope);
    if (config instanceof LlamaConfig c && arch.equals("phi3")) {
      GgufFusedTensors.split(c, names);
    }
    GgmlType projectionType = projectionType(names);
    CheckpointQuantization q = GgufBlocks.repackable(projectionType)
        ? GgufBlocks.quantization(projectionType) : null;
    Map<String, Tensor> out = new LinkedHashMap<>();
    for (Map.Entry<String, GgufFile.TensorInfo> e : names.entrySet()) {
      String name = e.getKey();
      GgufFile.TensorInfo t = e.getValue();
      GgufBlocks.RowMap rows = config instanceof LlamaConfig c ? rows(arch, c, name, t)
          : GgufBlocks.IN_PLACE;
      long[] shape = t.shape();
      if (gpt2 && isProjection(name)) {
        // Conv1D keeps [in, out]; the converter wrote the transpose, llama.cpp's [out][in]: read
        // transposed from the file's blocks by whoever reads floats (a session that widens or
        // requantizes them), while a repacker reads the file's rows as they lie. Even a file
        // served on its blocks keeps this view: a spec may still read its floats
        out.put(name, GgufBlocks.transposedView(name, t));
      } else if (q != null && isProjection(name)) {
        // the file's blocks, repacked into MatMulNBits' when the session is made
        out.put(name, GgufBlocks.decoded(name, t, rows));
      } else if (FLOATS.contains(t.type()) && rows == GgufBlocks.IN_PLACE
          && !(gemma && isNorm(name))) {
        DType dtype = DType.valueOf(t.type().name());
        out.put(name, new Tensor(name, dtype, shape, t.data()));
      } else if (t.ne().length == 1) {
        // norms and biases: small, and a permuted bias's elements are its rows. Gemma's norm
        // scales by 1 + w, and its converter wrote 1 + w (computed in fp32): w again, so the
        // graph's 1 + w is the file's value (exactly where it is 0.5 or more, within 2^-24
        // below)
        float[] v = new float[(int) t.ne()[0]];
        GgufBlocks.dequantizeRow(t, 0, v);
        float shift = gemma && isNorm(name) ? 1 : 0;
        MemorySegment data = arena.allocate(4L * v.length, 64);
        for (int i = 0; i < v.length; i++) {
          data.setAtIndex(java.lang.foreign.ValueLayout.JAVA_FLOAT, i,
              v[rows.sourceRow(i)] - shift);
        }
        out.put(name, new Tensor(name, DType.F32, shape, data));
      } else {
        out.put(name, GgufBlocks.decoded(name, t, rows));
      }
    }
    QuantMode requantize = q != null ? QuantMode.NONE : nearestMode(names);
    Set<String> offsetWeights = new TreeSet<>();
    Map<GgmlType, Integer> projectionTypes = new TreeMap<>();
    names.forEach((name, t) -> {
      if (isProjection(name)) {
        projectionTypes.merge(t.type(), 1, Integer::sum);
        if (requantize != QuantMode.NONE && t.type() == GgmlType.Q4_K) {
          offsetWeights.add(name);
        }
      }
    });
    Set<String> q8Tables = new TreeSet<>();
    names.forEach((name, t) -> {
      if (TABLES.contains(name) && t.type() == GgmlType.Q8_0) {
        q8Tables.add(name);
      }
    });
    return new GgufTensors(config, out, q, projectionType, types, ropeFactors, requantize,
        Set.copyOf(offsetWeights), projectionTypes, Set.copyOf(q8Tables));
  }

  /** A 1-D tensor's values (rope factors), or null without the tensor. */
  private static float[] vector(GgufFile.TensorInfo t) {
    if (t == null) {
      return null;
    }
    float[] v = new float[(int) t.ne()[0]];
    GgufBlocks.dequantizeRow(t, 0, v);
    return v;
  }

  /** An RMSNorm's weight (Llama family and Gemma: {@code *norm.weight}, one dimension). */
  private static boolean isNorm(String canonical) {
    return canonical.endsWith("norm.weight");
  }

  /** A linear layer's weight: Llama's {@code layers.N.*_proj.weight}, GPT-2's {@code h.N.*}. */
  static boolean isProjection(String canonical) {
    return canonical.startsWith("layers.") && canonical.endsWith("_proj.weight")
        || canonical.startsWith("h.") && (canonical.endsWith("c_attn.weight")
            || canonical.endsWith("c_proj.weight") || canonical.endsWith("c_fc.weight"));
  }

  /**
   * The block type the projections are served in: Q8_0 or Q4_0 when every projection is in it
   * (repacked, never requantized); F32 otherwise, standing for projections served as floats: F32,
   * F16 and BF16 as stored, and every other type (K-quants, Q4_1/Q5_x, or a file mixing types,
   * as llama-quantize's _M/_S mixes do) dequantized at load exactly as ggml does.
   */
  private static GgmlType projectionType(Map<String, GgufFile.TensorInfo> names) {
    Set<GgmlType> types = new TreeSet<>();
    for (Map.Entry<String, GgufFile.TensorInfo> e : names.entrySet()) {
      if (isProjection(e.getKey())) {
        types.add(e.getValue().type());
      }
    }
    return types.size() == 1 && GgufBlocks.repackable(types.iterator().next())
        ? types.iterator().next() : GgmlType.F32;
  }

  /**
   * The MatMulNBits mode for a file in blocks no mode takes bit for bit: int8 for every K-quant
   * and for Q4_1, Q5_*, Q6_K; int4 only for a file whose projections are mostly Q4_0; NONE when
   * most are floats. Q4_1 and Q4_K hold a fractional offset per block (d·q − m), which
   * MatMulNBits' integer zero points cannot carry: re-rounded onto its 4-bit grid, each block's
   * 32 weights shift together by up to half a step, and on the Llama-3.2-1B shape a Q4_K_M file
   * so served gave mean |Δ logprob| 0.60 and 5/32 top-1 against the file's own weights (int8:
   * 0.047, 30/32; docs/benchmarks/journal/2026-11-28b-gguf.md). A Q4_K projection is therefore
   * served on its own codes with the offset per block added back ({@link #offsetWeights}) beside
   * this mode (since 2026-12-02 under auto too: docs/benchmarks/journal/2026-12-02c-q4k-auto.md).
   * A mixed file (llama-quantize's Q4_K_M keeps some layers in Q6_K) takes this one mode for its
   * other layers.
   */
  static QuantMode nearestMode(Map<String, GgufFile.TensorInfo> names) {
    long four = 0;
    long more = 0;
    long floats = 0;
    for (Map.Entry<String, GgufFile.TensorInfo> e : names.entrySet()) {
      if (!isProjection(e.getKey())) {
        continue;
      }
      GgufFile.TensorInfo t = e.getValue();
      switch (t.type()) {
        case Q4_0 -> four += t.elementCount();
        case F32, F16, BF16 -> floats += t.elementCount();
        default -> more += t.elementCount();
      }
    }
    if (floats >= four + more) {
      return QuantMode.NONE;
    }
    return four >= more ? QuantMode.INT4 : QuantMode.INT8;
  }

  /** Llama's q/k rows (weights and biases) are stored permuted; every other tensor in place. */
  private static GgufBlocks.RowMap rows(String arch, LlamaConfig c, String name,
      GgufFile.TensorInfo t) {
    if (!arch.equals("llama")) {
      return GgufBlocks.IN_PLACE;
    }
    int heads;
    if (name.endsWith("self_attn.q_proj.weight") || name.endsWith("self_attn.q_proj.bias")) {
      heads = c.nHeads();
    } else if (name.endsWith("self_attn.k_proj.weight")
        || name.endsWith("self_attn.k_proj.bias")) {
      heads = c.kvHeads();
    } else {
      return GgufBlocks.IN_PLACE;
    }
    // a bias's elements are permuted as the weight's rows are
    return GgufBlocks.unpermute((int) t.ne()[t.ne().length - 1], heads);
  }

  /** e.g. {@code F32 ×5, Q8_0 ×14}. */
  String describeTypes() {
    return describe(types);
  }

  /**
   * What each ggml type of the projections is served as unless another mode is configured, e.g.
   * {@code Q4_K ×5 as MatMulNBits int4 on the file's own codes + ... (--quantization int8:
   * requantized), Q6_K ×2 requantized to int8}.
   */
  String describeProjections() {
    StringBuilder b = new StringBuilder();
    projectionTypes.forEach((type, n) -> b.append(b.isEmpty() ? "" : ", ").append(type)
        .append(" ×").append(n).append(" ").append(
            quantization != null ? "repacked bit for bit (MatMulNBits " + quantization.bits()
                + "-bit, block 32)"
            : requantize == QuantMode.NONE ? "as floats"
            : type != GgmlType.Q4_K ? "requantized to " + requantize.label()
            : OFFSETS + " (--quantization int8: requantized to int8)"));
    return b.toString();
  }

  private static String describe(Map<GgmlType, Integer> counts) {
    StringBuilder b = new StringBuilder();
    counts.forEach((type, n) -> b.append(b.isEmpty() ? "" : ", ").append(type).append(" ×")
        .append(n));
    return b.toString();
  }
}
