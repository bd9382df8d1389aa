package dev.radixserve.server;

import static dev.radixserve.server.RawHttp.exchange;
import static dev.radixserve.server.RawHttp.get;
import static dev.radixserve.server.RawHttp.post;
import static dev.radixserve.server.RawHttp.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.config.ServerConfig;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * HTTP correctness over the real server with raw sockets: pipelining order, malformed requests,
 * Expect, body limits, HTTP/1.0 streams and read deadlines. Each refusal must be exactly one
 * response in OpenAI's error shape, never a silent close.
 */
class HttpFrontDoorTest {

  static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;
  private static final int MAX_BODY = 64 * 1024;
  private static RadixServer server;
  private static int port;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(64);
    b.maxRequestBodyBytes = MAX_BODY;
    b.headerTimeout = Duration.ofSeconds(2);
    b.bodyTimeout = Duration.ofSeconds(2);
    b.idleTimeout = Duration.ofSeconds(3);
    server = RadixServer.start(b.build());
    port = server.port();
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  static String completion(int maxTokens, String extra) {
    return "{\"model\":\"" + MODEL + "\",\"prompt\":\"Once upon a time\",\"max_tokens\":"
        + maxTokens + ",\"temperature\":0,\"ignore_eos\":true" + extra + "}";
  }

  /** One response in OpenAI's error shape with this status, then the end of the connection. */
  static void assertRefused(int status, List<Response> got) {
    assertEquals(1, got.size(), "exactly one response: " + got);
    assertError(status, got.getFirst());
  }

  static void assertError(int status, Response r) {
    assertEquals(status, r.status(), r.text());
    var error = r.json().get("error");
    for (String field : List.of("message", "type", "param", "code")) {
      assertTrue(error.has(field), field + " missing: " + r.text());
    }
    assertTrue(error.get("message").isTextual() && error.get("type").isTextual(), r.text());
  }

  @Test
  void pipelinedRequestsAreAnsweredInRequestOrder() {
    List<Response> got = exchange(port, RawHttp.concat(
        post("/v1/completions", completion(24, "")),
        get("/version"),
        post("/tokenize", "{\"prompt\":\"hello world\"}"),
        get("/v1/models", "Connection: close")));
    assertEquals(4, got.size(), got.toString());
    assertEquals(24, got.get(0).json().at("/usage/completion_tokens").asInt());
    assertEquals("0.1.0", got.get(1).json().get("version").asText());
    assertEquals(2, got.get(2).json().get("count").asInt());
    assertEquals(MODEL, got.get(3).json().at("/data/0/id").asText());
  }

