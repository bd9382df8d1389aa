package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ArrayNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class StreamChunksTest {

  /** Texts a detokenizer can give: escapes, control characters, every UTF-8 length. */
  private static final List<String> TEXTS = List.of("Hello", " world", "\"quoted\" \\ back",
      "line\nbreak\ttab\r\b\f", "\u0000\u0001\u001f\u007f", "</script>", "\u2028\u2029",
      "é", "日本語", "\uD83D\uDE00 emoji", "'single'", "/slash/", " ");

  @ParameterizedTest(name = "chat={0}")
  @ValueSource(booleans = {true, false})
  void everyEventIsItsTreeSerialisedAndFramed(boolean chat) {
    StreamChunks chunks = new StreamChunks(chat, "chatcmpl-\"id\"\u00e9", 1_764_000_000L,
        "models/gpt2 \"small\"");
    ArrayNode noLogprobs = Responses.JSON.createArrayNode();
    for (int choice : new int[] {0, 7, 12345}) {
      for (String text : TEXTS) {
        // text only: written as bytes directly
        assertEvent(chunks, choice, text, null, null);
        // with a finish reason, or logprobs asked for: the tree
        assertEvent(chunks, choice, text, null, "stop");
        assertEvent(chunks, choice, text, noLogprobs, null);
      }
      assertEvent(chunks, choice, "", null, "length");
    }
  }

  private static void assertEvent(StreamChunks chunks, int choice, String text, ArrayNode lp,
      String fin) {
    String expected = "data: " + chunks.chunk(choice, text, lp, fin, null) + "\n\n";
    ByteBuf b = chunks.event(UnpooledByteBufAllocator.DEFAULT, choice, text, lp, fin);
    try {
      assertEquals(expected, b.toString(StandardCharsets.UTF_8), text + " " + fin);
    } finally {
      b.release();
    }
  }
}
