package dev.radixserve.model.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The custom-operator half of ONNX Runtime's C API: custom op domains, kernel info attributes and
 * the kernel context a custom kernel reads its inputs from, allocates its outputs in and runs
 * {@code ParallelFor} on ONNX Runtime's intra-op thread pool. Same table and status handling as
 * {@link OrtApi}; field positions counted as there.
 */
final class OrtKernelApi {

  private static final int CREATE_CUSTOM_OP_DOMAIN = 26;
  private static final int CUSTOM_OP_DOMAIN_ADD = 27;
  private static final int ADD_CUSTOM_OP_DOMAIN = 28;
  private static final int KERNEL_INFO_GET_ATTRIBUTE_FLOAT = 85;
  private static final int KERNEL_INFO_GET_ATTRIBUTE_INT64 = 86;
  private static final int KERNEL_CONTEXT_GET_INPUT_COUNT = 88;
  private static final int KERNEL_CONTEXT_GET_OUTPUT_COUNT = 89;
  private static final int KERNEL_CONTEXT_GET_INPUT = 90;
  private static final int KERNEL_CONTEXT_GET_OUTPUT = 91;
  private static final int RELEASE_CUSTOM_OP_DOMAIN = 101;
  private static final int KERNEL_CONTEXT_PARALLEL_FOR = 274;

  /** ORT_INVALID_ARGUMENT: the code a kernel returns for inputs it cannot run. */
  static final int INVALID_ARGUMENT = 2;
  /** ORT_FAIL. */
  static final int FAIL = 1;

  private static final FunctionDescriptor STATUS_OF_PTR_PTR =
      FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);

  private final OrtApi api;
  private final MethodHandle createCustomOpDomain;
  private final MethodHandle customOpDomainAdd;
  private final MethodHandle addCustomOpDomain;
  private final MethodHandle attributeFloat;
  private final MethodHandle attributeInt64;
  private final MethodHandle inputCount;
  private final MethodHandle outputCount;
  private final MethodHandle input;
  private final MethodHandle output;
  private final MethodHandle releaseCustomOpDomain;
  private final MethodHandle parallelFor;

  private OrtKernelApi(OrtApi api) {
    this.api = api;
    createCustomOpDomain = api.bind(CREATE_CUSTOM_OP_DOMAIN, STATUS_OF_PTR_PTR);
    customOpDomainAdd = api.bind(CUSTOM_OP_DOMAIN_ADD, STATUS_OF_PTR_PTR);
    addCustomOpDomain = api.bind(ADD_CUSTOM_OP_DOMAIN, STATUS_OF_PTR_PTR);
    FunctionDescriptor attribute = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS);
    attributeFloat = api.bind(KERNEL_INFO_GET_ATTRIBUTE_FLOAT, attribute);
    attributeInt64 = api.bind(KERNEL_INFO_GET_ATTRIBUTE_INT64, attribute);
    inputCount = api.bind(KERNEL_CONTEXT_GET_INPUT_COUNT, STATUS_OF_PTR_PTR);
    outputCount = api.bind(KERNEL_CONTEXT_GET_OUTPUT_COUNT, STATUS_OF_PTR_PTR);
    input = api.bind(KERNEL_CONTEXT_GET_INPUT,
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    output = api.bind(KERNEL_CONTEXT_GET_OUTPUT,
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
    releaseCustomOpDomain = api.bind(RELEASE_CUSTOM_OP_DOMAIN, FunctionDescriptor.ofVoid(ADDRESS));
    parallelFor = api.bind(KERNEL_CONTEXT_PARALLEL_FOR,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG, ADDRESS));
  }

  static OrtKernelApi get() {
    return Holder.INSTANCE;
  }

  private static final class Holder {
    static final OrtKernelApi INSTANCE = new OrtKernelApi(OrtApi.get());
  }

  OrtApi api() {
    return api;
  }

  MemorySegment createCustomOpDomain(MemorySegment name, MemorySegment out) {
    api.callPtr(createCustomOpDomain, name, out);
    return out.get(ADDRESS, 0);
  }

  void customOpDomainAdd(MemorySegment domain, MemorySegment op) {
    api.callPtr(customOpDomainAdd, domain, op);
  }

  void addCustomOpDomain(MemorySegment options, MemorySegment domain) {
    api.callPtr(addCustomOpDomain, options, domain);
  }

  void releaseCustomOpDomain(MemorySegment domain) {
    try {
      releaseCustomOpDomain.invokeExact(domain);
    } catch (Throwable t) {
      throw OrtApi.rethrow(t);
    }
  }

  /** The attribute's value, or {@code null} when the node does not have it. */
  Float attributeFloat(MemorySegment info, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = attribute(attributeFloat, info, name, arena.allocate(JAVA_FLOAT), arena);
      return out == null ? null : out.get(JAVA_FLOAT, 0);
    }
  }

  /** The attribute's value, or {@code null} when the node does not have it. */
  Long attributeInt64(MemorySegment info, String name) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = attribute(attributeInt64, info, name, arena.allocate(JAVA_LONG), arena);
      return out == null ? null : out.get(JAVA_LONG, 0);
    }
  }

  /** Calls a {@code KernelInfoGetAttribute_*} getter into {@code out}; null when absent. */
  private MemorySegment attribute(MethodHandle getter, MemorySegment info, String name,
      MemorySegment out, Arena arena) {
    try {
      MemorySegment status = (MemorySegment) getter.invokeExact(info, arena.allocateFrom(name),
          out);
      return absentOrChecked(status) ? null : out;
    } catch (Throwable t) {
      throw OrtApi.rethrow(t);
    }
  }

  /**
   * ONNX Runtime reports a missing attribute as a FAIL status; any status here means "absent"
   * (the attribute has a type we asked for, or it is not there), so it is released, not thrown.
   */
  private boolean absentOrChecked(MemorySegment status) {
    if (status.address() == 0) {
      return false;
    }
    try {
      api.check(status);
    } catch (OrtException e) {
      return true;
    }
    return false;
  }

  long inputCount(MemorySegment context, MemorySegment out) {
    api.callPtr(inputCount, context, out);
    return out.get(JAVA_LONG, 0);
  }

  long outputCount(MemorySegment context, MemorySegment out) {
    api.callPtr(outputCount, context, out);
    return out.get(JAVA_LONG, 0);
  }

  /** The input's OrtValue, or NULL for an absent optional input. */
  MemorySegment input(MemorySegment context, long index, MemorySegment out) {
    try {
      api.check((MemorySegment) input.invokeExact(context, index, out));
    } catch (Throwable t) {
      throw OrtApi.rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment output(MemorySegment context, long index, MemorySegment dims, long rank,
      MemorySegment out) {
    try {
      api.check((MemorySegment) output.invokeExact(context, index, dims, rank, out));
    } catch (Throwable t) {
      throw OrtApi.rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  void parallelFor(MemorySegment context, MemorySegment fn, long total, long batches,
      MemorySegment userData) {
    try {
      api.check((MemorySegment) parallelFor.invokeExact(context, fn, total, batches, userData));
    } catch (Throwable t) {
      throw OrtApi.rethrow(t);
    }
  }
}