  @Test
  void malformedRequestsGetOneClearErrorEach() {
    String big = "a".repeat(9000);
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 2000; i++) {
      many.append("X-").append(i).append(": v\n");
    }
    assertRefused(431, exchange(port, request("GET /health HTTP/1.1\nHost: x\nX-Big: " + big + "\n", "")));
    assertRefused(431, exchange(port, request("GET /health HTTP/1.1\nHost: x\n" + many, "")));
    assertRefused(431, exchange(port, request("GET /health HTTP/1.1\nHost: x\n" + "N".repeat(10_000) + ": v\n", "")));
    assertRefused(414, exchange(port, request("GET /" + "u".repeat(5000) + " HTTP/1.1\nHost: x\n", "")));
    assertRefused(400, exchange(port, request("GET /health HTTP/1.1\n", "")));        // no Host
    assertRefused(400, exchange(port, request("GET /health HTTP/1.1\nHost: a\nHost: b\n", "")));
    assertRefused(400, exchange(port, request("GET /health HTTP/1.1\nHost: x\nX: a\0b\n", "")));
    assertRefused(400, exchange(port, request("GET /health HTTP/1.1\nHost: x\nX: a\rb\n", "")));
    assertRefused(400, exchange(port, request("GET /%ZZ HTTP/1.1\nHost: x\n", "")));
    assertRefused(400, exchange(port, request("GET /health HTTP/1.1\nHost: x\n"
        + "Transfer-Encoding: chunked\n", "zz\r\n")));
    assertRefused(404, exchange(port, get("/nowhere", "Connection: close")));
    // absolute form and HTTP/1.0 without Host are valid
    assertEquals(200, exchange(port, request("GET http://x/health HTTP/1.1\nHost: x\n"
        + "Connection: close\n", "")).getFirst().status());
    Response old = exchange(port, request("GET /version HTTP/1.0\n", "")).getFirst();
    assertEquals("HTTP/1.0", old.version());
    assertEquals(200, old.status());
  }

  @Test
  void expectationsAndBodyLimitsAnswerWithBodies() throws Exception {
    String head = "POST /tokenize HTTP/1.1\nHost: x\nContent-Type: application/json\n";
    assertRefused(413, exchange(port, request(head + "Expect: 100-continue\nContent-Length: "
        + (MAX_BODY + 1) + "\nConnection: close\n", "")));
    List<Response> expectThenNext = exchange(port, RawHttp.concat(request(head
        + "Expect: 100-continue\nContent-Length: " + (MAX_BODY + 1) + "\n", ""),
        get("/version", "Connection: close")));
    assertEquals(2, expectThenNext.size(), expectThenNext.toString()); // no body was sent
    assertError(413, expectThenNext.get(0));
    assertEquals(200, expectThenNext.get(1).status());
    assertRefused(417, exchange(port, request(head + "Expect: foo\nContent-Length: 2\n", "{}")));
    assertRefused(413, exchange(port, request(head + "Transfer-Encoding: chunked\n",
        Integer.toHexString(MAX_BODY + 10) + "\r\n" + "x".repeat(MAX_BODY + 10) + "\r\n0\r\n\r\n")));

    // a keep-alive body over the limit is read and dropped; the next request is served
    List<Response> both = exchange(port, RawHttp.concat(
        post("/tokenize", "\"" + "x".repeat(MAX_BODY) + "\""),
        get("/version", "Connection: close")));
    assertEquals(2, both.size(), both.toString());
    assertError(413, both.get(0));
    assertEquals(200, both.get(1).status());

    // 100-continue within the limit: 100, then the body, then the answer
    String body = "{\"prompt\":\"hi\"}";
    try (Socket s = new Socket("127.0.0.1", port)) {
      OutputStream out = s.getOutputStream();
      InputStream in = s.getInputStream();
      s.setSoTimeout(RawHttp.STALL_MS);
      out.write(request(head + "Expect: 100-continue\nConnection: close\nContent-Length: "
          + body.length() + "\n", ""));
      out.flush();
      assertEquals(100, RawHttp.read(in).status());
      out.write(body.getBytes(StandardCharsets.UTF_8));
      out.flush();
      Response r = RawHttp.read(in);
      assertEquals(200, r.status(), r.text());
      assertEquals(1, r.json().get("count").asInt());
    }
  }

  @Test
  void anHttp10StreamIsUnframedWithA10StatusLineAndEndsWithTheConnection() {
    String body = completion(5, ",\"stream\":true");
    List<Response> got = exchange(port, RawHttp.concat(("POST /v1/completions HTTP/1.0\r\n"
        + "Content-Length: " + body.length() + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1),
        body.getBytes(StandardCharsets.UTF_8)));
    assertEquals(1, got.size());
    Response r = got.getFirst();
    assertEquals("HTTP/1.0", r.version());
    assertEquals(200, r.status());
    assertNull(r.header("transfer-encoding"));
    assertTrue(r.text().startsWith("data: {"), r.text());
    assertTrue(r.text().endsWith("data: [DONE]\n\n"), r.text());
  }

  @Test
  void slowHeadsAndBodiesGet408AndIdleConnectionsClose() throws Exception {
    assertRefused(408, exchangeStalled("GET /health HTTP/1.1\r\nHost: x\r\n"));
    assertRefused(408, exchangeStalled("POST /tokenize HTTP/1.1\r\nHost: x\r\n"
        + "Content-Length: 100\r\n\r\n{\"prompt\""));
    try (Socket idle = new Socket("127.0.0.1", port)) {
      idle.setSoTimeout(RawHttp.STALL_MS);
      assertEquals(-1, idle.getInputStream().read(), "closed without a response");
    }
  }

  /** Sends a request start and nothing more; returns what the server answers. */
  private static List<Response> exchangeStalled(String start) throws Exception {
    try (Socket s = new Socket("127.0.0.1", port)) {
      s.setSoTimeout(RawHttp.STALL_MS);
      s.getOutputStream().write(start.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      return RawHttp.readAll(s.getInputStream());
    }
  }
}
