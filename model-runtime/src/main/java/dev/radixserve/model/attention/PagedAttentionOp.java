package dev.radixserve.model.attention;

import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.ort.CustomKernel;
import dev.radixserve.model.ort.CustomOp;
import dev.radixserve.model.ort.CustomOp.Port;
import dev.radixserve.model.ort.CustomOpDomain;
import dev.radixserve.model.ort.ElementType;
import dev.radixserve.model.ort.KernelContext;
import dev.radixserve.model.ort.KernelInfo;
import dev.radixserve.model.ort.TensorView;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.List;

/**
 * radixserve's CPU kernel for ONNX Runtime's contrib op {@code com.microsoft.PagedAttention}
 * (ONNX Runtime ships it for CUDA only): the same inputs, outputs and attributes; fp32
 * activations, and caches of any {@link KvDtype} (one registered variant per cache type, which
 * ONNX Runtime picks by the caches' element type: float, bfloat16, float16, int8, and uint8 for
 * fp8 e4m3fn codes).
 *
 * <pre>
 *   inputs   0 query [T, H*D]  1 key [T, KVH*D]  2 value [T, KVH*D]
 *            3 key_cache  4 value_cache  [num_blocks, B, KVH, D] (int8/fp8: [.., KVH, 4 + D]
 *              bytes, each head row its float32 scale then its codes: {@link KvDtype})
 *            5 cumulative_sequence_length int32 [S+1]  6 past_seqlens int32 [S]
 *            7 block_table int32 [S, max_blocks]      8 cos_cache, 9 sin_cache (rotary: refused)
 *   outputs  0 output [T, H*D]   1 key_cache_out  2 value_cache_out   (the caches, in place)
 *   attrs    num_heads, kv_num_heads, scale (0: 1/sqrt(D)); local_window_size (-1: none; else
 *            the positions a query sees, itself included: Hugging Face's sliding_window as it
 *            is) and softcap (0: none), as {@link ScoreRule} defines them; do_rotary only at
 *            its default
 * </pre>
 *
 * In place means the caller binds {@code key_cache_out} to the very buffer of {@code key_cache}
 * (and likewise the values): the kernel writes only the new tokens' slots, and refuses to run when
 * the outputs are other buffers rather than copy whole pools.
 */
public final class PagedAttentionOp implements CustomOp.Definition {

  public static final String DOMAIN = "com.microsoft";
  public static final String NAME = "PagedAttention";

  private static final CustomOpDomain PROCESS_DOMAIN = CustomOpDomain.create(DOMAIN, List.of(
      CustomOp.of(new PagedAttentionOp(KvDtype.FLOAT32)),
      CustomOp.of(new PagedAttentionOp(KvDtype.BFLOAT16)),
      CustomOp.of(new PagedAttentionOp(KvDtype.FLOAT16)),
      CustomOp.of(new PagedAttentionOp(KvDtype.INT8)),
      CustomOp.of(new PagedAttentionOp(KvDtype.FP8)),
      CustomOp.of(new HalfPagedAttentionOp())));

  /** Nanoseconds spent in the kernel, every node of every session (a diagnostic counter). */
  private static final java.util.concurrent.atomic.LongAdder KERNEL_NANOS =
      new java.util.concurrent.atomic.LongAdder();

  private final RowAttention math;
  private final KvDtype kv;

  PagedAttentionOp(KvDtype kv) {
    this.math = RowAttention.best(kv);
    this.kv = kv;
  }

  /**
   * The process-wide domain holding this op (with the Vector API kernel when the JVM has it):
   * add it to the options of every session whose graph uses the op. Never released: sessions
   * keep pointers to it.
   */
  public static CustomOpDomain domain() {
    return PROCESS_DOMAIN;
  }

  /**
   * Nanoseconds this process spent inside the kernel so far (validation, writes and attention of
   * every node): benchmarks read it before and after a step to split the step's time.
   */
  public static long kernelNanos() {
    return KERNEL_NANOS.sum();
  }

