package dev.radixserve.server.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * The JSON objects of one generation call: their common header, the streamed chunks as trees, and
 * the chunk a stream sends once per token (a text delta, nothing else) as bytes directly.
 *
 * <p>Why the direct bytes: building that chunk as a Jackson tree and serialising it to a
 * {@code String} was most of the event loop's ~0.25 ms per streamed token at batch-1 decode (JFR),
 * about 4 % of the CPU a token costs on a CPU model. {@link #event} writes that one as the same
 * bytes as {@code frame(chunk(index, text, null, null, null))} (tested byte for byte): the
 * header fields are serialised by Jackson once per call, the text is escaped by Jackson's own
 * {@link JsonStringEncoder}.
 */
final class StreamChunks {

  private static final byte[] CHAT_TAIL =
      "},\"logprobs\":null,\"finish_reason\":null}]}\n\n".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] TEXT_TAIL =
      ",\"logprobs\":null,\"finish_reason\":null}]}\n\n".getBytes(StandardCharsets.US_ASCII);

  private final boolean chat;
  private final String id;
  private final long created;
  private final String model;
  /** {@code data: {"id":…,"model":…,"choices":[{"index":} */
  private final byte[] eventHead;
  /** {@code ,"delta":{"content":"} or {@code ,"text":"} */
  private final byte[] textHead;

  StreamChunks(boolean chat, String id, long created, String model) {
    this.chat = chat;
    this.id = id;
    this.created = created;
    this.model = model;
    String head = header(chunkObject()).toString();
    this.eventHead = ("data: " + head.substring(0, head.length() - 1) + ",\"choices\":[{\"index\":")
        .getBytes(StandardCharsets.UTF_8);
    this.textHead = (chat ? ",\"delta\":{\"content\":\"" : ",\"text\":\"")
        .getBytes(StandardCharsets.US_ASCII);
  }

  /** The object name of a streamed chunk. */
  String chunkObject() {
    return chat ? "chat.completion.chunk" : "text_completion";
  }

  /** The object name of the non-streamed response. */
  String responseObject() {
    return chat ? "chat.completion" : "text_completion";
  }

  /** {@code id}, {@code object}, {@code created} and {@code model}, in OpenAI's order. */
  ObjectNode header(String object) {
    ObjectNode root = Responses.JSON.createObjectNode();
    root.put("id", id);
    root.put("object", object);
    root.put("created", created);
    root.put("model", model);
    return root;
  }

  /** One streamed chunk of choice {@code choice}; {@code role} only on a chat's first chunk. */
  ObjectNode chunk(int choice, String delta, ArrayNode lp, String fin, String role) {
    ObjectNode root = header(chunkObject());
    ObjectNode c = root.putArray("choices").addObject();
    c.put("index", choice);
    if (chat) {
      ObjectNode d = c.putObject("delta");
      if (role != null) {
        d.put("role", role);
        d.put("content", "");
      } else if (delta != null && !delta.isEmpty()) {
        d.put("content", delta);
      }
    } else {
      c.put("text", delta == null ? "" : delta);
    }
    c.set("logprobs", lp == null ? null : LogprobsJson.format(chat, lp));
    c.put("finish_reason", fin);
    return root;
  }

  /**
   * The SSE event of a content chunk ({@link #chunk} without a role). The common one, text and
   * nothing else, is written straight to bytes; any other is the tree, serialised and framed.
   */
  ByteBuf event(ByteBufAllocator alloc, int choice, String delta, ArrayNode lp, String fin) {
    if (lp == null && fin == null && delta != null && !delta.isEmpty()) {
      return textEvent(alloc, choice, delta);
    }
    return frame(chunk(choice, delta, lp, fin, null));
  }

  /** {@code data: JSON}, then the blank line that ends an SSE event. */
  static ByteBuf frame(ObjectNode event) {
    return Unpooled.copiedBuffer("data: " + event + "\n\n", StandardCharsets.UTF_8);
  }

  /** The same bytes as {@code frame(chunk(choice, text, null, null, null))}, without the tree. */
  private ByteBuf textEvent(ByteBufAllocator alloc, int choice, String text) {
    byte[] escaped = JsonStringEncoder.getInstance().quoteAsUTF8(text);
    ByteBuf b = alloc.buffer(eventHead.length + 11 + textHead.length + escaped.length
        + 1 + CHAT_TAIL.length);
    b.writeBytes(eventHead);
    b.writeCharSequence(Integer.toString(choice), StandardCharsets.US_ASCII);
    b.writeBytes(textHead);
    b.writeBytes(escaped);
    b.writeByte('"');
    b.writeBytes(chat ? CHAT_TAIL : TEXT_TAIL);
    return b;
  }
}
