package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
  void textEventIsTheTreeSerialisedAndFramed(boolean chat) {
    StreamChunks chunks = new StreamChunks(chat, "chatcmpl-\"id\"\u00e9", 1_764_000_000L,
        "models/gpt2 \"small\"");
    for (int choice : new int[] {0, 7, 12345}) {
      for (String text : TEXTS) {
        String expected = "data: " + chunks.chunk(choice, text, null, null, null) + "\n\n";
        ByteBuf b = chunks.textEvent(UnpooledByteBufAllocator.DEFAULT, choice, text);
        try {
          assertEquals(expected, b.toString(StandardCharsets.UTF_8), text);
        } finally {
          b.release();
        }
      }
    }
  }
}