  /** Whether this JVM runs the vectorised kernel ({@code --add-modules jdk.incubator.vector}). */
  public static boolean vectorized() {
    return RowAttention.VectorSupport.AVAILABLE;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<Port> inputs() {
    return ports(ElementType.FLOAT, kv.element());
  }

  @Override
  public List<Port> outputs() {
    return outputPorts(ElementType.FLOAT, kv.element());
  }

  /**
   * The op's 17 inputs (ONNX Runtime 1.29) with activations and caches of type {@code t}: 0-7 as
   * above; optional 8-9 cos/sin caches, 10 slot_mapping, 11 head_sink, 12-13 q/k norm weights,
   * 14-15 k/v scales, 16 attention_metadata. Only 16 is used (and ignored: it only sizes CUDA
   * launches); the others are refused when present.
   */
  static List<Port> ports(ElementType t, ElementType cache) {
    Port f = Port.required(t);
    Port c = Port.required(cache);
    Port i = Port.required(ElementType.INT32);
    Port of = Port.optional(t);
    Port oi = Port.optional(ElementType.INT32);
    Port scale = Port.optional(ElementType.FLOAT);
    return List.of(f, f, f, c, c, i, i, i, of, of, oi, of, of, of, scale, scale, oi);
  }

  static List<Port> outputPorts(ElementType t, ElementType cache) {
    Port c = Port.required(cache);
    return List.of(Port.required(t), c, c);
  }

  @Override
  public CustomKernel createKernel(KernelInfo info) {
    return new NodeKernel((int) info.int64("num_heads", 0), (int) info.int64("kv_num_heads", 0),
        info.float32("scale", 0f), scoreRule(info));
  }

  /**
   * The node's window and soft cap; refuses the attributes the CPU kernels do not implement
   * (rotary: the graphs apply it before the node) and values ONNX Runtime gives no meaning.
   */
  static ScoreRule scoreRule(KernelInfo info) {
    if (info.int64("do_rotary", 0) != 0) {
      throw new IllegalArgumentException("do_rotary is not supported on the CPU");
    }
    return ScoreRule.fromAttributes(info.int64("local_window_size", -1),
        info.float32("softcap", 0f));
  }

  /** One graph node's kernel; ONNX Runtime runs a node on one thread at a time. */
  private final class NodeKernel implements CustomKernel {
    private final int heads;
    private final int kvHeads;
    private final float scale;
    private final ScoreRule rule;
    private PagedAttentionKernel kernel;

    NodeKernel(int heads, int kvHeads, float scale, ScoreRule rule) {
      this.heads = heads;
      this.kvHeads = kvHeads;
      this.scale = scale;
      this.rule = rule;
    }

    @Override
    public void compute(KernelContext context) {
      PagedAttentionStep step = PagedAttentionOp.step(context, heads, kvHeads, kv);
      if (kernel == null || kernel.headSize() != step.headSize()) {
        kernel = new PagedAttentionKernel(heads, kvHeads, step.headSize(), scale, rule, math, kv);
      }
      long t0 = System.nanoTime();
      try {
        kernel.run(step, context::parallelFor);
      } finally {
        KERNEL_NANOS.add(System.nanoTime() - t0);
      }
    }
  }

  /**
   * Reads and checks the node's tensors, the caches holding {@code kv}; binds the output buffer.
   * The head size is the query's width over {@code heads}.
   */
  static PagedAttentionStep step(KernelContext ctx, int heads, int kvHeads, KvDtype kv) {
    TensorView query = ctx.input(0);
    TensorView keyCache = ctx.input(3);
    TensorView valueCache = ctx.input(4);
    requireRank("query", query, 2);
    requireRank("key_cache", keyCache, 4);
    if (!Arrays.equals(keyCache.shape(), valueCache.shape())) {
      throw new IllegalArgumentException("key_cache " + keyCache + " and value_cache "
          + valueCache + " differ");
    }
    int tokens = (int) query.dim(0);
    if (heads <= 0 || query.dim(1) % heads != 0) {
      throw new IllegalArgumentException("query " + query + " is not num_heads " + heads
          + " rows wide");
    }
    int headSize = (int) (query.dim(1) / heads);
    if (keyCache.dim(2) != kvHeads || keyCache.dim(3) != kv.cacheLastDim(headSize)) {
      throw new IllegalArgumentException("query " + query + " and key_cache " + keyCache
          + " do not fit num_heads " + heads + ", kv_num_heads " + kvHeads + " with a "
          + kv.settingName() + " cache (last dimension " + kv.cacheLastDim(headSize) + ")");
    }
    TensorView key = requireShape("key", ctx.input(1), tokens, (long) kvHeads * headSize);
    TensorView value = requireShape("value", ctx.input(2), tokens, (long) kvHeads * headSize);
    if (ctx.hasInput(8) || ctx.hasInput(9)) {
      throw new IllegalArgumentException("cos_cache/sin_cache given, but rotary is not supported");
    }
    for (int unsupported = 10; unsupported <= 15; unsupported++) {
      if (ctx.hasInput(unsupported)) {
        throw new IllegalArgumentException("PagedAttention input " + unsupported
            + " (slot_mapping, head_sink, q/k norm weights, k/v scales) is not supported on the CPU");
      }
    }
    TensorView cu = ctx.input(5);
    TensorView past = ctx.input(6);
    TensorView table = ctx.input(7);
    requireRank("block_table", table, 2);
    TensorView output = ctx.output(0, tokens, (long) heads * headSize);
    requireInPlace("key", keyCache, ctx.output(1, keyCache.shape()));
    requireInPlace("value", valueCache, ctx.output(2, valueCache.shape()));
    return new PagedAttentionStep(query.data(), key.data(), value.data(), keyCache.data(),
        valueCache.data(), output.data(), tokens, (int) keyCache.dim(0), (int) keyCache.dim(1),
        headSize, ints(cu), ints(past), ints(table), (int) table.dim(1));
  }

  private static void requireRank(String name, TensorView t, int rank) {
    if (t.rank() != rank) {
      throw new IllegalArgumentException(name + " must have rank " + rank + ", got " + t);
    }
  }

  private static TensorView requireShape(String name, TensorView t, long... shape) {
    if (!Arrays.equals(t.shape(), shape)) {
      throw new IllegalArgumentException(name + " must be " + Arrays.toString(shape) + ", got "
          + t);
    }
    return t;
  }

  private static void requireInPlace(String which, TensorView in, TensorView out) {
    if (in.data().address() != out.data().address()) {
      throw new IllegalArgumentException(which + "_cache_out must be bound to the " + which
          + "_cache buffer (the cache is updated in place)");
    }
  }

  private static int[] ints(TensorView t) {
    return t.data().toArray(ValueLayout.JAVA_INT);
  }
}
