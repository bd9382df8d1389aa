package dev.radixserve.model.graph;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.onnx.proto.OnnxMl.AttributeProto;
import ai.onnx.proto.OnnxMl.NodeProto;
import dev.radixserve.model.ModelShape;
import dev.radixserve.model.quant.QuantSpec;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The attention spec and the PagedAttention attributes {@link PagedIo} writes from it. */
class AttentionSpecTest {

  private static final ModelShape SHAPE = new ModelShape() {
    @Override public int nLayer() {
      return 3;
    }

    @Override public int kvHeads() {
      return 2;
    }

    @Override public int hiddenSize() {
      return 16;
    }

    @Override public int headDim() {
      return 4;
    }

    @Override public int nPositions() {
      return 64;
    }

    @Override public int vocabSize() {
      return 10;
    }
  };

  @Test
  void fullIsOneOverRootHeadDimWithNoWindowAndNoCap() {
    assertEquals(new AttentionSpec(0.125f, 0, 0f), AttentionSpec.full(64));
    assertEquals(-1, AttentionSpec.full(64).localWindowSize());
    assertEquals(4096, new AttentionSpec(0.125f, 4096, 0f).localWindowSize());
  }

  @Test
  void meaninglessSpecsAreRefused() {
    assertThrows(IllegalArgumentException.class, () -> new AttentionSpec(0.1f, -1, 0f));
    assertThrows(IllegalArgumentException.class, () -> new AttentionSpec(0.1f, 0, -1f));
    assertThrows(IllegalArgumentException.class, () -> new AttentionSpec(0f, 0, 0f));
    assertThrows(IllegalArgumentException.class, () -> new AttentionSpec(Float.NaN, 0, 0f));
    assertThrows(IllegalArgumentException.class, () -> AttentionSpec.full(0));
  }

  /**
   * The old signature writes what it always wrote (no window or softcap attribute at all); a
   * spec's window goes out as Hugging Face's W unchanged (ONNX Runtime's local_window_size counts
   * the query itself too), its cap as softcap.
   */
  @Test
  void pagedIoWritesTheSpecAsTheNodesAttributes() {
    GraphBuilder g = new GraphBuilder("attention");
    PagedIo io = new PagedIo(g, SHAPE, 16, GraphDtype.FLOAT32, KvDtype.FLOAT32, Map.of(),
        QuantSpec.none(), ActOrder.NONE);
    io.attention(0, "q0", "k0", "v0", 4);
    io.attention(1, "q1", "k1", "v1", 4, new AttentionSpec(0.0625f, 4096, 50f));
    io.attention(2, "q2", "k2", "v2", 4, new AttentionSpec(0.5f, 0, 30f));
    List<NodeProto> nodes = g.model(17, "test").getGraph().getNodeList();

    Map<String, AttributeProto> full = attributes(nodes.get(0));
    assertEquals(0.5f, full.get("scale").getF());
    assertEquals(4, full.get("num_heads").getI());
    assertEquals(2, full.get("kv_num_heads").getI());
    assertFalse(full.containsKey("local_window_size"));
    assertFalse(full.containsKey("softcap"));

    Map<String, AttributeProto> sliding = attributes(nodes.get(1));
    assertEquals(0.0625f, sliding.get("scale").getF());
    assertEquals(4096, sliding.get("local_window_size").getI());
    assertEquals(50f, sliding.get("softcap").getF());

    Map<String, AttributeProto> capped = attributes(nodes.get(2));
    assertFalse(capped.containsKey("local_window_size"));
    assertEquals(30f, capped.get("softcap").getF());
  }

  private static Map<String, AttributeProto> attributes(NodeProto n) {
    return n.getAttributeList().stream()
        .collect(Collectors.toMap(AttributeProto::getName, a -> a));
  }
}
