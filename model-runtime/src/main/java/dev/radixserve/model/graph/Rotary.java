package dev.radixserve.model.graph;

import static dev.radixserve.model.graph.GraphBuilder.attr;

import ai.onnx.proto.OnnxMl.AttributeProto;
import dev.radixserve.model.LlamaConfig;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Rotary position embedding in Hugging Face's half-split layout ({@code rotate_half}: pairs are
 * (i, i + D/2)) by ONNX Runtime's {@code com.microsoft.RotaryEmbedding}, one node per projection
 * instead of ten elementwise ones, shared by the rotary families.
 *
 * <p>Each distinct {@link LlamaConfig.Rope} gets its cos/sin tables, [max_positions, D/2] each,
 * with the angle rounded to fp32 first, times the rope's attention factor, as Hugging Face
 * computes them (128 k positions × 64 cost
 * 2 × 32 MB); a family with a rope per layer type (Gemma 3) gets one pair per type.
 */
final class Rotary {

  private final GraphBuilder g;
  private final GraphDtype dt;
  private final int headDim;
  private final int positions;
  private final String positionIds;
  private final Map<LlamaConfig.Rope, String[]> tables = new HashMap<>();

  /** @param positions rows of the tables: the model's max_position_embeddings */
  Rotary(GraphBuilder g, PagedIo io, int headDim, int positions) {
    this.g = g;
    this.dt = io.dt;
    this.headDim = headDim;
    this.positions = positions;
    this.positionIds = g.op("Unsqueeze", "position_ids", io.positions, g.ints(1));      // [T, 1]
  }

  /** {@code x} [T, heads*D] rotated by {@code rope} at each token's absolute position. */
  String apply(String x, int heads, LlamaConfig.Rope rope, String name) {
    String[] cosSin = tables.computeIfAbsent(rope, this::tables);
    // [T, 1, h*D]: each token its own batch row, since RotaryEmbedding refuses a sequence axis
    // longer than its tables, and a step's T tokens (several sequences) may exceed the positions
    String batched = g.op("Unsqueeze", "batched", x, g.ints(1));
    List<AttributeProto> attrs = new java.util.ArrayList<>(List.of(attr("interleaved", 0L),
        attr("num_heads", (long) heads)));
    int dims = rope.rotaryDim(headDim);
    if (dims != headDim) {
      // partial_rotary_factor (Phi-4-mini): the first dims of each head rotate, the rest pass
      // through, as transformers' apply_rotary_pos_emb slices them
      attrs.add(attr("rotary_embedding_dim", (long) dims));
    }
    g.node("RotaryEmbedding", "com.microsoft", name + "/RotaryEmbedding",
        List.of(batched, positionIds, cosSin[0], cosSin[1]), List.of(name),
        attrs.toArray(AttributeProto[]::new));
    return g.op("Squeeze", "unbatched", name, g.ints(1));
  }

  private String[] tables(LlamaConfig.Rope rope) {
    double[] inv = rope.inverseFrequencies(headDim);
    // yarn's and longrope's attention factor scales cos and sin (transformers' attention_scaling)
    float attention = (float) rope.attentionFactor();
    int half = inv.length;
    float[] cosTable = new float[positions * half];
    float[] sinTable = new float[cosTable.length];
    for (int p = 0; p < positions; p++) {
      for (int i = 0; i < half; i++) {
        float angle = (float) p * (float) inv[i];
        cosTable[p * half + i] = (float) Math.cos(angle) * attention;
        sinTable[p * half + i] = (float) Math.sin(angle) * attention;
      }
    }
    return new String[] {
        toGraphType(g.floats(new long[] {positions, half}, cosTable)),
        toGraphType(g.floats(new long[] {positions, half}, sinTable))};
  }

  /** An fp32 constant in the graph's type (RotaryEmbedding takes its tables in the input's). */
  private String toGraphType(String fp32) {
    return dt == GraphDtype.FLOAT32 ? fp32
        : g.op("Cast", "table", List.of(fp32), attr("to", (long) dt.onnxType()));
  }
}
