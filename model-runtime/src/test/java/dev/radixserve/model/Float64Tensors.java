package dev.radixserve.model;

import java.util.HashMap;
import java.util.Map;

/** A model's weights widened to float64 once each, by canonical name: what the references read. */
final class Float64Tensors {

  private final ModelWeights weights;
  private final Map<String, double[]> cache = new HashMap<>();

  Float64Tensors(ModelWeights weights) {
    this.weights = weights;
  }

  double[] get(String name) {
    return cache.computeIfAbsent(name, k -> {
      float[] f = weights.tensor(k).toFloatArray();
      double[] d = new double[f.length];
      for (int i = 0; i < f.length; i++) {
        d[i] = f[i];
      }
      return d;
    });
  }
}
