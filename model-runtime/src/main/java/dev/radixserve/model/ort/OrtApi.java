package dev.radixserve.model.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The few functions of ONNX Runtime's C API ({@code struct OrtApi}) this runtime uses, bound with
 * the Foreign Function &amp; Memory API.
 *
 * <p>{@code OrtApi} is a struct of function pointers that only ever grows at its end, so the
 * position of each function is fixed for a given API version and stays valid in later releases.
 * The indices below are the field positions in {@code onnxruntime_c_api.h} at
 * {@code ORT_API_VERSION} {@value #API_VERSION} (counted from {@code CreateStatus} = 0);
 * {@code OrtApiTest} calls every one of them.
 *
 * <p>Each {@code OrtStatus*}-returning call goes through {@link #check}, which turns a failure into
 * an {@link OrtException} carrying ONNX Runtime's message and releases the status.
 */
public final class OrtApi {

  /**
   * Requested API version: 23 (ONNX Runtime 1.23 and later, the first with the paged-attention
   * contrib op) has every function bound here and in {@link OrtKernelApi}
   * ({@code KernelContext_ParallelFor} is 17, {@code AddExternalInitializers} 12).
   */
  static final int API_VERSION = 23;
  /** Fields of {@code struct OrtApi} in version 23 ({@code CreateStatus} .. the last one). */
  static final int API_FIELDS = 390;

  // Field positions in struct OrtApi (stable across versions: the struct only grows at its end).
  private static final int CREATE_STATUS = 0;
  private static final int GET_ERROR_CODE = 1;
  private static final int GET_ERROR_MESSAGE = 2;
  private static final int CREATE_ENV = 3;
  private static final int CREATE_SESSION_FROM_ARRAY = 8;
  private static final int RUN = 9;
  private static final int CREATE_SESSION_OPTIONS = 10;
  private static final int SET_SESSION_EXECUTION_MODE = 13;
  private static final int ENABLE_PROFILING = 14;
  private static final int SET_SESSION_GRAPH_OPTIMIZATION_LEVEL = 23;
  private static final int SET_INTRA_OP_NUM_THREADS = 24;
  private static final int SET_INTER_OP_NUM_THREADS = 25;
  private static final int SESSION_GET_INPUT_COUNT = 30;
  private static final int SESSION_GET_OUTPUT_COUNT = 31;
  private static final int CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE = 49;
  private static final int GET_TENSOR_MUTABLE_DATA = 51;
  private static final int GET_TENSOR_ELEMENT_TYPE = 60;
  private static final int GET_DIMENSIONS_COUNT = 61;
  private static final int GET_DIMENSIONS = 62;
  private static final int GET_TENSOR_TYPE_AND_SHAPE = 65;
  private static final int CREATE_MEMORY_INFO = 68;
  private static final int CREATE_CPU_MEMORY_INFO = 69;
  private static final int RELEASE_ENV = 92;
  private static final int RELEASE_STATUS = 93;
  private static final int RELEASE_MEMORY_INFO = 94;
  private static final int RELEASE_SESSION = 95;
  private static final int RELEASE_VALUE = 96;
  private static final int RELEASE_TENSOR_TYPE_AND_SHAPE_INFO = 99;
  private static final int RELEASE_SESSION_OPTIONS = 100;
  private static final int ADD_SESSION_CONFIG_ENTRY = 130;
  private static final int ADD_INITIALIZER = 150;
  private static final int ADD_EXTERNAL_INITIALIZERS = 210;
  // IOBinding, allocators, providers (see IoBinding, Allocator, CudaProvider)
  private static final int CREATE_TENSOR_AS_ORT_VALUE = 48;
  private static final int ALLOCATOR_ALLOC = 75;
  private static final int ALLOCATOR_FREE = 76;
  private static final int GET_ALLOCATOR_WITH_DEFAULT_OPTIONS = 78;
  private static final int GET_AVAILABLE_PROVIDERS = 125;
  private static final int RELEASE_AVAILABLE_PROVIDERS = 126;
  private static final int CREATE_ALLOCATOR = 131;
  private static final int RELEASE_ALLOCATOR = 132;
  private static final int RUN_WITH_BINDING = 133;
  private static final int CREATE_IO_BINDING = 134;
  private static final int RELEASE_IO_BINDING = 135;
  private static final int BIND_INPUT = 136;
  private static final int BIND_OUTPUT = 137;
  private static final int BIND_OUTPUT_TO_DEVICE = 138;
  private static final int GET_BOUND_OUTPUT_VALUES = 140;
  private static final int CLEAR_BOUND_INPUTS = 141;
  private static final int CLEAR_BOUND_OUTPUTS = 142;
  private static final int SYNCHRONIZE_BOUND_INPUTS = 202;
  private static final int SYNCHRONIZE_BOUND_OUTPUTS = 203;
  private static final int APPEND_EXECUTION_PROVIDER_CUDA_V2 = 204;
  private static final int CREATE_CUDA_PROVIDER_OPTIONS = 205;
  private static final int UPDATE_CUDA_PROVIDER_OPTIONS = 206;
  private static final int RELEASE_CUDA_PROVIDER_OPTIONS = 208;

  private static final FunctionDescriptor STATUS_OF_PTR = FunctionDescriptor.of(ADDRESS, ADDRESS);
  private static final FunctionDescriptor STATUS_OF_PTR_INT =
      FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT);
  private static final FunctionDescriptor STATUS_OF_PTR_PTR =
      FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS);
  private static final FunctionDescriptor RELEASE = FunctionDescriptor.ofVoid(ADDRESS);

  private final String version;
  private final MethodHandle createStatus;
  private final MethodHandle getErrorCode;
  private final MethodHandle getErrorMessage;
  private final MethodHandle createEnv;
  private final MethodHandle createSessionFromArray;
  private final MethodHandle run;
  private final MethodHandle createSessionOptions;
  private final MethodHandle setSessionExecutionMode;
  private final MethodHandle setGraphOptimizationLevel;
  private final MethodHandle enableProfiling;
  private final MethodHandle setIntraOpNumThreads;
  private final MethodHandle setInterOpNumThreads;
  private final MethodHandle sessionGetInputCount;
  private final MethodHandle sessionGetOutputCount;
  private final MethodHandle createTensorWithData;
  private final MethodHandle getTensorMutableData;
  private final MethodHandle getTensorElementType;
  private final MethodHandle getDimensionsCount;
  private final MethodHandle getDimensions;
  private final MethodHandle getTensorTypeAndShape;
  private final MethodHandle createMemoryInfo;
  private final MethodHandle createCpuMemoryInfo;
  private final MethodHandle releaseEnv;
  private final MethodHandle releaseStatus;
  private final MethodHandle releaseMemoryInfo;
  private final MethodHandle releaseSession;
  private final MethodHandle releaseValue;
  private final MethodHandle releaseTensorTypeAndShapeInfo;
  private final MethodHandle releaseSessionOptions;
  private final MethodHandle addInitializer;
  private final MethodHandle addExternalInitializers;
  private final MethodHandle addSessionConfigEntry;
  private final MethodHandle createTensorAsOrtValue;
  private final MethodHandle allocatorAlloc;
  private final MethodHandle allocatorFree;
  private final MethodHandle getAllocatorWithDefaultOptions;
  private final MethodHandle getAvailableProviders;
  private final MethodHandle releaseAvailableProviders;
  private final MethodHandle createAllocator;
  private final MethodHandle releaseAllocator;
  private final MethodHandle runWithBinding;
  private final MethodHandle createIoBinding;
  private final MethodHandle releaseIoBinding;
  private final MethodHandle bindInput;
  private final MethodHandle bindOutput;
  private final MethodHandle bindOutputToDevice;
  private final MethodHandle getBoundOutputValues;
  private final MethodHandle clearBoundInputs;
  private final MethodHandle clearBoundOutputs;
  private final MethodHandle synchronizeBoundInputs;
  private final MethodHandle synchronizeBoundOutputs;
  private final MethodHandle appendCudaV2;
  private final MethodHandle createCudaProviderOptions;
  private final MethodHandle updateCudaProviderOptions;
  private final MethodHandle releaseCudaProviderOptions;
  private final Binder binder;

  private OrtApi(OrtLibrary library) {
    Linker linker = Linker.nativeLinker();
    MemorySegment base = library.apiBase();
    MethodHandle getApi = linker.downcallHandle(
        base.get(ADDRESS, 0), FunctionDescriptor.of(ADDRESS, JAVA_INT));
    MethodHandle getVersionString = linker.downcallHandle(
        base.get(ADDRESS, ADDRESS.byteSize()), FunctionDescriptor.of(ADDRESS));
    MemorySegment api;
    try {
      version = ((MemorySegment) getVersionString.invokeExact()).reinterpret(256).getString(0);
      api = (MemorySegment) getApi.invokeExact(API_VERSION);
    } catch (Throwable t) {
      throw new IllegalStateException("OrtApiBase calls failed in " + library.path(), t);
    }
    if (api.address() == 0) {
      throw new IllegalStateException("ONNX Runtime " + version + " at " + library.path()
          + " does not offer C API version " + API_VERSION);
    }
    MemorySegment table = api.reinterpret(API_FIELDS * ADDRESS.byteSize());
    Binder b = new Binder(linker, table);
    binder = b;
    createStatus = b.bind(CREATE_STATUS, FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
    getErrorCode = b.bind(GET_ERROR_CODE, FunctionDescriptor.of(JAVA_INT, ADDRESS));
    getErrorMessage = b.bind(GET_ERROR_MESSAGE, FunctionDescriptor.of(ADDRESS, ADDRESS));
    createEnv = b.bind(CREATE_ENV, FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS, ADDRESS));
    createSessionFromArray = b.bind(CREATE_SESSION_FROM_ARRAY,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, ADDRESS));
    run = b.bind(RUN, FunctionDescriptor.of(ADDRESS,
        ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, ADDRESS));
    createSessionOptions = b.bind(CREATE_SESSION_OPTIONS, FunctionDescriptor.of(ADDRESS, ADDRESS));
    setSessionExecutionMode = b.bind(SET_SESSION_EXECUTION_MODE, STATUS_OF_PTR_INT);
    setGraphOptimizationLevel = b.bind(SET_SESSION_GRAPH_OPTIMIZATION_LEVEL, STATUS_OF_PTR_INT);
    enableProfiling = b.bind(ENABLE_PROFILING, STATUS_OF_PTR_PTR);
    setIntraOpNumThreads = b.bind(SET_INTRA_OP_NUM_THREADS, STATUS_OF_PTR_INT);
    setInterOpNumThreads = b.bind(SET_INTER_OP_NUM_THREADS, STATUS_OF_PTR_INT);
    sessionGetInputCount = b.bind(SESSION_GET_INPUT_COUNT, STATUS_OF_PTR_PTR);
    sessionGetOutputCount = b.bind(SESSION_GET_OUTPUT_COUNT, STATUS_OF_PTR_PTR);
    createTensorWithData = b.bind(CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE, FunctionDescriptor.of(
        ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS));
    getTensorMutableData = b.bind(GET_TENSOR_MUTABLE_DATA, STATUS_OF_PTR_PTR);
    getTensorElementType = b.bind(GET_TENSOR_ELEMENT_TYPE, STATUS_OF_PTR_PTR);
    getDimensionsCount = b.bind(GET_DIMENSIONS_COUNT, STATUS_OF_PTR_PTR);
    getDimensions = b.bind(GET_DIMENSIONS,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    getTensorTypeAndShape = b.bind(GET_TENSOR_TYPE_AND_SHAPE, STATUS_OF_PTR_PTR);
    createMemoryInfo = b.bind(CREATE_MEMORY_INFO,
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, ADDRESS));
    createCpuMemoryInfo = b.bind(CREATE_CPU_MEMORY_INFO,
        FunctionDescriptor.of(ADDRESS, JAVA_INT, JAVA_INT, ADDRESS));
    releaseEnv = b.bind(RELEASE_ENV, RELEASE);
    releaseStatus = b.bind(RELEASE_STATUS, RELEASE);
    releaseMemoryInfo = b.bind(RELEASE_MEMORY_INFO, RELEASE);
    releaseSession = b.bind(RELEASE_SESSION, RELEASE);
    releaseValue = b.bind(RELEASE_VALUE, RELEASE);
    releaseTensorTypeAndShapeInfo = b.bind(RELEASE_TENSOR_TYPE_AND_SHAPE_INFO, RELEASE);
    releaseSessionOptions = b.bind(RELEASE_SESSION_OPTIONS, RELEASE);
    addInitializer = b.bind(ADD_INITIALIZER,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    addExternalInitializers = b.bind(ADD_EXTERNAL_INITIALIZERS,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    addSessionConfigEntry = b.bind(ADD_SESSION_CONFIG_ENTRY,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    createTensorAsOrtValue = b.bind(CREATE_TENSOR_AS_ORT_VALUE,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, ADDRESS));
    allocatorAlloc = b.bind(ALLOCATOR_ALLOC,
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, ADDRESS));
    allocatorFree = b.bind(ALLOCATOR_FREE, STATUS_OF_PTR_PTR);
    getAllocatorWithDefaultOptions = b.bind(GET_ALLOCATOR_WITH_DEFAULT_OPTIONS, STATUS_OF_PTR);
    getAvailableProviders = b.bind(GET_AVAILABLE_PROVIDERS,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    releaseAvailableProviders = b.bind(RELEASE_AVAILABLE_PROVIDERS,
        FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
    createAllocator = b.bind(CREATE_ALLOCATOR,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    releaseAllocator = b.bind(RELEASE_ALLOCATOR, RELEASE);
    runWithBinding = b.bind(RUN_WITH_BINDING,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    createIoBinding = b.bind(CREATE_IO_BINDING, STATUS_OF_PTR_PTR);
    releaseIoBinding = b.bind(RELEASE_IO_BINDING, RELEASE);
    bindInput = b.bind(BIND_INPUT, FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    bindOutput = b.bind(BIND_OUTPUT, FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    bindOutputToDevice = b.bind(BIND_OUTPUT_TO_DEVICE,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    getBoundOutputValues = b.bind(GET_BOUND_OUTPUT_VALUES,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    clearBoundInputs = b.bind(CLEAR_BOUND_INPUTS, RELEASE);
    clearBoundOutputs = b.bind(CLEAR_BOUND_OUTPUTS, RELEASE);
    synchronizeBoundInputs = b.bind(SYNCHRONIZE_BOUND_INPUTS, STATUS_OF_PTR);
    synchronizeBoundOutputs = b.bind(SYNCHRONIZE_BOUND_OUTPUTS, STATUS_OF_PTR);
    appendCudaV2 = b.bind(APPEND_EXECUTION_PROVIDER_CUDA_V2, STATUS_OF_PTR_PTR);
    createCudaProviderOptions = b.bind(CREATE_CUDA_PROVIDER_OPTIONS, STATUS_OF_PTR);
    updateCudaProviderOptions = b.bind(UPDATE_CUDA_PROVIDER_OPTIONS,
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
    releaseCudaProviderOptions = b.bind(RELEASE_CUDA_PROVIDER_OPTIONS, RELEASE);
  }

  /** Binds field {@code index} of the same table (for {@link OrtKernelApi}). */
  MethodHandle bind(int index, FunctionDescriptor descriptor) {
    return binder.bind(index, descriptor);
  }

  /** The process-wide binding (loads the library on first use). */
  public static OrtApi get() {
    return Holder.INSTANCE;
  }

  private static final class Holder {
    static final OrtApi INSTANCE = new OrtApi(OrtLibrary.get());
  }

  /** ONNX Runtime's own version string, e.g. {@code 1.29.0}. */
  public String version() {
    return version;
  }

  private record Binder(Linker linker, MemorySegment table) {
    MethodHandle bind(int index, FunctionDescriptor descriptor) {
      if (index >= API_FIELDS) {
        throw new IllegalArgumentException("OrtApi field " + index + " is beyond version "
            + API_VERSION);
      }
      MemorySegment fn = table.getAtIndex(ADDRESS, index);
      if (fn.address() == 0) {
        throw new IllegalStateException("OrtApi field " + index + " is null");
      }
      return linker.downcallHandle(fn, descriptor);
    }
  }

  // ---- status ----

  /** Throws {@link OrtException} (and releases the status) unless {@code status} is null. */
  void check(MemorySegment status) {
    if (status.address() == 0) {
      return;
    }
    try {
      int code = (int) getErrorCode.invokeExact(status);
      MemorySegment msg = (MemorySegment) getErrorMessage.invokeExact(status);
      String text = msg.reinterpret(Long.MAX_VALUE).getString(0);
      throw new OrtException(code, text);
    } catch (OrtException e) {
      throw e;
    } catch (Throwable t) {
      throw new IllegalStateException("reading an OrtStatus failed", t);
    } finally {
      release(releaseStatus, status);
    }
  }

  /**
   * A new {@code OrtStatus} (ONNX Runtime copies the message), as a custom operator returns to
   * report a failure; the receiver releases it.
   */
  MemorySegment createStatus(int code, String message) {
    try (Arena arena = Arena.ofConfined()) {
      return (MemorySegment) createStatus.invokeExact(code, arena.allocateFrom(message));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Creates a status (as a custom operator would) and checks it: exercises the status path. */
  void failWith(int code, String message) {
    check(createStatus(code, message));
  }

  // ---- env, options, session ----

  MemorySegment createEnv(int logLevel, MemorySegment logId, MemorySegment out) {
    try {
      check((MemorySegment) createEnv.invokeExact(logLevel, logId, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment createSessionOptions(MemorySegment out) {
    try {
      check((MemorySegment) createSessionOptions.invokeExact(out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  void setSessionExecutionMode(MemorySegment options, int mode) {
    callInt(setSessionExecutionMode, options, mode);
  }

  void setGraphOptimizationLevel(MemorySegment options, int level) {
    callInt(setGraphOptimizationLevel, options, level);
  }

  void setIntraOpNumThreads(MemorySegment options, int threads) {
    callInt(setIntraOpNumThreads, options, threads);
  }

  void setInterOpNumThreads(MemorySegment options, int threads) {
    callInt(setInterOpNumThreads, options, threads);
  }

  void addInitializer(MemorySegment options, MemorySegment name, MemorySegment value) {
    try {
      check((MemorySegment) addInitializer.invokeExact(options, name, value));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void addExternalInitializers(MemorySegment options, MemorySegment names, MemorySegment values,
      long count) {
    try {
      check((MemorySegment) addExternalInitializers.invokeExact(options, names, values, count));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void enableProfiling(MemorySegment options, MemorySegment filePrefix) {
    try {
      check((MemorySegment) enableProfiling.invokeExact(options, filePrefix));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void addSessionConfigEntry(MemorySegment options, MemorySegment key, MemorySegment value) {
    try {
      check((MemorySegment) addSessionConfigEntry.invokeExact(options, key, value));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  MemorySegment createSessionFromArray(MemorySegment env, MemorySegment model, MemorySegment options,
      MemorySegment out) {
    try {
      check((MemorySegment) createSessionFromArray.invokeExact(
          env, model, model.byteSize(), options, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  long sessionInputCount(MemorySegment session, MemorySegment out) {
    callPtr(sessionGetInputCount, session, out);
    return out.get(JAVA_LONG, 0);
  }

  long sessionOutputCount(MemorySegment session, MemorySegment out) {
    callPtr(sessionGetOutputCount, session, out);
    return out.get(JAVA_LONG, 0);
  }

  void run(MemorySegment session, MemorySegment inputNames, MemorySegment inputs, long inputCount,
      MemorySegment outputNames, long outputCount, MemorySegment outputs) {
    try {
      check((MemorySegment) run.invokeExact(session, MemorySegment.NULL, inputNames, inputs,
          inputCount, outputNames, outputCount, outputs));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  // ---- memory info and values ----

  MemorySegment createCpuMemoryInfo(int allocatorType, int memType, MemorySegment out) {
    try {
      check((MemorySegment) createCpuMemoryInfo.invokeExact(allocatorType, memType, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment createMemoryInfo(MemorySegment name, int allocatorType, int deviceId, int memType,
      MemorySegment out) {
    try {
      check((MemorySegment) createMemoryInfo.invokeExact(name, allocatorType, deviceId, memType, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment createTensorWithData(MemorySegment memoryInfo, MemorySegment data,
      MemorySegment shape, long rank, int elementType, MemorySegment out) {
    try {
      check((MemorySegment) createTensorWithData.invokeExact(
          memoryInfo, data, data.byteSize(), shape, rank, elementType, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment tensorMutableData(MemorySegment value, MemorySegment out) {
    callPtr(getTensorMutableData, value, out);
    return out.get(ADDRESS, 0);
  }

  MemorySegment tensorTypeAndShape(MemorySegment value, MemorySegment out) {
    callPtr(getTensorTypeAndShape, value, out);
    return out.get(ADDRESS, 0);
  }

  int tensorElementType(MemorySegment info, MemorySegment out) {
    callPtr(getTensorElementType, info, out);
    return out.get(JAVA_INT, 0);
  }

  long dimensionsCount(MemorySegment info, MemorySegment out) {
    callPtr(getDimensionsCount, info, out);
    return out.get(JAVA_LONG, 0);
  }

  void dimensions(MemorySegment info, MemorySegment out, long count) {
    try {
      check((MemorySegment) getDimensions.invokeExact(info, out, count));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }


  // ---- allocators, IOBinding, providers ----

  MemorySegment createTensorAsOrtValue(MemorySegment allocator, MemorySegment shape, long rank,
      int elementType, MemorySegment out) {
    try {
      check((MemorySegment) createTensorAsOrtValue.invokeExact(allocator, shape, rank, elementType,
          out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  MemorySegment allocatorAlloc(MemorySegment allocator, long bytes, MemorySegment out) {
    try {
      check((MemorySegment) allocatorAlloc.invokeExact(allocator, bytes, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  void allocatorFree(MemorySegment allocator, MemorySegment p) {
    callPtr(allocatorFree, allocator, p);
  }

  /** ONNX Runtime's process-wide CPU allocator (never released). */
  MemorySegment defaultAllocator() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      callStatus(getAllocatorWithDefaultOptions, out);
      return out.get(ADDRESS, 0);
    }
  }

  /** The execution providers this library was built with, e.g. {@code [CPUExecutionProvider]}. */
  java.util.List<String> availableProviders() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      MemorySegment count = arena.allocate(JAVA_INT);
      check((MemorySegment) getAvailableProviders.invokeExact(out, count));
      int n = count.get(JAVA_INT, 0);
      MemorySegment array = out.get(ADDRESS, 0).reinterpret(n * ADDRESS.byteSize());
      java.util.List<String> names = new java.util.ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        names.add(array.getAtIndex(ADDRESS, i).reinterpret(256).getString(0));
      }
      check((MemorySegment) releaseAvailableProviders.invokeExact(out.get(ADDRESS, 0), n));
      return names;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  MemorySegment createAllocator(MemorySegment session, MemorySegment memoryInfo,
      MemorySegment out) {
    try {
      check((MemorySegment) createAllocator.invokeExact(session, memoryInfo, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
    return out.get(ADDRESS, 0);
  }

  void releaseAllocator(MemorySegment p) {
    release(releaseAllocator, p);
  }

  MemorySegment createIoBinding(MemorySegment session, MemorySegment out) {
    callPtr(createIoBinding, session, out);
    return out.get(ADDRESS, 0);
  }

  void releaseIoBinding(MemorySegment p) {
    release(releaseIoBinding, p);
  }

  void bindInput(MemorySegment binding, MemorySegment name, MemorySegment value) {
    try {
      check((MemorySegment) bindInput.invokeExact(binding, name, value));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void bindOutput(MemorySegment binding, MemorySegment name, MemorySegment value) {
    try {
      check((MemorySegment) bindOutput.invokeExact(binding, name, value));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void bindOutputToDevice(MemorySegment binding, MemorySegment name, MemorySegment memoryInfo) {
    try {
      check((MemorySegment) bindOutputToDevice.invokeExact(binding, name, memoryInfo));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /**
   * The bound output values (new references the caller releases), and the array ONNX Runtime
   * allocated with {@code allocator} for them (the caller frees it).
   */
  MemorySegment[] boundOutputValues(MemorySegment binding, MemorySegment allocator) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      MemorySegment count = arena.allocate(JAVA_LONG);
      check((MemorySegment) getBoundOutputValues.invokeExact(binding, allocator, out, count));
      long n = count.get(JAVA_LONG, 0);
      MemorySegment[] values = new MemorySegment[(int) n];
      if (n > 0) {
        MemorySegment array = out.get(ADDRESS, 0).reinterpret(n * ADDRESS.byteSize());
        for (int i = 0; i < n; i++) {
          values[i] = array.getAtIndex(ADDRESS, i);
        }
        allocatorFree(allocator, array);
      }
      return values;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void clearBoundInputs(MemorySegment binding) {
    release(clearBoundInputs, binding);
  }

  void clearBoundOutputs(MemorySegment binding) {
    release(clearBoundOutputs, binding);
  }

  void synchronizeBoundInputs(MemorySegment binding) {
    callStatus(synchronizeBoundInputs, binding);
  }

  void synchronizeBoundOutputs(MemorySegment binding) {
    callStatus(synchronizeBoundOutputs, binding);
  }

  void runWithBinding(MemorySegment session, MemorySegment binding) {
    try {
      check((MemorySegment) runWithBinding.invokeExact(session, MemorySegment.NULL, binding));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  MemorySegment createCudaProviderOptions(MemorySegment out) {
    callStatus(createCudaProviderOptions, out);
    return out.get(ADDRESS, 0);
  }

  void updateCudaProviderOptions(MemorySegment options, MemorySegment keys, MemorySegment values,
      long count) {
    try {
      check((MemorySegment) updateCudaProviderOptions.invokeExact(options, keys, values, count));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  void appendCudaProvider(MemorySegment sessionOptions, MemorySegment cudaOptions) {
    callPtr(appendCudaV2, sessionOptions, cudaOptions);
  }

  void releaseCudaProviderOptions(MemorySegment p) {
    release(releaseCudaProviderOptions, p);
  }

  private void callStatus(MethodHandle h, MemorySegment p) {
    try {
      check((MemorySegment) h.invokeExact(p));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  // ---- release ----

  void releaseEnv(MemorySegment p) {
    release(releaseEnv, p);
  }

  void releaseMemoryInfo(MemorySegment p) {
    release(releaseMemoryInfo, p);
  }

  void releaseSession(MemorySegment p) {
    release(releaseSession, p);
  }

  void releaseValue(MemorySegment p) {
    release(releaseValue, p);
  }

  void releaseTensorTypeAndShapeInfo(MemorySegment p) {
    release(releaseTensorTypeAndShapeInfo, p);
  }

  void releaseSessionOptions(MemorySegment p) {
    release(releaseSessionOptions, p);
  }

  private static void release(MethodHandle h, MemorySegment p) {
    try {
      h.invokeExact(p);
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  private void callInt(MethodHandle h, MemorySegment p, int v) {
    try {
      check((MemorySegment) h.invokeExact(p, v));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** Calls {@code OrtStatus* f(p, out)} and throws its status, if any. */
  void callPtr(MethodHandle h, MemorySegment p, MemorySegment out) {
    try {
      check((MemorySegment) h.invokeExact(p, out));
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException("native call failed", t);
  }
}
