package dev.radixserve.model;

import dev.radixserve.model.weights.GptWeights;

/**
 * An independent float64 GPT-2 forward pass straight from the weight tensors: the full sequence
 * every time, no KV cache, no ONNX. The yardstick the runtime is tested against (the server's
 * tests use it too, through this module's test jar).
 */
public final class ReferenceGpt2 {

  private final ModelConfig c;
  private final Float64Tensors w;

  public ReferenceGpt2(GptWeights weights) {
    this.c = weights.config();
    this.w = new Float64Tensors(weights);
  }

  /** Logits at every position of {@code tokens}: [len][vocab]. */
  public double[][] logits(int[] tokens) {
    int n = tokens.length;
    int e = c.nEmbd();
    double[] wte = w.get("wte.weight");
    double[] wpe = w.get("wpe.weight");
    double[][] x = new double[n][e];
    for (int t = 0; t < n; t++) {
      for (int j = 0; j < e; j++) {
        x[t][j] = wte[tokens[t] * e + j] + wpe[t * e + j];
      }
    }
    for (int layer = 0; layer < c.nLayer(); layer++) {
      x = block(layer, x);
    }
    double[] head = w.get(GptWeights.lmHeadName(c)); // [vocab, embd], tied or not
    double[][] out = new double[n][c.vocabSize()];
    for (int t = 0; t < n; t++) {
      double[] h = layerNorm(x[t], "ln_f");
      for (int v = 0; v < c.vocabSize(); v++) {
        double acc = 0;
        for (int j = 0; j < e; j++) {
          acc += h[j] * head[v * e + j];
        }
        out[t][v] = acc;
      }
    }
    return out;
  }

  /** log-softmax of one row of logits. */
  public static double[] logSoftmax(double[] logits) {
    double max = Double.NEGATIVE_INFINITY;
    for (double v : logits) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (double v : logits) {
      sum += Math.exp(v - max);
    }
    double logZ = max + Math.log(sum);
    double[] out = new double[logits.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = logits[i] - logZ;
    }
    return out;
  }

  /** Greedy continuation of {@code prompt} by {@code steps} tokens (ties: lowest id). */
  public int[] greedy(int[] prompt, int steps) {
    int[] seq = java.util.Arrays.copyOf(prompt, prompt.length + steps);
    for (int i = 0; i < steps; i++) {
      int len = prompt.length + i;
      double[][] l = logits(java.util.Arrays.copyOf(seq, len));
      seq[len] = argmax(l[len - 1]);
    }
    return java.util.Arrays.copyOfRange(seq, prompt.length, seq.length);
  }

  public static int argmax(double[] v) {
    int best = 0;
    for (int i = 1; i < v.length; i++) {
      if (v[i] > v[best]) {
        best = i;
      }
    }
    return best;
  }

  private double[][] block(int layer, double[][] x) {
    String p = "h." + layer + ".";
    int n = x.length;
    int e = c.nEmbd();
    int h = c.nHead();
    int d = c.headDim();
    double[][] qkv = new double[n][];
    for (int t = 0; t < n; t++) {
      qkv[t] = linear(layerNorm(x[t], p + "ln_1"), p + "attn.c_attn", e, 3 * e);
    }
    double[][] ctx = new double[n][e];
    double scale = 1.0 / Math.sqrt(d);
    for (int head = 0; head < h; head++) {
      for (int t = 0; t < n; t++) {
        double[] scores = new double[t + 1];
        double max = Double.NEGATIVE_INFINITY;
        for (int s = 0; s <= t; s++) {
          double acc = 0;
          for (int k = 0; k < d; k++) {
            acc += qkv[t][head * d + k] * qkv[s][e + head * d + k];
          }
          scores[s] = acc * scale;
          max = Math.max(max, scores[s]);
        }
        double sum = 0;
        for (int s = 0; s <= t; s++) {
          scores[s] = Math.exp(scores[s] - max);
          sum += scores[s];
        }
        for (int s = 0; s <= t; s++) {
          double prob = scores[s] / sum;
          for (int k = 0; k < d; k++) {
            ctx[t][head * d + k] += prob * qkv[s][2 * e + head * d + k];
          }
        }
      }
    }
    double[][] out = new double[n][];
    for (int t = 0; t < n; t++) {
      double[] a = linear(ctx[t], p + "attn.c_proj", e, e);
      double[] r = new double[e];
      for (int j = 0; j < e; j++) {
        r[j] = x[t][j] + a[j];
      }
      double[] up = linear(layerNorm(r, p + "ln_2"), p + "mlp.c_fc", e, c.nInner());
      for (int j = 0; j < up.length; j++) {
        up[j] = gelu(up[j]);
      }
      double[] down = linear(up, p + "mlp.c_proj", c.nInner(), e);
      for (int j = 0; j < e; j++) {
        r[j] += down[j];
      }
      out[t] = r;
    }
    return out;
  }

  private double gelu(double v) {
    if (c.activationFunction().equals("gelu")) {
      return 0.5 * v * (1 + erf(v / Math.sqrt(2)));
    }
    return 0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v)));
  }

  /** erf by its Maclaurin series / continued fraction, accurate to ~1e-15 for our range. */
  static double erf(double x) {
    double ax = Math.abs(x);
    double r;
    if (ax < 3) {
      // series: erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
      double term = ax;
      double sum = ax;
      for (int n = 1; n < 200; n++) {
        term *= -ax * ax / n;
        double add = term / (2 * n + 1);
        sum += add;
        if (Math.abs(add) < 1e-17) {
          break;
        }
      }
      r = 2 / Math.sqrt(Math.PI) * sum;
    } else {
      // erfc continued fraction (Lentz), for large |x|
      double f = ax;
      for (int k = 60; k >= 1; k--) {
        f = ax + (k / 2.0) / f;
      }
      r = 1 - Math.exp(-ax * ax) / Math.sqrt(Math.PI) / f;
    }
    return x < 0 ? -r : r;
  }

  private double[] layerNorm(double[] x, String prefix) {
    double[] g = w.get(prefix + ".weight");
    double[] b = w.get(prefix + ".bias");
    double mean = 0;
    for (double v : x) {
      mean += v;
    }
    mean /= x.length;
    double var = 0;
    for (double v : x) {
      var += (v - mean) * (v - mean);
    }
    var /= x.length;
    double inv = 1 / Math.sqrt(var + c.layerNormEpsilon());
    double[] out = new double[x.length];
    for (int j = 0; j < x.length; j++) {
      out[j] = (x[j] - mean) * inv * g[j] + b[j];
    }
    return out;
  }

  /** Conv1D: weight [in, out]. */
  private double[] linear(double[] x, String prefix, int in, int out) {
    double[] wt = w.get(prefix + ".weight");
    double[] b = w.get(prefix + ".bias");
    double[] y = b.clone();
    for (int i = 0; i < in; i++) {
      double xi = x[i];
      for (int o = 0; o < out; o++) {
        y[o] += xi * wt[i * out + o];
      }
    }
    return y;
  }
}
