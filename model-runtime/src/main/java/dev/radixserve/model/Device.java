package dev.radixserve.model;

import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.model.graph.KvDtype;
import dev.radixserve.model.ort.CudaProvider;

/**
 * Where the model runs and in which precision.
 *
 * @param kind CPU (ONNX Runtime's CPU provider) or CUDA
 * @param dtype what the graph computes and the KV pool stores in
 * @param cuda provider settings; used only on CUDA
 */
public record Device(Kind kind, GraphDtype dtype, CudaProvider.Settings cuda) {

  public enum Kind {
    CPU,
    CUDA;

    /** The setting's spelling: {@code cpu}, {@code cuda}. */
    public String settingName() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  public Device {
    if (kind == Kind.CPU && dtype == GraphDtype.BFLOAT16) {
      throw new IllegalArgumentException("dtype bfloat16 runs only on --device cuda (the CPU"
          + " kernels are fp32, with an fp16 stand-in for tests)");
    }
  }

  /** The CPU default: fp32, the runner radixserve has always used. */
  public static Device cpu() {
    return new Device(Kind.CPU, GraphDtype.FLOAT32, new CudaProvider.Settings(0, false));
  }

  /** CUDA device {@code id} in fp16, without TF32. */
  public static Device cuda(int id) {
    return new Device(Kind.CUDA, GraphDtype.FLOAT16, new CudaProvider.Settings(id, false));
  }

  public Device withDtype(GraphDtype dtype) {
    return new Device(kind, dtype, cuda);
  }

  /**
   * The CPU's fp32 graph: the plain runner, whose pool is host memory read by radixserve's own
   * attention kernel (every {@link KvDtype}) and whose footprint {@code MemoryPlan} covers.
   */
  public boolean cpuFp32() {
    return kind == Kind.CPU && dtype == GraphDtype.FLOAT32;
  }

  /**
   * The KV pool's dtype under {@code --kv-cache-dtype auto}: on the CPU's fp32 graph bfloat16
   * beside quantized weights, else the graph's own ({@link KvDtype#of}).
   *
   * <p>Why: quantized weights already move the logits far more than rounding keys and values to
   * bfloat16 does (mean |Δ logprob| 0.00003 for a bf16 pool against 0.0070 for int8 weights on
   * the trained model of {@code bench/quant-accuracy}), while the pool costs half the memory, and
   * a whole-context pool half the start-up; llama.cpp keeps its cache in f16 and vLLM in the
   * model's dtype. Weights served exactly keep an fp32 pool, so their tokens and logprobs stay
   * those checked against transformers.
   */
  public KvDtype autoKvDtype(boolean quantizedWeights) {
    return cpuFp32() && quantizedWeights ? KvDtype.BFLOAT16 : KvDtype.of(dtype);
  }

  /**
   * Checks that this device's runner can keep its KV pool in {@code kv}; returns it.
   *
   * <p>The CPU's fp32 graph takes every {@link KvDtype} (radixserve's kernel converts on load).
   * The CPU's fp16 graph is a stand-in for the CUDA one and stores fp16. On CUDA the node is ONNX
   * Runtime's own PagedAttention, whose caches are float16 or bfloat16 (bound in the graph's
   * dtype here), or int8/float8e4m3fn with static per-tensor or per-channel scales ({@code
   * k_scale}/{@code v_scale}, {@code k_quant_type}) calibrated ahead of time; it has no fp32
   * cache, and no scales written per row as radixserve's CPU kernel writes them.
   *
   * @throws IllegalArgumentException naming the setting and what this device takes
   */
  public KvDtype requireKvDtype(KvDtype kv) {
    KvDtype own = KvDtype.of(dtype);
    if (cpuFp32() || kv == own) {
      return kv;
    }
    if (kind == Kind.CPU) {
      throw new IllegalArgumentException("kv-cache-dtype " + kv.settingName() + " needs the fp32"
          + " CPU graph (dtype float32); the " + dtype.settingName() + " CPU graph stores its KV"
          + " cache in " + own.settingName());
    }
    String why = switch (kv) {
      case FLOAT32 -> "ONNX Runtime's CUDA PagedAttention has no float32 cache";
      case INT8, FP8 -> "ONNX Runtime's CUDA PagedAttention reads " + kv.settingName()
          + " caches only with static per-tensor or per-channel scales calibrated ahead of"
          + " time (k_scale/v_scale); the per-row scales of kv-cache-dtype " + kv.settingName()
          + " are written by radixserve's CPU kernel only";
      case FLOAT16, BFLOAT16 -> "on CUDA the cache is kept in the graph's dtype";
    };
    throw new IllegalArgumentException("kv-cache-dtype " + kv.settingName() + " is not available"
        + " on cuda with dtype " + dtype.settingName() + ": " + why + " (use auto or "
        + own.settingName() + ")");
  }
}
