package dev.radixserve.model.quant;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.quant.CheckpointQuantization.Method;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code quantization_config} as the tools write it: the GPTQ and AWQ variants whose blocks are
 * MatMulNBits' load; every other is refused by key and value.
 */
class CheckpointQuantizationTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(String s) {
    try {
      return JSON.readTree(s);
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  @Test
  void theToolsConfigsLoad() {
    // Optimum / AutoGPTQ (as in Qwen2.5-*-GPTQ-Int4): no checkpoint_format, so v1
    assertEquals(new CheckpointQuantization(Method.GPTQ, 4, 128, 1), CheckpointQuantization.parse(
        json("{\"batch_size\":1,\"bits\":4,\"block_name_to_quantize\":null,\"damp_percent\":0.01,"
            + "\"desc_act\":false,\"exllama_config\":{\"version\":1},\"group_size\":128,"
            + "\"quant_method\":\"gptq\",\"sym\":true,\"true_sequential\":true,"
            + "\"use_exllama\":true}")));
    // GPTQModel; desc_act is not read: the loader finds act-order in the layers' g_idx
    assertEquals(new CheckpointQuantization(Method.GPTQ, 8, 32, 0, false),
        CheckpointQuantization.parse(json("{\"bits\":8,\"group_size\":32,\"desc_act\":true,"
            + "\"sym\":false,\"quant_method\":\"gptq\",\"checkpoint_format\":\"gptq_v2\","
            + "\"dynamic\":null}")));
    // AutoAWQ, and its older key names
    assertEquals(new CheckpointQuantization(Method.AWQ, 4, 128, 0), CheckpointQuantization.parse(
        json("{\"bits\":4,\"group_size\":128,\"modules_to_not_convert\":null,"
            + "\"quant_method\":\"awq\",\"version\":\"gemm\",\"zero_point\":true}")));
    assertEquals(new CheckpointQuantization(Method.AWQ, 4, 64, 0), CheckpointQuantization.parse(
        json("{\"w_bit\":4,\"q_group_size\":64,\"quant_method\":\"awq\",\"version\":\"GEMM\","
            + "\"zero_point\":true}")));
  }

  @ParameterizedTest(name = "{1}")
  @CsvSource(delimiter = '|', value = {
      "{\"quant_method\":\"bitsandbytes\",\"load_in_4bit\":true}"
          + "|quantization_config quant_method bitsandbytes is not supported: radixserve loads"
          + " GPTQ and AWQ (GEMM) checkpoints, and F32/F16/BF16 ones (which --quantization int8"
          + " or int4 quantizes at load)",
      "{\"quant_method\":\"fp8\",\"activation_scheme\":\"dynamic\"}"
          + "|quantization_config quant_method fp8 is not supported",
      "{\"bits\":3,\"group_size\":128,\"quant_method\":\"gptq\"}"
          + "|quantization_config gptq bits 3 is not supported (4 or 8: MatMulNBits' widths)",
      "{\"bits\":4,\"group_size\":-1,\"quant_method\":\"gptq\"}"
          + "|quantization_config gptq group_size -1 (one scale per output row) is not"
          + " supported: MatMulNBits needs groups of 16 to 256 inputs",
      "{\"bits\":4,\"group_size\":100,\"quant_method\":\"gptq\"}"
          + "|quantization_config gptq group_size 100 is not supported (16, 32, 64, 128 or 256:"
          + " MatMulNBits' block sizes)",
      "{\"bits\":4,\"group_size\":128,\"quant_method\":\"gptq\",\"checkpoint_format\":\"marlin\"}"
          + "|quantization_config gptq checkpoint_format marlin is not supported (gptq or"
          + " gptq_v2; marlin packs the weights for another kernel)",
      "{\"bits\":4,\"group_size\":128,\"quant_method\":\"gptq\",\"dynamic\":{\"-:.*down\":{}}}"
          + "|quantization_config gptq dynamic (per-module bits and group sizes) is not supported",
      "{\"bits\":4,\"group_size\":128,\"quant_method\":\"gptq\",\"lm_head\":true}"
          + "|quantization_config gptq lm_head true (a quantized LM head) is not supported: the"
          + " head is loaded from a float lm_head.weight",
      "{\"bits\":4,\"group_size\":128,\"quant_method\":\"awq\",\"version\":\"gemv\"}"
          + "|quantization_config awq version gemv is not supported (gemm: AutoAWQ's GEMM"
          + " packing; gemv orders the nibbles for another kernel)",
      "{\"bits\":8,\"group_size\":128,\"quant_method\":\"awq\",\"version\":\"gemm\"}"
          + "|quantization_config awq bits 8 is not supported (4)",
      "{\"bits\":4,\"group_size\":128,\"quant_method\":\"awq\",\"zero_point\":false}"
          + "|quantization_config awq zero_point false is not supported"})
  void otherConfigsAreRefusedByKeyAndValue(String config, String message) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> CheckpointQuantization.parse(json(config)));
    assertEquals(message, e.getMessage().substring(0, Math.min(message.length(),
        e.getMessage().length())), e.getMessage());
  }

  @Test
  void aLayerIsStoredAsTheFormatsTensors() {
    Map<String, long[]> gptq = new CheckpointQuantization(Method.GPTQ, 4, 32, 1)
        .tensorShapes("layers.0.mlp.down_proj", 128, 64, WeightLayout.OUT_IN);
    assertEquals(List.of("layers.0.mlp.down_proj.qweight", "layers.0.mlp.down_proj.qzeros",
        "layers.0.mlp.down_proj.scales", "layers.0.mlp.down_proj.g_idx"),
        List.copyOf(gptq.keySet()));
    assertArrayEquals(new long[] {16, 64}, gptq.get("layers.0.mlp.down_proj.qweight"));
    assertArrayEquals(new long[] {4, 8}, gptq.get("layers.0.mlp.down_proj.qzeros"));
    assertArrayEquals(new long[] {4, 64}, gptq.get("layers.0.mlp.down_proj.scales"));
    assertArrayEquals(new long[] {128}, gptq.get("layers.0.mlp.down_proj.g_idx"));
    assertArrayEquals(new long[] {32, 64}, new CheckpointQuantization(Method.GPTQ, 8, 32, 1)
        .tensorShapes("p", 128, 64, WeightLayout.OUT_IN).get("p.qweight"));
    Map<String, long[]> awq = new CheckpointQuantization(Method.AWQ, 4, 64, 0)
        .tensorShapes("p", 128, 64, WeightLayout.OUT_IN);
    assertEquals(List.of("p.qweight", "p.qzeros", "p.scales"), List.copyOf(awq.keySet()));
    assertArrayEquals(new long[] {128, 8}, awq.get("p.qweight"));
    assertArrayEquals(new long[] {2, 8}, awq.get("p.qzeros"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> new CheckpointQuantization(Method.AWQ, 4, 64, 0).tensorShapes("p", 96, 64,
            WeightLayout.OUT_IN));
    assertEquals("p has 96 inputs, not a multiple of the checkpoint's group size 64",
        e.getMessage());
  }
}
