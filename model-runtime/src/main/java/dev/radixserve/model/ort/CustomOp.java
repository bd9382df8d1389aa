package dev.radixserve.model.ort;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An operator implemented in Java and registered with ONNX Runtime through its C API: the native
 * {@code struct OrtCustomOp} (schema callbacks and kernel callbacks) filled with FFM upcall stubs.
 * ONNX Runtime then schedules the operator's nodes like any other kernel, inside one {@code Run}.
 *
 * <pre>
 *   struct OrtCustomOp (version 23, 8-byte fields after the leading uint32):
 *     0 version | 8 CreateKernel | 16 GetName | 24 GetExecutionProviderType | 32 GetInputType
 *     40 GetInputTypeCount | 48 GetOutputType | 56 GetOutputTypeCount | 64 KernelCompute
 *     72 KernelDestroy | 80 GetInputCharacteristic | 88 GetOutputCharacteristic
 *     96 GetInputMemoryType | 104..128 variadic arity/homogeneity (4) | 136 CreateKernelV2
 *     144 KernelComputeV2 | 152 InferOutputShapeFn | 160 GetStartVersion | 168 GetEndVersion
 *     176 GetMayInplace | 184 ReleaseMayInplace | 192 GetAliasMap | 200 ReleaseAliasMap
 * </pre>
 * Unset fields stay NULL: ONNX Runtime then uses the V2 kernel callbacks (errors come back as
 * statuses), runs the op on its CPU provider, and infers no output shapes.
 *
 * <p>Every upcall catches everything: an exception escaping an upcall would end the JVM. The
 * struct and its stubs live as long as the process (ONNX Runtime keeps pointers to them in every
 * session that registered the op's domain).
 */
public final class CustomOp {

  /** One input or output: its element type ({@code null}: any) and whether it may be left out. */
  public record Port(ElementType type, boolean optional) {
    public static Port required(ElementType type) {
      return new Port(type, false);
    }

    public static Port optional(ElementType type) {
      return new Port(type, true);
    }
  }

  /** What the op is: its name, ports and how to make a kernel for one node. */
  public interface Definition {
    String name();

    List<Port> inputs();

    List<Port> outputs();

    /**
     * A kernel for one node, from the node's attributes.
     *
     * @throws IllegalArgumentException for attributes the op does not support (fails the session)
     */
    CustomKernel createKernel(KernelInfo info);
  }

  private static final long STRUCT_BYTES = 208;
  private static final int VERSION = OrtApi.API_VERSION;
  private static final Map<Long, CustomKernel> KERNELS = new ConcurrentHashMap<>();
  private static final AtomicLong NEXT_KERNEL = new AtomicLong(1);

  private final Definition definition;
  private final MemorySegment struct;
  private final MemorySegment name;

  private CustomOp(Definition definition) {
    this.definition = definition;
    Arena arena = Arena.global();
    this.name = arena.allocateFrom(definition.name());
    this.struct = arena.allocate(STRUCT_BYTES, 8);
    struct.set(JAVA_INT, 0, VERSION);
    Stubs stubs = new Stubs(arena);
    stubs.set(16, "getName", FunctionDescriptor.of(ADDRESS, ADDRESS));
    stubs.set(24, "getExecutionProviderType", FunctionDescriptor.of(ADDRESS, ADDRESS));
    stubs.set(32, "getInputType", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    stubs.set(40, "getInputTypeCount", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    stubs.set(48, "getOutputType", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    stubs.set(56, "getOutputTypeCount", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
    stubs.set(72, "kernelDestroy", FunctionDescriptor.ofVoid(ADDRESS));
    stubs.set(80, "getInputCharacteristic", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    stubs.set(88, "getOutputCharacteristic", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    stubs.set(96, "getInputMemoryType", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
    for (long offset = 104; offset <= 128; offset += 8) {
      stubs.set(offset, "variadicDefault", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }
    stubs.set(136, "createKernelV2",
        FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    stubs.set(144, "kernelComputeV2", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
    stubs.set(160, "getStartVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    stubs.set(168, "getEndVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  }

  /** The native op for {@code definition} (allocated once; lives until the process ends). */
  public static CustomOp of(Definition definition) {
    return new CustomOp(definition);
  }

  public String name() {
    return definition.name();
  }

  MemorySegment struct() {
    return struct;
  }

  /** Fills struct fields with upcall stubs to this op's methods of the same name. */
  private final class Stubs {
    private final Arena arena;

    Stubs(Arena arena) {
      this.arena = arena;
    }

    void set(long offset, String method, FunctionDescriptor descriptor) {
      try {
        MethodType type = descriptor.toMethodType();
        MethodHandle target = MethodHandles.lookup()
            .findVirtual(CustomOp.class, method, type).bindTo(CustomOp.this);
        struct.set(ADDRESS, offset, Linker.nativeLinker().upcallStub(target, descriptor, arena));
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("no upcall target " + method, e);
      }
    }
  }

  // ---- upcall targets (never throw) ----

  private MemorySegment getName(MemorySegment op) {
    return name;
  }

  private MemorySegment getExecutionProviderType(MemorySegment op) {
    return MemorySegment.NULL; // the CPU provider
  }

  private int getInputType(MemorySegment op, long index) {
    return typeCode(definition.inputs(), index);
  }

  private long getInputTypeCount(MemorySegment op) {
    return definition.inputs().size();
  }

  private int getOutputType(MemorySegment op, long index) {
    return typeCode(definition.outputs(), index);
  }

  private long getOutputTypeCount(MemorySegment op) {
    return definition.outputs().size();
  }

  private int getInputCharacteristic(MemorySegment op, long index) {
    return characteristic(definition.inputs(), index);
  }

  private int getOutputCharacteristic(MemorySegment op, long index) {
    return characteristic(definition.outputs(), index);
  }

  private int getInputMemoryType(MemorySegment op, long index) {
    return 0; // OrtMemTypeDefault
  }

  private int variadicDefault(MemorySegment op) {
    return 1; // no variadic ports: never asked
  }

  private int getStartVersion(MemorySegment op) {
    return 1;
  }

  private int getEndVersion(MemorySegment op) {
    return Integer.MAX_VALUE;
  }

  private MemorySegment createKernelV2(MemorySegment op, MemorySegment api, MemorySegment info,
      MemorySegment kernelOut) {
    try {
      CustomKernel kernel = definition.createKernel(new KernelInfo(info));
      long id = NEXT_KERNEL.getAndIncrement();
      KERNELS.put(id, kernel);
      kernelOut.reinterpret(ADDRESS.byteSize()).set(ADDRESS, 0, MemorySegment.ofAddress(id));
      return MemorySegment.NULL;
    } catch (Throwable t) {
      return failure(OrtKernelApi.INVALID_ARGUMENT, t);
    }
  }

  private MemorySegment kernelComputeV2(MemorySegment kernel, MemorySegment context) {
    try (CallScratch scratch = CallScratch.begin()) {
      CustomKernel k = KERNELS.get(kernel.address());
      if (k == null) {
        return OrtApi.get().createStatus(OrtKernelApi.FAIL,
            definition.name() + ": no kernel " + kernel.address());
      }
      k.compute(new KernelContext(context, scratch));
      return MemorySegment.NULL;
    } catch (Throwable t) {
      int code = t instanceof IllegalArgumentException ? OrtKernelApi.INVALID_ARGUMENT
          : OrtKernelApi.FAIL;
      return failure(code, t);
    }
  }

  private void kernelDestroy(MemorySegment kernel) {
    KERNELS.remove(kernel.address());
  }

  private MemorySegment failure(int code, Throwable t) {
    try {
      String message = t.getMessage() == null ? t.toString() : t.getMessage();
      return OrtApi.get().createStatus(code, definition.name() + ": " + message);
    } catch (Throwable again) {
      return MemorySegment.NULL; // cannot even report: nothing else is safe in an upcall
    }
  }

  private static int typeCode(List<Port> ports, long index) {
    if (index < 0 || index >= ports.size()) {
      return 0;
    }
    ElementType type = ports.get((int) index).type();
    return type == null ? 0 : type.code(); // 0: ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED, any type
  }

  private static int characteristic(List<Port> ports, long index) {
    return index >= 0 && index < ports.size() && ports.get((int) index).optional() ? 1 : 0;
  }
}
