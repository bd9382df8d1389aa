import ai.onnxruntime.OnnxTensor;
import ai.onnxruntime.OrtEnvironment;
import ai.onnxruntime.OrtSession;
import java.io.File;
import java.nio.FloatBuffer;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;

/**
 * Times the MatMulNBits graphs that {@code SAVE=DIR bench/kernels/mlas_q4_bench.py} writes, with
 * the ONNX Runtime radixserve runs (1.29, its Java build; the script's own numbers are 1.30's, the
 * only one in the local pip index). Each graph holds COPIES matmuls of one shape over one input
 * of M rows; a run's time divided by COPIES is one matmul, the median of 30 runs after 3 unmeasured.
 *
 * <pre>java -cp ~/.m2/repository/com/microsoft/onnxruntime/onnxruntime/1.29.0/onnxruntime-1.29.0.jar \
 *   bench/kernels/MatMulNBitsRun.java DIR [THREADS]</pre>
 *
 * PROFILE=PREFIX also records ONNX Runtime's per-node profile of each graph (journal 2026-12-02b:
 * the profiler itself lengthens these nodes by ~1.2-1.35x).
 */
public class MatMulNBitsRun {
  public static void main(String[] args) throws Exception {
    OrtEnvironment env = OrtEnvironment.getEnvironment();
    int threads = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    File[] graphs = new File(args[0]).listFiles((dir, name) -> name.endsWith(".onnx"));
    Arrays.sort(graphs);
    String profile = System.getenv("PROFILE");
    for (File graph : graphs) {
      // NAME_mM_K_N_COPIES.onnx
      String[] parts = graph.getName().replace(".onnx", "").split("_");
      int copies = Integer.parseInt(parts[parts.length - 1]);
      int k = Integer.parseInt(parts[parts.length - 3]);
      int m = Integer.parseInt(parts[parts.length - 4].substring(1));
      try (OrtSession.SessionOptions options = new OrtSession.SessionOptions()) {
        options.setIntraOpNumThreads(threads);
        options.setInterOpNumThreads(1);
        if (profile != null) {
          options.enableProfiling(profile + "_" + graph.getName());
        }
        try (OrtSession session = env.createSession(graph.getPath(), options)) {
          float[] x = new float[m * k];
          Random random = new Random(0);
          for (int i = 0; i < x.length; i++) {
            x[i] = (float) random.nextGaussian();
          }
          try (OnnxTensor input = OnnxTensor.createTensor(env, FloatBuffer.wrap(x),
              new long[] {m, k})) {
            for (int i = 0; i < 3; i++) {
              session.run(Map.of("a", input)).close();
            }
            double[] us = new double[30];
            for (int i = 0; i < us.length; i++) {
              long start = System.nanoTime();
              session.run(Map.of("a", input)).close();
              us[i] = (System.nanoTime() - start) / 1e3 / copies;
            }
            Arrays.sort(us);
            System.out.printf("%s: %.1f us a matmul%n", graph.getName(), us[us.length / 2]);
          }
        }
      }
    }
  }
}
