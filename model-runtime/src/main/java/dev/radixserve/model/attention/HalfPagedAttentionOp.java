package dev.radixserve.model.attention;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.ort.CustomKernel;
import dev.radixserve.model.ort.CustomOp;
import dev.radixserve.model.ort.CustomOp.Port;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.KernelContext;
import dev.radixserve.model.ort.KernelInfo;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * A CPU stand-in for ONNX Runtime's fp16 CUDA kernel of {@code com.microsoft.PagedAttention}, so
 * the fp16 graph that runs on a GPU also runs in the CPU test suite: the same inputs, in-place
 * cache writes and validation as {@link PagedAttentionOp}, with fp16 activations and caches.
 *
 * <p>Like the CUDA kernel it stores in fp16 and accumulates in fp32: scores, softmax and the
 * weighted sum of values are float; only the output row is rounded to fp16. Scalar and simple:
 * it exists to check the fp16 graph and the device pool on the CPU, not to serve.
 */
final class HalfPagedAttentionOp implements CustomOp.Definition {

  private static final GraphDtype HALF = GraphDtype.FLOAT16;

  @Override
  public String name() {
    return PagedAttentionOp.NAME;
  }

  @Override
  public List<Port> inputs() {
    return PagedAttentionOp.ports(ElementType.FLOAT16, ElementType.FLOAT16);
  }

  @Override
  public List<Port> outputs() {
    return PagedAttentionOp.outputPorts(ElementType.FLOAT16, ElementType.FLOAT16);
  }

  @Override
  public CustomKernel createKernel(KernelInfo info) {
    ScoreRule rule = PagedAttentionOp.scoreRule(info);
    int heads = (int) info.int64("num_heads", 0);
    int kvHeads = (int) info.int64("kv_num_heads", 0);
    float scale = info.float32("scale", 0f);
    return context -> {
      PagedAttentionStep step = PagedAttentionOp.step(context, heads, kvHeads, KvDtype.FLOAT16);
      new PagedAttentionKernel(heads, kvHeads, step.headSize(), scale, rule, null,
          KvDtype.FLOAT16).validate(step);
      run(step, heads, kvHeads, scale == 0 ? (float) (1.0 / Math.sqrt(step.headSize())) : scale,
          rule, context);
    };
  }

  private static void run(PagedAttentionStep s, int heads, int kvHeads, float scale,
      ScoreRule rule, KernelContext context) {
    int d = s.headSize();
    long rowBytes = (long) kvHeads * d * HALF.bytes();
    for (int q = 0; q < s.sequences(); q++) {
      for (int t = s.cuSeqlens()[q]; t < s.cuSeqlens()[q + 1]; t++) {
        long slot = PagedAttentionKernel.slot(s, q, s.pastLens()[q] + t - s.cuSeqlens()[q]);
        MemorySegment.copy(s.key(), t * rowBytes, s.keyCache(), slot * rowBytes, rowBytes);
        MemorySegment.copy(s.value(), t * rowBytes, s.valueCache(), slot * rowBytes, rowBytes);
      }
    }
    int[] seqOf = new int[s.tokens()];
    for (int q = 0; q < s.sequences(); q++) {
      for (int t = s.cuSeqlens()[q]; t < s.cuSeqlens()[q + 1]; t++) {
        seqOf[t] = q;
      }
    }
    context.parallelFor(s.tokens() * heads,
        item -> attend(s, seqOf, item / heads, item % heads, heads, kvHeads, scale, rule));
  }

  /**
   * Output row of token {@code t}, head {@code h}: softmax(cap(scale q·K)) V over positions
   * [from, p], from = 0 or the window's first ({@link ScoreRule}); earlier slots are not read.
   */
  private static void attend(PagedAttentionStep s, int[] seqOf, int t, int h, int heads,
      int kvHeads, float scale, ScoreRule rule) {
    int d = s.headSize();
    int q = seqOf[t];
    int position = s.pastLens()[q] + t - s.cuSeqlens()[q];
    long queryBase = ((long) t * heads + h) * d;
    long kvOffset = (long) (h / (heads / kvHeads)) * d;
    float[] query = new float[d];
    for (int k = 0; k < d; k++) {
      query[k] = HALF.load(s.query(), queryBase + k);
    }
    int from = rule.from(position + 1);
    float[] scores = new float[position + 1 - from]; // position j at j - from
    float max = Float.NEGATIVE_INFINITY;
    for (int j = from; j <= position; j++) {
      long base = PagedAttentionKernel.slot(s, q, j) * kvHeads * d + kvOffset;
      float dot = 0;
      for (int k = 0; k < d; k++) {
        dot += query[k] * HALF.load(s.keyCache(), base + k);
      }
      scores[j - from] = rule.cap(dot * scale);
      max = Math.max(max, scores[j - from]);
    }
    float sum = 0;
    for (int j = from; j <= position; j++) {
      scores[j - from] = (float) Math.exp(scores[j - from] - max);
      sum += scores[j - from];
    }
    float[] out = new float[d];
    for (int j = from; j <= position; j++) {
      long base = PagedAttentionKernel.slot(s, q, j) * kvHeads * d + kvOffset;
      float w = scores[j - from] / sum;
      for (int k = 0; k < d; k++) {
        out[k] += w * HALF.load(s.valueCache(), base + k);
      }
    }
    for (int k = 0; k < d; k++) {
      HALF.store(s.output(), queryBase + k, out[k]);
    }
  }
}
