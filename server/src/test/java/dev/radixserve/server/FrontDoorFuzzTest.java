package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.api.RequestFields;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A fuzz run over every endpoint of the real server with a fixed seed: hostile bodies, values,
 * methods, paths, headers, framings and pipelines. The contract for each request: at least one
 * response (never a silent close), no 5xx, no stall ({@link RawHttp#STALL_MS}), and every 4xx in
 * OpenAI's error shape. Afterwards the engine holds no block and a good request is served.
 */
class FrontDoorFuzzTest {

  private static final long SEED = 20261122L;
  private static final int REQUESTS = 300;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;
  private static final String KEY = "Authorization: Bearer fuzz";
  private static final List<String> PATHS = List.of("/v1/completions", "/v1/chat/completions",
      "/v1/models", "/v1/models/" + MODEL, "/v1/models/nope", "/tokenize", "/detokenize",
      "/version", "/metrics", "/health", "/reset_prefix_cache", "/", "/v1", "/v1/completions/",
      "/%ZZ", "/%00", "/v1/models/%E2%82", "*", "http://h/health", "/a?b=%");
  private static final List<String> METHODS = List.of("GET", "POST", "POST", "POST", "PUT",
      "DELETE", "HEAD", "OPTIONS", "PATCH", "BREW");
  private static final List<String> VALUES = List.of("0", "1", "-1", "2", "4", "1.5", "-0",
      "1e400", "-1e400", "18446744073709551616", "4294967301", "50256", "50257", "true", "false",
      "null", "\"\"", "\"x\"", "\"\\ud800\"", "\"\\u0000\"", "[]", "[1]", "[[]]", "[\"a\",1]",
      "{}", "{\"include_usage\":true}", "[-5]", "\"日本\"", "[\"a\",\"b\",\"c\",\"d\",\"e\"]");
  private static final List<String> FIELDS = List.of("prompt", "messages", "model", "n",
      "max_tokens", "max_completion_tokens", "temperature", "top_p", "top_k", "min_p", "seed",
      "stop", "stop_token_ids", "logprobs", "top_logprobs", "echo", "stream", "stream_options",
      "ignore_eos", "cache_salt", "user", "presence_penalty", "frequency_penalty",
      "repetition_penalty", "tokens", "bogus");

  private static RadixServer server;
  private static int port;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(64);
    b.apiKey = "fuzz";
    b.maxNumSeqs = 8;
    b.maxChoicesPerRequest = 16;
    b.maxRequestBodyBytes = 256 * 1024;
    b.headerTimeout = Duration.ofSeconds(1);
    b.bodyTimeout = Duration.ofSeconds(1);
    server = RadixServer.start(b.build());
    port = server.port();
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  @Test
  void noHostileRequestGetsA5xxAStallASilentCloseOrAnErrorOutsideOpenAisShape() throws Exception {
    Random r = new Random(SEED);
    int statuses4xx = 0;
    int statuses2xx = 0;
    for (int i = 0; i < REQUESTS; i++) {
      String method = r.nextInt(3) == 0 ? pick(r, METHODS) : "POST";
      byte[] request = request(r, method);
      String label = "request " + i + ": " + preview(request);
      List<Response> got = RawHttp.exchange(port, request, method.equals("HEAD"));
      assertFalse(got.isEmpty(), "closed without a reply: " + label);
      for (Response resp : got) {
        assertTrue(resp.status() < 500, resp.status() + " " + resp.text() + " for " + label);
        if (resp.status() >= 400 && !method.equals("HEAD")) {
          statuses4xx++;
          JsonNode error = resp.json().get("error");
          assertTrue(error != null && error.get("message").isTextual()
              && error.get("type").isTextual() && error.has("param")
              && error.get("code").isTextual(), resp.text() + " for " + label);
        } else if (resp.status() == 200 && "text/event-stream".equals(resp.header("content-type"))) {
          statuses2xx++;
          assertTrue(resp.text().endsWith("data: [DONE]\n\n"), resp.text() + " for " + label);
        } else if (resp.status() == 200) {
          statuses2xx++;
        }
      }
    }
    assertTrue(statuses2xx > 15 && statuses4xx > 100, statuses2xx + " / " + statuses4xx);
    EngineSnapshot s = server.inspect();
    assertNull(s.integrityError());
    assertTrue(s.quiescent(), s.toString());
    Response good = RawHttp.exchange(port, RawHttp.post("/v1/completions", "{\"model\":\"" + MODEL
        + "\",\"prompt\":\"still fine\",\"max_tokens\":3}", KEY, "Connection: close")).getFirst();
    assertEquals(3, good.json().at("/usage/completion_tokens").asInt(), good.text());
  }

  /**
   * A good request plus one refused field of {@link RequestFields} with a random value: 400
   * naming that field unless the value is null or the field's neutral value (then 200).
   */
  @Test
  void refusedFieldsWithAnyValueAre400NamingThemOr200WhenNeutral() throws Exception {
    Random r = new Random(SEED + 1);
    int refused = 0;
    for (int i = 0; i < 120; i++) {
      boolean chat = r.nextBoolean();
      List<RequestFields.Field> fields = RequestFields.of(chat).values().stream()
          .filter(f -> f.handling() == RequestFields.Handling.REFUSED).toList();
      RequestFields.Field field = pick(r, fields);
      String value = pick(r, VALUES);
      String body = "{\"model\":\"" + MODEL + "\",\"max_tokens\":1," + (chat
          ? "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
          : "\"prompt\":\"hi\"") + ",\"" + field.name() + "\":" + value + "}";
      Response resp = RawHttp.exchange(port, RawHttp.post(chat ? "/v1/chat/completions"
          : "/v1/completions", body, KEY, "Connection: close")).getFirst();
      JsonNode v = JSON.readTree(value);
      boolean neutral = v.isNull() || field.neutral().test(v, JSON.readTree(body));
      if (neutral) {
        assertEquals(200, resp.status(), body + " -> " + resp.text());
      } else {
        refused++;
        assertEquals(400, resp.status(), body + " -> " + resp.text());
        assertEquals(field.name(), resp.json().at("/error/param").asText(null), resp.text());
      }
    }
    assertTrue(refused > 80, "refused " + refused);
  }

  private static byte[] request(Random r, String method) {
    String path = r.nextInt(4) == 0 ? pick(r, PATHS) : pick(r, PATHS.subList(0, 2));
    byte[] body = body(r, path);
    int framing = r.nextInt(20);
    StringBuilder head = new StringBuilder(method + " " + path
        + (framing == 0 ? " HTTP/1.0" : " HTTP/1.1") + "\r\n");
    if (framing != 1) {
      head.append("Host: localhost\r\n");
    }
    if (r.nextInt(10) != 0) {
      head.append(r.nextInt(8) == 0 ? "Authorization: bEaReR fuzz" : KEY).append("\r\n");
    }
    switch (framing) {
      case 2 -> head.append("Expect: 100-continue\r\n");
      case 3 -> head.append("Expect: something-else\r\n");
      case 4 -> head.append("X-Bad: a\u0000b\r\n");
      case 5 -> head.append("X-Big: ").append("v".repeat(9000)).append("\r\n");
      case 6 -> head.append("Content-Type: text/plain; charset=latin1\r\n");
      default -> { }
    }
    if (framing != 0) {
      head.append("Connection: close\r\n");
    }
    byte[] start;
    if (framing == 7) { // chunked, sometimes broken
      String size = r.nextBoolean() ? Integer.toHexString(body.length) : "zz";
      start = (head + "Transfer-Encoding: chunked\r\n\r\n" + size + "\r\n")
          .getBytes(StandardCharsets.ISO_8859_1);
      return RawHttp.concat(start, body, "\r\n0\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
    }
    int length = framing == 8 ? body.length + 1 + r.nextInt(3) : framing == 9
        ? Math.max(0, body.length - 5) : body.length;
    start = (head + "Content-Length: " + length + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    byte[] whole = RawHttp.concat(start, body);
    if (framing == 10) { // a pipelined second request
      return RawHttp.concat(whole, RawHttp.get("/version", "Connection: close"));
    }
    return whole;
  }

  private static byte[] body(Random r, String path) {
    String json = path.contains("chat") ? chat(r) : path.contains("tokenize")
        ? "{\"prompt\":" + pick(r, VALUES) + ",\"tokens\":" + pick(r, VALUES) + "}" : completion(r);
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    return switch (r.nextInt(12)) {
      case 0 -> RawHttp.concat(b, " trailing".getBytes(StandardCharsets.UTF_8));
      case 1 -> java.util.Arrays.copyOf(b, r.nextInt(b.length + 1)); // truncated JSON
      case 2 -> RawHttp.concat(b, new byte[] {(byte) 0xc0, (byte) 0x80});
      case 3 -> { // a bad UTF-8 sequence inside a string
        byte[] bad = {(byte) 0xed, (byte) 0xa0, (byte) 0x80};
        int at = Math.max(0, json.indexOf("\"", json.indexOf(":") + 1) + 1);
        yield RawHttp.concat(java.util.Arrays.copyOf(b, at), bad,
            java.util.Arrays.copyOfRange(b, at, b.length));
      }
      case 4 -> randomBytes(r, 1 + r.nextInt(200));
      default -> b;
    };
  }

  private static String completion(Random r) {
    StringBuilder b = new StringBuilder("{");
    if (r.nextInt(8) != 0) {
      b.append("\"model\":\"").append(r.nextInt(10) == 0 ? "other" : MODEL).append("\",");
    }
    b.append("\"prompt\":").append(switch (r.nextInt(6)) {
      case 0 -> pick(r, VALUES);
      case 1 -> "[" + (1 + r.nextInt(100)) + "," + r.nextInt(50_300) + "]";
      case 2 -> "[\"a\",\"bb\",[1,2,3]]";
      case 3 -> "\"" + "many words ".repeat(r.nextInt(200)) + "\"";
      default -> "\"Once upon a time\"";
    });
    b.append(",\"max_tokens\":").append(r.nextInt(6) == 0 ? pick(r, VALUES) : 1 + r.nextInt(4));
    for (int k = r.nextInt(4); k > 0; k--) {
      b.append(",\"").append(pick(r, FIELDS)).append("\":").append(pick(r, VALUES));
    }
    return b.append("}").toString();
  }

  private static String chat(Random r) {
    String messages = switch (r.nextInt(5)) {
      case 0 -> pick(r, VALUES);
      case 1 -> "[{\"role\":\"wizard\",\"content\":\"x\"}]";
      case 2 -> "[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}]";
      default -> "[{\"role\":\"user\",\"content\":" + (r.nextInt(4) == 0 ? pick(r, VALUES)
          : "\"hello\"") + "}]";
    };
    StringBuilder b = new StringBuilder("{\"model\":\"" + MODEL + "\",\"messages\":" + messages
        + ",\"max_tokens\":" + (1 + r.nextInt(4)));
    for (int k = r.nextInt(3); k > 0; k--) {
      b.append(",\"").append(pick(r, FIELDS)).append("\":").append(pick(r, VALUES));
    }
    return b.append("}").toString();
  }

  private static byte[] randomBytes(Random r, int n) {
    byte[] b = new byte[n];
    r.nextBytes(b);
    return b;
  }

  private static <T> T pick(Random r, List<T> list) {
    return list.get(r.nextInt(list.size()));
  }

  private static String preview(byte[] request) {
    String s = new String(request, StandardCharsets.ISO_8859_1);
    return s.length() > 400 ? s.substring(0, 400) + "…" : s;
  }
}
