package dev.radixserve.model.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * What a {@link CustomKernel} sees of one compute call ({@code OrtKernelContext}): its inputs,
 * outputs it asks ONNX Runtime to provide, and ONNX Runtime's intra-op thread pool. Valid only
 * during that call, on its thread (except {@link #parallelFor}'s tasks, see there).
 */
public final class KernelContext {

  private static final Map<Long, Job> JOBS = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_JOB = new AtomicLong(1);
  private static final int DRAINERS = 2 * Runtime.getRuntime().availableProcessors();
  /** {@code void fn(void* usr_data, size_t i)}: one stub for every parallelFor of the process. */
  private static final MemorySegment TRAMPOLINE;

  static {
    try {
      TRAMPOLINE = Linker.nativeLinker().upcallStub(
          MethodHandles.lookup().findStatic(KernelContext.class, "runTask",
              MethodType.methodType(void.class, MemorySegment.class, long.class)),
          FunctionDescriptor.ofVoid(ADDRESS, JAVA_LONG), Arena.global());
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final OrtKernelApi kapi = OrtKernelApi.get();
  private final MemorySegment context;
  /** Out-parameters; slices of a per-thread buffer (see {@link CallScratch}). */
  private final SegmentAllocator scratch;

  KernelContext(MemorySegment context, SegmentAllocator scratch) {
    this.context = context;
    this.scratch = scratch;
  }

  public int inputCount() {
    return (int) kapi.inputCount(context, scratch.allocate(JAVA_LONG));
  }

  public int outputCount() {
    return (int) kapi.outputCount(context, scratch.allocate(JAVA_LONG));
  }

  /** True when input {@code index} is present (an optional input may be left out). */
  public boolean hasInput(int index) {
    return index < inputCount()
        && kapi.input(context, index, scratch.allocate(ADDRESS)).address() != 0;
  }

  /** Input {@code index}; throws {@link IllegalArgumentException} if the node leaves it out. */
  public TensorView input(int index) {
    MemorySegment value = kapi.input(context, index, scratch.allocate(ADDRESS));
    if (value.address() == 0) {
      throw new IllegalArgumentException("input " + index + " is missing");
    }
    return view(value);
  }

  /** Output {@code index} with this shape, allocated (or bound by the caller) by ONNX Runtime. */
  public TensorView output(int index, long... shape) {
    MemorySegment dims = scratch.allocateFrom(JAVA_LONG, shape);
    MemorySegment value = kapi.output(context, index, dims, shape.length,
        scratch.allocate(ADDRESS));
    return view(value);
  }

  private TensorView view(MemorySegment value) {
    OrtApi api = kapi.api();
    MemorySegment info = api.tensorTypeAndShape(value, scratch.allocate(ADDRESS));
    ElementType type;
    long[] shape;
    try {
      type = ElementType.ofCode(api.tensorElementType(info, scratch.allocate(JAVA_INT)));
      int rank = (int) api.dimensionsCount(info, scratch.allocate(JAVA_LONG));
      MemorySegment dims = scratch.allocate(JAVA_LONG, Math.max(1, rank));
      api.dimensions(info, dims, rank);
      shape = dims.asSlice(0, (long) rank * Long.BYTES).toArray(JAVA_LONG);
    } finally {
      api.releaseTensorTypeAndShapeInfo(info);
    }
    long bytes = type.bytes();
    for (long d : shape) {
      bytes *= d;
    }
    // A global-scope view: no liveness checks on the hot path; valid until compute returns.
    MemorySegment data = api.tensorMutableData(value, scratch.allocate(ADDRESS)).reinterpret(bytes);
    return new TensorView(type, shape, data);
  }

  /**
   * Runs {@code task} for every index in {@code [0, total)} on ONNX Runtime's intra-op thread
   * pool (the calling thread takes part) and returns when all are done. Tasks run concurrently on
   * threads ONNX Runtime owns: they must only touch memory no other task writes. The first
   * exception a task throws is rethrown here once every task has finished.
   *
   * <p>ONNX Runtime is asked for a few "drainers" (twice the cores), not one upcall per index:
   * each takes indices from a shared counter until none is left. An upcall from one of ONNX
   * Runtime's native threads costs far more than a small task, and the counter still balances
   * uneven tasks.
   */
  public void parallelFor(int total, IntConsumer task) {
    if (total <= 0) {
      return;
    }
    if (total == 1) {
      task.accept(0);
      return;
    }
    AtomicInteger next = new AtomicInteger();
    IntConsumer drain = ignored -> {
      for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
        task.accept(i);
      }
    };
    long id = NEXT_JOB.getAndIncrement();
    Job job = new Job(drain);
    JOBS.put(id, job);
    try {
      kapi.parallelFor(context, TRAMPOLINE, Math.min(total, DRAINERS), 0,
          MemorySegment.ofAddress(id));
    } finally {
      JOBS.remove(id);
    }
    Throwable failure = job.failure.get();
    if (failure instanceof RuntimeException r) {
      throw r;
    }
    if (failure instanceof Error e) {
      throw e;
    }
  }

  private record Job(IntConsumer task, AtomicReference<Throwable> failure) {
    Job(IntConsumer task) {
      this(task, new AtomicReference<>());
    }
  }

  /** The upcall target: must never throw (an exception escaping an upcall ends the JVM). */
  private static void runTask(MemorySegment userData, long index) {
    Job job = JOBS.get(userData.address());
    if (job == null || job.failure.get() != null) {
      return;
    }
    try {
      job.task.accept((int) index);
    } catch (Throwable t) {
      job.failure.compareAndSet(null, t);
    }
  }
}
