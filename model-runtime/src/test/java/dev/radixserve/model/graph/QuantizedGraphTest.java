package dev.radixserve.model.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.quant.QuantizationException;
import dev.radixserve.model.weights.GptWeights;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** What a quantized GPT-2 graph asks the runner for: the quantized forms, never both. */
class QuantizedGraphTest {

  private static final ModelConfig C = new ModelConfig(2, 2, 64, 32, 300, 1e-5, "gelu_new");

  private static Set<String> names(QuantSpec q) {
    return new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32, q).initializers().stream()
        .map(ExternalInitializer::name).collect(Collectors.toSet());
  }

  @Test
  void fp32AsksForExactlyTheCheckpointsTensors() {
    assertEquals(GptWeights.expectedShapes(C).keySet(), names(QuantSpec.none()));
  }

  @Test
  void quantizedLayersAskForTheirThreePartsAndNotTheFp32Weight() {
    Set<String> names = names(QuantSpec.of(QuantMode.INT4).withZeroPoints(true));
    for (int i = 0; i < C.nLayer(); i++) {
      for (String w : List.of("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")) {
        String weight = "h." + i + "." + w + ".weight";
        assertFalse(names.contains(weight), weight);
        assertTrue(names.containsAll(List.of(weight + ".q", weight + ".scales",
            weight + ".zero_points", "h." + i + "." + w + ".bias")), weight);
      }
    }
    Set<String> plainHead = names(QuantSpec.of(QuantMode.INT4).withLmHead(false));
    assertFalse(plainHead.contains("wte.weight.q"), "the LM head only with lmHead");
    assertTrue(plainHead.contains("wte.weight") && !plainHead.contains("wte.weight.gather_q"),
        "an unquantized head keeps the embedding as the checkpoint has it");
    Set<String> withHead = names(QuantSpec.of(QuantMode.INT8).withLmHead(true));
    assertTrue(withHead.containsAll(List.of("wte.weight.q", "wte.weight.gather_q",
        "wte.weight.gather_scales", "wte.weight.gather_zero_points")),
        "tied: the head and the gather read the same blocks, each in its operator's shape");
    assertFalse(withHead.contains("wte.weight"), "no float copy of the embedding");
    assertFalse(withHead.contains("h.0.attn.c_attn.weight.zero_points"), "symmetric");
  }

  @Test
  void shapesAreMatMulNBitsShapes() {
    ExternalInitializer q = new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32, QuantSpec.of(QuantMode.INT4)
            .withZeroPoints(true)).initializers().stream()
        .filter(i -> i.name().equals("h.0.mlp.c_proj.weight.q")).findFirst().orElseThrow();
    // K = n_inner = 256, N = 64, int4's auto block 128: [N, K / 128, 128 * 4 / 8]
    assertEquals(List.of(64L, 2L, 64L), java.util.Arrays.stream(q.dims()).boxed().toList());
  }

  /**
   * A GGUF file's Q4_K layers ({@link QuantSpec#offsetWeights}) beside int8 ones: symmetric int4
   * blocks of 32 with no zero-point input, a [K/32, N] offset matrix multiplied by the input's
   * block sums (one ReduceSum per input, shared by the products that read it), their own spec
   * ({@code gguf-q4k}, nothing of the model's list in it) and a key of their own; the other
   * layers are the int8 they would be.
   */
  @Test
  void offsetWeightsAreInt4CodesPlusBlockSumsTimesOffsets() throws Exception {
    Set<String> q4k = Set.of("h.0.mlp.c_proj.weight", "h.1.mlp.c_proj.weight",
        "h.1.mlp.c_fc.weight");
    QuantSpec spec = QuantSpec.of(QuantMode.INT8).withOffsetWeights(q4k);
    OnnxGraph graph = new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32, spec);
    java.util.Map<String, long[]> dims = graph.initializers().stream().collect(
        Collectors.toMap(ExternalInitializer::name, ExternalInitializer::dims));
    // c_proj: K = n_inner = 256, N = 64
    assertEquals(List.of(64L, 8L, 16L), boxed(dims.get("h.0.mlp.c_proj.weight.q")));
    assertEquals(List.of(64L, 8L), boxed(dims.get("h.0.mlp.c_proj.weight.scales")));
    assertEquals(List.of(8L, 64L), boxed(dims.get("h.0.mlp.c_proj.weight.offsets")));
    assertFalse(dims.containsKey("h.0.mlp.c_proj.weight.zero_points"));
    assertEquals(List.of(256L, 1L, 64L), boxed(dims.get("h.0.mlp.c_fc.weight.q")),
        "int8 in auto's blocks: 64 divides K = 64");
    assertFalse(dims.containsKey("h.0.mlp.c_fc.weight.offsets"));
    graph.initializers().stream().filter(i -> i.name().endsWith(".offsets")).forEach(i ->
        assertEquals("gguf-q4k", ((WeightSource.Quantized) i.source()).spec().checkpoint()
            .method().label()));
    ai.onnx.proto.OnnxMl.ModelProto model = ai.onnx.proto.OnnxMl.ModelProto.parseFrom(
        graph.model());
    long sums = model.getGraph().getNodeList().stream()
        .filter(node -> node.getOpType().equals("ReduceSum")).count();
    assertEquals(3, sums, "one per input of an offset weight: h.0 c_proj's, h.1 c_fc's and"
        + " c_proj's");
    QuantSpec one = spec.forWeight("h.1.mlp.c_fc.weight", 64);
    assertEquals(List.of(QuantMode.INT4, 32, false), List.of(one.mode(), one.blockSize(),
        one.zeroPoints()));
    assertEquals(Set.of(), one.offsetWeights());
    assertEquals(Set.of(), spec.forWeight("h.0.mlp.c_fc.weight", 64).offsetWeights());
    assertEquals("int8/bauto64/sym/acc4/gguf-q4k/head-b64", spec.resolvedFor(768).key());
    assertThrows(IllegalArgumentException.class,
        () -> QuantSpec.none().withOffsetWeights(q4k), "offsets under none");
  }

  private static List<Long> boxed(long[] dims) {
    return java.util.Arrays.stream(dims).boxed().toList();
  }

  /** int4 layers, the default int8 head: each MatMulNBits in its own bits. */
  @Test
  void int4LayersTakeAnInt8HeadByDefault() {
    List<ExternalInitializer> inits = new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32,
        QuantSpec.of(QuantMode.INT4)).initializers();
    long[] head = inits.stream().filter(i -> i.name().equals("wte.weight.q")).findFirst()
        .orElseThrow().dims();
    long[] layer = inits.stream().filter(i -> i.name().equals("h.0.attn.c_attn.weight.q"))
        .findFirst().orElseThrow().dims();
    assertEquals(64L, head[2], "8 bits x 64 weights: auto's 256 halved to K = 64");
    assertEquals(32L, layer[2], "4 bits x 64 weights a block: auto's 128 halved to K = 64");
    QuantSpec int4 = QuantSpec.of(QuantMode.INT4);
    assertEquals("int4/bauto128/asym/acc4/head-int8-bauto", int4.key());
    assertEquals("int4/bauto128/asym/acc4/head-int8-b64", int4.resolvedFor(C.nEmbd()).key());
    assertEquals("int4/bauto128/asym/acc4/head-int8-b256", int4.resolvedFor(768).key());
    assertEquals("int4/bauto128/asym/acc4/head-int8-b32", int4.withHeadBlockSize(32).key());
    assertEquals("int4/b32/asym/acc4/head-int8",
        int4.withBlockSize(32).withHeadBlockSize(32).key());
    assertEquals("int4/bauto128/asym/acc4/head-b128",
        int4.withLmHead(true).resolvedFor(768).key());
    assertEquals("int8/bauto64/sym/acc4/head-b64",
        QuantSpec.of(QuantMode.INT8).resolvedFor(768).key());
    assertEquals("int8/bauto64/sym/acc4", QuantSpec.of(QuantMode.INT8).withLmHead(false)
        .resolvedFor(768).key());
    assertEquals("int8/b32/sym/acc4/head-b64",
        QuantSpec.of(QuantMode.INT8).withBlockSize(32).resolvedFor(768).key());
  }

  /**
   * auto: an int8 head in blocks of 64 beside int8 layers and of 256 beside int4 ones, halved
   * until they divide the head's K but never below the layers' block (larger layers' blocks are
   * kept); an int4 head in the layers' blocks; a size set is kept.
   */
  @Test
  void theHeadsAutoBlockSizeFollowsItsWidth() {
    QuantSpec int8 = QuantSpec.of(QuantMode.INT8);
    assertEquals(64, int8.headBlockFor(768));
    assertEquals(64, int8.headBlockFor(1600));
    assertEquals(32, int8.headBlockFor(1616));
    assertEquals(256, int8.withBlockSize(256).headBlockFor(768));
    assertEquals(128, QuantSpec.of(QuantMode.INT4).withLmHead(true).headBlockFor(768));
    assertEquals(32, QuantSpec.of(QuantMode.INT4).withLmHead(true).headBlockFor(1616));
    assertEquals(64, int8.withHeadBlockSize(64).headBlockFor(768));
    QuantSpec int4 = QuantSpec.of(QuantMode.INT4);
    assertEquals(256, int4.headBlockFor(2048), "Llama-3.2-1B's head beside int4 layers");
    assertEquals(64, int4.headBlockFor(1600), "256 and 128 do not divide 1,600");
    assertEquals(128, int4.withBlockSize(128).headBlockFor(1664), "never below the layers'");
    assertEquals(QuantMode.INT8, int4.forHead(768).mode());
    assertEquals(256, int4.forHead(768).blockSize());
  }

  /**
   * The default block size is auto, int8's and int4's: each layer in the largest block that
   * divides its own K, from 64 for int8 and 128 for int4 down to 32, written into its MatMulNBits
   * node and its blocks alike (int8 not in 128: that would need an even row count,
   * QuantSpec.evenRows, for 15% of a decode step; int4 needs it at any block of 32 or more).
   */
  @Test
  void int8LayersTakeTheLargestBlockTheirKAllows() {
    QuantSpec int8 = QuantSpec.of(QuantMode.INT8);
    assertEquals(QuantSpec.AUTO_BLOCK_SIZE, int8.blockSize());
    assertEquals(64, int8.blockFor(4096));
    assertEquals(64, int8.blockFor(14336));
    assertEquals(64, int8.blockFor(576));
    assertEquals(32, int8.blockFor(1616));
    assertEquals(32, int8.withBlockSize(32).blockFor(4096));
    assertEquals(128, QuantSpec.of(QuantMode.INT4).blockFor(4096));
    assertEquals(128, QuantSpec.of(QuantMode.INT4).blockFor(14336));
    assertEquals(64, QuantSpec.of(QuantMode.INT4).blockFor(576));
    assertEquals(32, QuantSpec.of(QuantMode.INT4).blockFor(1616));
    assertEquals(QuantSpec.AUTO_BLOCK_SIZE, QuantSpec.of(QuantMode.INT4).blockSize());
    List<ExternalInitializer> inits =
        new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32, int8).initializers();
    // c_attn reads the 64-wide residual, c_proj of the MLP the 256-wide inner layer
    assertEquals(64L, dims(inits, "h.0.attn.c_attn.weight.q")[2], "K = 64: one block of 64");
    assertEquals(64L, dims(inits, "h.0.mlp.c_proj.weight.q")[2], "K = 256: blocks of 64");
    assertEquals(4L, dims(inits, "h.0.mlp.c_proj.weight.scales")[1], "256 / 64 blocks");
  }

  private static long[] dims(List<ExternalInitializer> inits, String name) {
    return inits.stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow().dims();
  }

  @Test
  void aHeadBlockThatDoesNotDivideKIsRefusedNamingTheHead() {
    QuantizationException e = assertThrows(QuantizationException.class,
        () -> new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32,
            QuantSpec.of(QuantMode.INT8).withHeadBlockSize(128)));
    assertTrue(e.getMessage().startsWith("cannot quantize wte.weight: its input dimension K = 64"
        + " is not a multiple of the quantization block size 128"), e.getMessage());
    assertTrue(e.getMessage().contains("--quantization-head-block-size"), e.getMessage());
  }

  @Test
  void aBlockThatDoesNotDivideKIsRefusedNamingTheLayer() {
    QuantizationException e = assertThrows(QuantizationException.class,
        () -> new PagedGpt2Graph(C).build(4, GraphDtype.FLOAT32,
            QuantSpec.of(QuantMode.INT8).withBlockSize(128)));
    assertTrue(e.getMessage().startsWith("cannot quantize h.0.attn.c_attn.weight: its input "
        + "dimension K = 64 is not a multiple of the quantization block size 128"), e.getMessage());
  }
}
