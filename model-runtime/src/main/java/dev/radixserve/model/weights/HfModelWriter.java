package dev.radixserve.model.weights;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.ModelConfig;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * Writes weights as a Hugging Face model directory (config.json + model.safetensors), for tests and
 * tooling: the server's tests build tiny model directories with it. F16 rounds to nearest even;
 * BF16 rounds to nearest even too (not truncation).
 */
public final class HfModelWriter {

  private static final ObjectMapper JSON = new ObjectMapper();

  private HfModelWriter() {}

  /** Canonical names (no {@code transformer.} prefix), lm_head tied (absent). */
  public static void write(GptWeights weights, Path dir, DType dtype) {
    write(weights, dir, dtype, "");
  }

  /** As {@link #write(GptWeights, Path, DType)}, every tensor name preceded by {@code namePrefix}. */
  public static void write(GptWeights weights, Path dir, DType dtype, String namePrefix) {
    try {
      Files.createDirectories(dir);
      writeConfig(weights.config(), dir.resolve(HfModelLoader.CONFIG_JSON));
      Map<String, Tensor> renamed = new java.util.LinkedHashMap<>();
      weights.tensors().forEach((name, t) -> renamed.put(namePrefix + name, t));
      writeSafetensors(renamed, dtype, dir.resolve(HfModelLoader.SAFETENSORS));
    } catch (IOException e) {
      throw new UncheckedIOException("writing model directory " + dir, e);
    }
  }

  static void writeConfig(ModelConfig c, Path file) throws IOException {
    ObjectNode n = JSON.createObjectNode();
    n.put("model_type", "gpt2");
    n.putArray("architectures").add("GPT2LMHeadModel");
    n.put("n_layer", c.nLayer());
    n.put("n_head", c.nHead());
    n.put("n_embd", c.nEmbd());
    n.put("n_positions", c.nPositions());
    n.put("n_ctx", c.nPositions());
    n.put("vocab_size", c.vocabSize());
    n.put("layer_norm_epsilon", c.layerNormEpsilon());
    n.put("activation_function", c.activationFunction());
    JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), n);
  }

  /** Writes tensors (any dtype in memory) converted to {@code dtype}, in map order. */
  static void writeSafetensors(Map<String, Tensor> tensors, DType dtype, Path file) throws IOException {
    ObjectNode header = JSON.createObjectNode();
    long offset = 0;
    for (Map.Entry<String, Tensor> e : tensors.entrySet()) {
      long bytes = e.getValue().elementCount() * dtype.bytes();
      ObjectNode info = header.putObject(e.getKey());
      info.put("dtype", dtype.name());
      var shape = info.putArray("shape");
      for (long d : e.getValue().shape()) {
        shape.add(d);
      }
      info.putArray("data_offsets").add(offset).add(offset + bytes);
      offset += bytes;
    }
    byte[] json = JSON.writeValueAsBytes(header);
    int padded = (json.length + 7) / 8 * 8; // keep the data 8-byte aligned; spaces are valid JSON
    try (OutputStream out = new java.io.BufferedOutputStream(Files.newOutputStream(file), 1 << 16)) {
      out.write(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(padded).array());
      out.write(json);
      out.write(" ".repeat(padded - json.length).getBytes(StandardCharsets.US_ASCII));
      for (Tensor t : tensors.values()) {
        writeData(t, dtype, out);
      }
    }
  }

  private static void writeData(Tensor t, DType dtype, OutputStream out) throws IOException {
    ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    long n = t.elementCount();
    for (long i = 0; i < n; i++) {
      if (buf.remaining() < 4) {
        out.write(buf.array(), 0, buf.position());
        buf.clear();
      }
      float v = t.get(i);
      switch (dtype) {
        case F32 -> buf.putFloat(v);
        case F16 -> buf.putShort(Float.floatToFloat16(v));
        case BF16 -> buf.putShort(toBf16(v));
      }
    }
    out.write(buf.array(), 0, buf.position());
  }

  static short toBf16(float v) {
    int bits = Float.floatToRawIntBits(v);
    if (Float.isNaN(v)) {
      return (short) ((bits >>> 16) | 0x40); // keep it a (quiet) NaN
    }
    return (short) ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16);
  }
}
