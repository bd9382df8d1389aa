package dev.radixserve.model;

import dev.radixserve.model.weights.LlamaWeights;
import java.util.Arrays;

/**
 * An independent float64 Llama-family forward pass (Llama, Qwen2, Qwen3, Mistral) straight from
 * the weight tensors, written from Hugging Face's modeling code: the full sequence every time, no
 * KV cache, no ONNX, plain grouped-query attention (query head h reads kv head h / (H / KVH)),
 * rotary by {@code rotate_half}, frequencies as {@code _compute_llama3_parameters} computes them.
 */
public final class ReferenceLlama {

  private final LlamaConfig c;
  private final Float64Tensors w;

  public ReferenceLlama(LlamaWeights weights) {
    this.c = weights.config();
    this.w = new Float64Tensors(weights);
  }

  /** Logits at every position of {@code tokens}: [len][vocab]. */
  public double[][] logits(int[] tokens) {
    int n = tokens.length;
    int e = c.hiddenSize();
    double[] embed = w.get(LlamaWeights.EMBED);
    double[][] x = new double[n][];
    for (int t = 0; t < n; t++) {
      x[t] = Arrays.copyOfRange(embed, tokens[t] * e, (tokens[t] + 1) * e);
    }
    for (int layer = 0; layer < c.nLayer(); layer++) {
      x = block(layer, x);
    }
    double[][] out = new double[n][];
    for (int t = 0; t < n; t++) {
      out[t] = linear(rms(x[t], w.get("norm.weight")), c.tieWordEmbeddings()
          ? LlamaWeights.EMBED : LlamaWeights.LM_HEAD, false, e, c.vocabSize());
    }
    return out;
  }

  /** Greedy continuation of {@code prompt} by {@code steps} tokens (ties: lowest id). */
  public int[] greedy(int[] prompt, int steps) {
    int[] seq = Arrays.copyOf(prompt, prompt.length + steps);
    for (int i = 0; i < steps; i++) {
      int len = prompt.length + i;
      seq[len] = ReferenceGpt2.argmax(logits(Arrays.copyOf(seq, len))[len - 1]);
    }
    return Arrays.copyOfRange(seq, prompt.length, seq.length);
  }

