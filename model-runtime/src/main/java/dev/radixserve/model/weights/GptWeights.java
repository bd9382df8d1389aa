package dev.radixserve.model.weights;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ModelWeights;
import dev.radixserve.model.graph.ActOrder;
import dev.radixserve.model.graph.PagedGpt2Graph;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.WeightLayout;
import java.lang.foreign.Arena;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * GPT-2 weights under canonical names (Hugging Face's, without the {@code transformer.} prefix),
 * shapes checked against the config. Conv1D layout: weights are {@code [in, out]}.
 *
 * <pre>
 *   wte.weight                 [vocab, embd]      (also the LM head when tied)
 *   wpe.weight                 [positions, embd]
 *   h.{i}.ln_1.weight|bias     [embd]
 *   h.{i}.attn.c_attn.weight   [embd, 3*embd]     bias [3*embd]   (q | k | v along out)
 *   h.{i}.attn.c_proj.weight   [embd, embd]       bias [embd]
 *   h.{i}.ln_2.weight|bias     [embd]
 *   h.{i}.mlp.c_fc.weight      [embd, inner]      bias [inner]     (inner: n_inner, 4*embd by default)
 *   h.{i}.mlp.c_proj.weight    [inner, embd]      bias [embd]
 *   ln_f.weight|bias           [embd]
 *   lm_head.weight             [vocab, embd]      (only when untied; nn.Linear layout [out, in])
 * </pre>
 *
 * Owns the arena its tensors live in; closing it releases (or unmaps) them.
 */
public final class GptWeights extends TensorSet implements ModelWeights {

  /** The untied LM head's name (Hugging Face's, never under {@code transformer.}). */
  public static final String LM_HEAD = "lm_head.weight";

  /** The Conv1D projections a GPTQ/AWQ checkpoint stores packed. */
  private static final Pattern PROJECTION =
      Pattern.compile("h\\.\\d+\\.(attn\\.c_attn|attn\\.c_proj|mlp\\.c_fc|mlp\\.c_proj)\\.weight");

  private final ModelConfig config;
  private final CheckpointQuantization quantization;

  /**
   * @param arena owner of the tensors' memory, closed with these weights (may be null for heap)
   */
  public GptWeights(ModelConfig config, Map<String, Tensor> tensors, Arena arena) {
    this(config, null, tensors, arena);
  }

  /**
   * @param quantization the checkpoint's GPTQ/AWQ quantization (its projections are stored as
   *     {@link #storedShapes}), or null for float weights
   * @param arena owner of the tensors' memory, closed with these weights (may be null for heap)
   */
  public GptWeights(ModelConfig config, CheckpointQuantization quantization,
      Map<String, Tensor> tensors, Arena arena) {
    super(tensors, storedShapes(config, quantization), arena);
    this.config = config;
    this.quantization = quantization;
  }

  /**
   * The tensors a checkpoint stores, with their shapes: {@link #expectedShapes}, except that
   * under a GPTQ/AWQ {@code quantization} each Conv1D projection's {@code .weight} is its packed
   * tensors. AutoGPTQ quantizes a Conv1D as the linear layer it computes (K = its {@code in}),
   * so they are packed as a Llama projection's are.
   *
   * @throws IllegalArgumentException when a projection's width does not fit the format
   */
  public static Map<String, long[]> storedShapes(ModelConfig c,
      CheckpointQuantization quantization) {
    return CheckpointLayers.storedShapes(expectedShapes(c), quantization,
        name -> PROJECTION.matcher(name).matches(), WeightLayout.IN_OUT);
  }

  @Override
  public CheckpointQuantization checkpointQuantization() {
    return quantization;
  }

  @Override
  public ModelConfig config() {
    return config;
  }

  /**
   * The graph; for a GPTQ act-order checkpoint, with a gather before each product whose groups
   * are not runs of consecutive inputs ({@link ActOrder}). Each of GPT-2's products reads its
   * own input, so none shares another's gather, except the MLP's c_proj: c_fc writes its outputs
   * (and adds its bias) in c_proj's input order, and GELU is elementwise, so c_proj needs none.
   */
  @Override
  public PagedGpt2Graph graph() {
    if (quantization == null || !quantization.actOrder()) {
      return new PagedGpt2Graph(config);
    }
    CheckpointLayers.ActOrderPlanner plan =
        new CheckpointLayers.ActOrderPlanner(quantization, tensors());
    for (int i = 0; i < config.nLayer(); i++) {
      String p = "h." + i + ".";
      plan.share(p + "attn.c_attn");
      plan.share(p + "attn.c_proj");
      plan.share(p + "mlp.c_fc");
      String down = p + "mlp.c_proj";
      if (plan.inPlace(down)) {
        plan.share(down);
      } else {
        plan.outputsInOrderOf(down, p + "mlp.c_fc");
      }
    }
    return new PagedGpt2Graph(config, plan.plan());
  }

  @Override
  public String describe() {
    ModelConfig c = config;
    return String.format("gpt2: %d layers, %d heads, n_embd %d, n_inner %d, n_positions %d,"
        + " vocab_size %d, %s, layer_norm_epsilon %s%nlm head     %s", c.nLayer(), c.nHead(),
        c.nEmbd(), c.nInner(), c.nPositions(), c.vocabSize(), c.activationFunction(),
        c.layerNormEpsilon(), c.tieWordEmbeddings() ? "wte.weight (tied)" : LM_HEAD + " (untied)")
        + (quantization == null ? "" : String.format("%nquantized   %s",
            quantization.describeServed()));
  }

  /** The LM head's tensor: {@code wte.weight} when tied, else {@code lm_head.weight}. */
  public static String lmHeadName(ModelConfig c) {
    return c.tieWordEmbeddings() ? "wte.weight" : LM_HEAD;
  }

  /** Every canonical tensor name with the shape the config implies, in a stable order. */
  public static Map<String, long[]> expectedShapes(ModelConfig c) {
    long e = c.nEmbd();
    long inner = c.nInner();
    Map<String, long[]> m = new LinkedHashMap<>();
    m.put("wte.weight", new long[] {c.vocabSize(), e});
    m.put("wpe.weight", new long[] {c.nPositions(), e});
    for (int i = 0; i < c.nLayer(); i++) {
      String p = "h." + i + ".";
      m.put(p + "ln_1.weight", new long[] {e});
      m.put(p + "ln_1.bias", new long[] {e});
      m.put(p + "attn.c_attn.weight", new long[] {e, 3 * e});
      m.put(p + "attn.c_attn.bias", new long[] {3 * e});
      m.put(p + "attn.c_proj.weight", new long[] {e, e});
      m.put(p + "attn.c_proj.bias", new long[] {e});
      m.put(p + "ln_2.weight", new long[] {e});
      m.put(p + "ln_2.bias", new long[] {e});
      m.put(p + "mlp.c_fc.weight", new long[] {e, inner});
      m.put(p + "mlp.c_fc.bias", new long[] {inner});
      m.put(p + "mlp.c_proj.weight", new long[] {inner, e});
      m.put(p + "mlp.c_proj.bias", new long[] {e});
    }
    m.put("ln_f.weight", new long[] {e});
    m.put("ln_f.bias", new long[] {e});
    if (!c.tieWordEmbeddings()) {
      m.put(LM_HEAD, new long[] {c.vocabSize(), e});
    }
    return m;
  }
}
