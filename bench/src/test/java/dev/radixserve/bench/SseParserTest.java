package dev.radixserve.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SseParserTest {

  static final String STREAM = """
      data: {"id":"c","object":"text_completion","choices":[{"index":0,"text":"Hé","finish_reason":null}]}

      : keep-alive

      data: {"id":"c","choices":[{"index":0,"text":"","finish_reason":null}]}

      data: {"id":"c","choices":[{"index":0,"text":" là","finish_reason":"length"}]}

      data: {"id":"c","choices":[],"usage":{"prompt_tokens":40,"completion_tokens":3,"total_tokens":43,"prompt_tokens_details":{"cached_tokens":32}}}

      data: [DONE]

      """;

  private static List<String> feedInPieces(byte[] bytes, int piece) {
    SseParser parser = new SseParser();
    List<String> events = new ArrayList<>();
    for (int at = 0; at < bytes.length; at += piece) {
      events.addAll(parser.feed(bytes, at, Math.min(piece, bytes.length - at)));
    }
    events.addAll(parser.finish());
    return events;
  }

  @Test
  void sameEventsWhateverTheSplit() {
    byte[] bytes = STREAM.getBytes(StandardCharsets.UTF_8);
    List<String> whole = feedInPieces(bytes, bytes.length);
    assertEquals(5, whole.size());
    assertEquals("[DONE]", whole.get(4));
    assertTrue(whole.get(0).contains("\"Hé\""));
    for (int piece = 1; piece < 40; piece++) {
      assertEquals(whole, feedInPieces(bytes, piece), "split every " + piece + " bytes");
    }
  }

  @Test
  void crlfMultiLineDataAndUnterminatedLastEvent() {
    byte[] bytes = "event: x\r\ndata: a\r\ndata:b\r\n\r\ndata: tail".getBytes(StandardCharsets.UTF_8);
    assertEquals(List.of("a\nb", "tail"), feedInPieces(bytes, 3));
  }

  private static StreamAccumulator accumulate(String stream, int piece) throws Exception {
    StreamAccumulator acc = new StreamAccumulator(0);
    InputStream in = new ByteArrayInputStream(stream.getBytes(StandardCharsets.UTF_8)) {
      @Override
      public synchronized int read(byte[] b, int off, int len) {
        return super.read(b, off, Math.min(len, piece));
      }
    };
    CompletionClient.readStream(in, acc);
    return acc;
  }

  @Test
  void accumulatesContentChunksAndUsage() throws Exception {
    StreamAccumulator acc = accumulate(STREAM, 7);
    assertTrue(acc.done());
    RequestRecord r = acc.toRecord(new BenchRequest(0, 0, 0, new int[40]), 0, 0, 1_000_000);
    assertTrue(r.success(), r.error());
    assertNull(r.error());
    assertEquals(3, r.contentChunks()); // the empty-text chunk counts, the usage chunk does not
    assertEquals(2, r.itlMs().size());
    assertEquals(3, r.outputTokens());
    assertEquals(40, r.usagePromptTokens());
    assertEquals(32, r.cachedTokens());
    assertTrue(r.cachedTokensReported());
    assertEquals(1.0, r.e2eMs(), 1e-12);
  }

  @Test
  void errorsAndTruncatedStreamsFail() throws Exception {
    RequestRecord error = accumulate(
        "data: {\"error\":{\"message\":\"prompt too long\",\"type\":\"invalid_request_error\"}}\n\n",
        100).toRecord(new BenchRequest(0, 0, 0, new int[4]), 0, 0, 0);
    assertFalse(error.success());
    assertEquals("prompt too long", error.error());
    assertNull(error.ttftMs());

    String noDone = STREAM.substring(0, STREAM.indexOf("data: [DONE]"));
    RequestRecord truncated = accumulate(noDone, 100)
        .toRecord(new BenchRequest(0, 0, 0, new int[4]), 0, 0, 0);
    assertFalse(truncated.success());
    assertEquals("stream ended without data: [DONE]", truncated.error());
  }

  @Test
  void requestBodyCarriesTokenIdsAndStreamingOptions() {
    assertEquals("{\"model\":\"m\",\"prompt\":[5,6,7],\"max_tokens\":4,\"temperature\":0,"
        + "\"stream\":true,\"stream_options\":{\"include_usage\":true},\"ignore_eos\":true}",
        CompletionClient.requestBody("m", new int[] {5, 6, 7}, 4));
  }
}