  private double[][] block(int layer, double[][] x) {
    String p = "layers." + layer + ".";
    int n = x.length;
    int e = c.hiddenSize();
    int h = c.nHeads();
    int kvh = c.kvHeads();
    int d = c.headDim();
    double[][] q = new double[n][];
    double[][] k = new double[n][];
    double[][] v = new double[n][];
    for (int t = 0; t < n; t++) {
      double[] a = rms(x[t], w.get(p + "input_layernorm.weight"));
      q[t] = linear(a, p + "self_attn.q_proj", c.qkvBias(), e, h * d);
      k[t] = linear(a, p + "self_attn.k_proj", c.qkvBias(), e, kvh * d);
      v[t] = linear(a, p + "self_attn.v_proj", c.qkvBias(), e, kvh * d);
      if (c.qkNorm()) {
        q[t] = perHeadRms(q[t], h, w.get(p + "self_attn.q_norm.weight"));
        k[t] = perHeadRms(k[t], kvh, w.get(p + "self_attn.k_norm.weight"));
      }
      q[t] = rope(q[t], h, t);
      k[t] = rope(k[t], kvh, t);
    }
    double[][] ctx = new double[n][h * d];
    double scale = 1.0 / Math.sqrt(d);
    int group = h / kvh;
    for (int head = 0; head < h; head++) {
      int kvHead = head / group;
      for (int t = 0; t < n; t++) {
        double[] scores = new double[t + 1];
        double max = Double.NEGATIVE_INFINITY;
        for (int s = 0; s <= t; s++) {
          double acc = 0;
          for (int j = 0; j < d; j++) {
            acc += q[t][head * d + j] * k[s][kvHead * d + j];
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
          for (int j = 0; j < d; j++) {
            ctx[t][head * d + j] += scores[s] / sum * v[s][kvHead * d + j];
          }
        }
      }
    }
    double[][] out = new double[n][];
    int inter = c.intermediateSize();
    for (int t = 0; t < n; t++) {
      double[] r = x[t].clone();
      double[] o = linear(ctx[t], p + "self_attn.o_proj", c.oBias(), h * d, e);
      for (int j = 0; j < e; j++) {
        r[j] += o[j];
      }
      double[] m = rms(r, w.get(p + "post_attention_layernorm.weight"));
      double[] gate = linear(m, p + "mlp.gate_proj", c.mlpBias(), e, inter);
      double[] up = linear(m, p + "mlp.up_proj", c.mlpBias(), e, inter);
      for (int j = 0; j < inter; j++) {
        gate[j] = gate[j] / (1 + Math.exp(-gate[j])) * up[j];
      }
      double[] down = linear(gate, p + "mlp.down_proj", c.mlpBias(), inter, e);
      for (int j = 0; j < e; j++) {
        r[j] += down[j];
      }
      out[t] = r;
    }
    return out;
  }

  /** q_embed = q · cos + rotate_half(q) · sin, rotate_half(x) = (-x2, x1), per head. */
  private double[] rope(double[] x, int heads, int position) {
    int d = c.headDim();
    double[] inv = inverseFrequencies();
    double[] out = new double[x.length];
    for (int head = 0; head < heads; head++) {
      for (int i = 0; i < d / 2; i++) {
        double angle = position * inv[i];
        double x1 = x[head * d + i];
        double x2 = x[head * d + i + d / 2];
        out[head * d + i] = x1 * Math.cos(angle) - x2 * Math.sin(angle);
        out[head * d + i + d / 2] = x2 * Math.cos(angle) + x1 * Math.sin(angle);
      }
    }
    return out;
  }

  /** Hugging Face's default / linear / llama3 inv_freq, written out as its code does. */
  private double[] inverseFrequencies() {
    int d = c.headDim();
    LlamaConfig.Rope r = c.rope();
    double[] inv = new double[d / 2];
    for (int i = 0; i < inv.length; i++) {
      inv[i] = 1.0 / Math.pow(r.theta(), (2.0 * i) / d);
    }
    if (r.type().equals("linear")) {
      for (int i = 0; i < inv.length; i++) {
        inv[i] /= r.factor();
      }
    } else if (r.type().equals("llama3")) {
      double lowWavelen = r.originalMaxPositions() / r.lowFreqFactor();
      double highWavelen = r.originalMaxPositions() / r.highFreqFactor();
      for (int i = 0; i < inv.length; i++) {
        double wavelen = 2 * Math.PI / inv[i];
        double scaled = wavelen > lowWavelen ? inv[i] / r.factor() : inv[i];
        double smooth = (r.originalMaxPositions() / wavelen - r.lowFreqFactor())
            / (r.highFreqFactor() - r.lowFreqFactor());
        double smoothed = (1 - smooth) * scaled / r.factor() + smooth * scaled;
        boolean medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
        inv[i] = medium ? smoothed : scaled;
      }
    }
    return inv;
  }

  private double[] perHeadRms(double[] x, int heads, double[] weight) {
    int d = c.headDim();
    double[] out = new double[x.length];
    for (int head = 0; head < heads; head++) {
      double[] one = rms(Arrays.copyOfRange(x, head * d, (head + 1) * d), weight);
      System.arraycopy(one, 0, out, head * d, d);
    }
    return out;
  }

  private double[] rms(double[] x, double[] weight) {
    double ms = 0;
    for (double v : x) {
      ms += v * v;
    }
    double inv = 1 / Math.sqrt(ms / x.length + c.rmsNormEps());
    double[] out = new double[x.length];
    for (int j = 0; j < x.length; j++) {
      out[j] = x[j] * inv * weight[j];
    }
    return out;
  }

  /** nn.Linear: weight [out, in]. {@code name}: a prefix, or the head's full tensor name. */
  private double[] linear(double[] x, String name, boolean bias, int in, int out) {
    double[] wt = w.get(name.endsWith(".weight") ? name : name + ".weight");
    double[] y = bias ? w.get(name + ".bias").clone() : new double[out];
    for (int o = 0; o < out; o++) {
      double acc = 0;
      for (int i = 0; i < in; i++) {
        acc += x[i] * wt[o * in + i];
      }
      y[o] += acc;
    }
    return y;
  }
}
