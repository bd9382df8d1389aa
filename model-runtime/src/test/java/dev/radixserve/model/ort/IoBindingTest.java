package dev.radixserve.model.ort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.radixserve.model.graph.CopyProbeGraph;
import dev.radixserve.model.graph.GraphDtype;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** Every IOBinding call of the C API on the CPU, over {@code y = x + 0}. */
class IoBindingTest {

  @Test
  void boundInputsAndOutputsRunWithoutCopiesOrAllocation() {
    float[] x = {1.5f, -2f, 3.25f, 0f};
    try (OrtEnv env = OrtEnv.create("iobinding-test");
        SessionOptions options = SessionOptions.create();
        OrtSession session = OrtSession.create(env, CopyProbeGraph.build(GraphDtype.FLOAT32),
            options);
        MemoryInfo cpu = MemoryInfo.cpu();
        Allocator allocator = Allocator.of(session, cpu);
        OrtValue in = allocator.tensor(ElementType.FLOAT, x.length);
        IoBinding binding = IoBinding.create(session);
        Arena arena = Arena.ofConfined()) {
      MemorySegment.copy(x, 0, in.data(), ValueLayout.JAVA_FLOAT, 0, x.length);
      binding.bindInput(CopyProbeGraph.X, in);
      binding.synchronizeInputs();

      // output allocated by the run, on the device named (here the CPU)
      binding.bindOutputToDevice(CopyProbeGraph.Y, cpu);
      binding.run();
      binding.synchronizeOutputs();
      OrtValue[] outputs = binding.outputs();
      assertEquals(1, outputs.length);
      try (OrtValue y = outputs[0]) {
        assertArrayEquals(new long[] {x.length}, y.shape());
        assertArrayEquals(x, y.data().toArray(ValueLayout.JAVA_FLOAT));
      }

      // output written into the caller's own memory
      binding.clearOutputs();
      MemorySegment mine = arena.allocate((long) x.length * Float.BYTES, 64);
      try (OrtValue y = OrtValue.wrap(cpu, mine, ElementType.FLOAT, x.length)) {
        binding.bindOutput(CopyProbeGraph.Y, y);
        binding.run();
        binding.synchronizeOutputs();
        assertArrayEquals(x, mine.toArray(ValueLayout.JAVA_FLOAT));
      }
      assertEquals(1, binding.bindCount(CopyProbeGraph.X));
      assertEquals(1, binding.bindCount(CopyProbeGraph.Y));
      assertEquals(2L * x.length * Float.BYTES, binding.boundBytes());

      // without inputs the run fails with ONNX Runtime's own message
      binding.clearInputs();
      assertThrows(OrtException.class, binding::run);
    }
  }
}
