package dev.radixserve.model.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.PrequantizedCheckpoints;
import dev.radixserve.model.quant.CheckpointQuantization.Method;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.Tensor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The repacking into MatMulNBits against the upstream projects' own packing: the fixtures in
 * {@code resources/prequantized} were written by {@code make_fixtures.py}, a line-by-line numpy
 * transliteration of AutoGPTQ's, GPTQModel's and AutoAWQ's pack and unpack code (the README
 * there names the files and commits). Each holds a layer as the checkpoint stores it, the codes
 * and true zero points it encodes, and the fp32 value of the upstream dequantization; the
 * repacked weight must give all three back exactly. The test-side packer that writes whole
 * GPTQ/AWQ model directories for the other tests ({@link PrequantizedCheckpoints}) must write
 * the fixtures' words bit for bit.
 */
class CheckpointRepackerTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private record Fixture(CheckpointQuantization q, Map<String, Tensor> tensors, int k, int n) {

    int[][] ints(String name, int rows, int cols) {
      Tensor t = tensors.get(name);
      assertArrayEquals(new long[] {rows, cols}, t.shape(), name);
      int[][] out = new int[rows][cols];
      for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) {
          out[r][c] = t.getInt((long) r * cols + c);
        }
      }
      return out;
    }

    int[] flat(String name) {
      Tensor t = tensors.get(name);
      int[] out = new int[(int) t.elementCount()];
      for (int i = 0; i < out.length; i++) {
        out[i] = t.getInt(i);
      }
      return out;
    }
  }

  /**
   * Block b of the repacked weight holds the checkpoint's group b: its inputs in {@link
   * CheckpointRepacker#inputOrder} (all in place but under act-order, where the order must put
   * every input with its group, as the fixture's {@code g_idx} says).
   */
  @ParameterizedTest
  @ValueSource(strings = {"gptq_v1_int4_g32_asym", "gptq_v1_int4_g32_sym", "gptq_v1_int8_g32_sym",
      "gptq_v2_int4_g64_asym", "gptq_v1_int4_g32_actorder", "awq_gemm_int4_g32",
      "awq_gemm_int4_g128_k256"})
  void repackedBlocksHoldTheUpstreamCodesZerosAndValues(String name) throws IOException {
    Fixture f = fixture(name);
    QuantizedWeight w = CheckpointRepacker.repack(f.q(), "m", WeightLayout.OUT_IN, f.tensors());
    int[] order = CheckpointRepacker.inputOrder(f.q(), "m", f.tensors());
    boolean[] seen = new boolean[f.k()];
    for (int kk = 0; kk < f.k(); kk++) {
      int k = order[kk];
      assertTrue(!seen[k], name + ": input " + k + " twice");
      seen[k] = true;
      int group = f.q().method() == Method.GPTQ ? f.tensors().get("m.g_idx").getInt(k)
          : k / f.q().groupSize();
      assertEquals(kk / f.q().groupSize(), group, name + ": input " + k + " read in block "
          + kk / f.q().groupSize());
    }
    assertEquals(!f.q().actOrder(), CheckpointRepacker.inPlace(order),
        name + ": in place unless act-order");
    assertEquals(f.k(), w.k());
    assertEquals(f.n(), w.n());
    assertEquals(f.q().bits(), w.bits());
    // served as a MatMulNBits block per group
    assertEquals(f.q().groupSize(), w.blockSize());
    int groups = f.k() / f.q().groupSize();
    int[][] codes = f.ints("m.codes", f.n(), f.k());
    int[][] zeros = f.ints("m.zeros", groups, f.n());
    Tensor dequantized = f.tensors().get("m.dequantized");
    for (int n = 0; n < f.n(); n++) {
      for (int kk = 0; kk < f.k(); kk++) {
        int k = order[kk];
        assertEquals(codes[n][k], w.code(kk, n), name + " code of output " + n + ", input " + k);
        float want = dequantized.get((long) n * f.k() + k);
        assertEquals(Float.floatToIntBits(want), Float.floatToIntBits(w.dequantized(kk, n)),
            name + " value of output " + n + ", input " + k + ": " + want + " vs "
                + w.dequantized(kk, n));
      }
      for (int b = 0; b < w.kBlocks(); b++) {
        int g = b * w.blockSize() / f.q().groupSize();
        assertEquals(zeros[g][n], w.zeroPoint(n, b), name + " zero of output " + n + ", block "
            + b + " (group " + g + ")");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"gptq_v1_int4_g32_asym", "gptq_v1_int4_g32_sym", "gptq_v1_int8_g32_sym",
      "gptq_v2_int4_g64_asym", "awq_gemm_int4_g32", "awq_gemm_int4_g128_k256"})
  void theTestPackerWritesTheUpstreamWords(String name) throws IOException {
    Fixture f = fixture(name);
    int groups = f.k() / f.q().groupSize();
    int[][] codes = f.ints("m.codes", f.n(), f.k());
    int[][] zeros = f.ints("m.zeros", groups, f.n());
    if (f.q().method() == Method.GPTQ) {
      assertArrayEquals(f.flat("m.qweight"),
          PrequantizedCheckpoints.packGptqWeight(codes, f.q().bits()), name + " qweight");
      assertArrayEquals(f.flat("m.qzeros"),
          PrequantizedCheckpoints.packGptqZeros(zeros, f.q().bits(), f.q().zeroOffset()),
          name + " qzeros");
    } else {
      int[][] byInput = new int[f.k()][f.n()];
      for (int n = 0; n < f.n(); n++) {
        for (int k = 0; k < f.k(); k++) {
          byInput[k][n] = codes[n][k];
        }
      }
      assertArrayEquals(f.flat("m.qweight"), PrequantizedCheckpoints.packAwq(byInput),
          name + " qweight");
      assertArrayEquals(f.flat("m.qzeros"), PrequantizedCheckpoints.packAwq(zeros),
          name + " qzeros");
    }
  }

  @Test
  void aGroupIndexThatIsNoGroupingIsRefused() throws IOException {
    Fixture f = fixture("gptq_v1_int4_g32_actorder");
    Map<String, Tensor> tensors = new LinkedHashMap<>(f.tensors());
    int[] oneGroup = new int[f.k()]; // every input in group 0
    tensors.put("m.g_idx", PrequantizedCheckpoints.ints("m.g_idx", new long[] {f.k()}, oneGroup));
    QuantizationException overfull = assertThrows(QuantizationException.class,
        () -> CheckpointRepacker.repack(f.q(), "m", WeightLayout.OUT_IN, tensors));
    assertEquals("m.g_idx puts input 32 in group 0: the layer has 4 groups of 32 inputs",
        overfull.getMessage());
  }

  @Test
  void packedTensorsOfTheWrongTypeAreRefusedByName() throws IOException {
    Fixture f = fixture("awq_gemm_int4_g32");
    Map<String, Tensor> tensors = new LinkedHashMap<>(f.tensors());
    Tensor q = tensors.get("m.qweight");
    tensors.put("m.qweight", new Tensor("m.qweight", DType.F32, q.shape(), q.data()));
    QuantizationException e = assertThrows(QuantizationException.class,
        () -> CheckpointRepacker.repack(f.q(), "m", WeightLayout.OUT_IN, tensors));
    assertEquals("tensor m.qweight holds F32, expected I32", e.getMessage());
  }

  /** A fixture's tensors under module {@code m}, and its format from {@code __metadata__}. */
  private static Fixture fixture(String name) throws IOException {
    byte[] bytes;
    try (InputStream in = CheckpointRepackerTest.class.getResourceAsStream(
        "/prequantized/" + name + ".safetensors")) {
      assertTrue(in != null, "fixture " + name);
      bytes = in.readAllBytes();
    }
    ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int headerLength = (int) buf.getLong(0);
    JsonNode header = JSON.readTree(new String(bytes, 8, headerLength,
        java.nio.charset.StandardCharsets.UTF_8));
    JsonNode meta = header.get("__metadata__");
    Method method = Method.valueOf(meta.get("quant_method").asText().toUpperCase());
    int bits = meta.get("bits").asInt();
    int group = meta.get("group_size").asInt();
    int offset = method == Method.GPTQ && meta.get("checkpoint_format").asText().equals("gptq")
        ? 1 : 0;
    boolean actOrder = meta.get("desc_act").asText().equals("true");
    Map<String, Tensor> tensors = new LinkedHashMap<>();
    MemorySegment data = MemorySegment.ofArray(bytes).asSlice(8 + headerLength);
    for (Iterator<Map.Entry<String, JsonNode>> it = header.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (e.getKey().equals("__metadata__")) {
        continue;
      }
      JsonNode info = e.getValue();
      long[] shape = new long[info.get("shape").size()];
      for (int i = 0; i < shape.length; i++) {
        shape[i] = info.get("shape").get(i).asLong();
      }
      long begin = info.get("data_offsets").get(0).asLong();
      long end = info.get("data_offsets").get(1).asLong();
      tensors.put("m." + e.getKey(), new Tensor("m." + e.getKey(),
          DType.valueOf(info.get("dtype").asText()), shape, data.asSlice(begin, end - begin)));
    }
    return new Fixture(new CheckpointQuantization(method, bits, group, offset, actOrder), tensors,
        meta.get("in_features").asInt(), meta.get("out_features").asInt());
  }
}
