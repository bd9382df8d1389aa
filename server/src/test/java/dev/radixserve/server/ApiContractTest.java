package dev.radixserve.server;

import static dev.radixserve.server.HttpFrontDoorTest.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.config.ServerConfig;
import dev.radixserve.server.engine.EngineSnapshot;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The API contract at the edges, one finding of issue 11 per test, over the real server: limits
 * refused at validation with 400 naming the limit, strict JSON and UTF-8, token id ranges,
 * model, authentication, cache salts and stop strings.
 */
class ApiContractTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;
  private static final String KEY = "Authorization: Bearer sekret";
  private static RadixServer server;
  private static int port;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(48); // 768 tokens: less than the model length
    b.apiKey = "sekret";
    b.maxNumSeqs = 4;
    b.maxChoicesPerRequest = 8;
    b.maxQueuedRequests = 4;
    b.maxStopLength = 16;
    server = RadixServer.start(b.build());
    port = server.port();
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static Response post(String path, String body, String... headers) {
    List<String> h = new ArrayList<>(List.of(headers));
    h.add("Connection: close");
    return RawHttp.exchange(port, RawHttp.post(path, body, h.toArray(String[]::new))).getFirst();
  }

  private static Response complete(String fields) {
    return post("/v1/completions", "{\"model\":\"" + MODEL + "\"," + fields + "}", KEY);
  }

  private static void assertBadRequest(Response r, String param, String mentions) {
    assertError(400, r);
    assertEquals(param, r.json().at("/error/param").asText(null), r.text());
    assertTrue(r.json().at("/error/message").asText().contains(mentions), r.text());
  }

  private static void assertQuiescent() {
    EngineSnapshot s = server.inspect();
    assertNull(s.integrityError());
    assertTrue(s.quiescent(), s.toString());
  }

  @Test
  void priorityIsAnIntegerAndAnythingElseIs400() {
    for (String bad : new String[] {"\"high\"", "1.5", "true", "2147483648", "-2147483649",
        "[1]"}) {
      assertBadRequest(complete("\"prompt\":\"x\",\"max_tokens\":1,\"priority\":" + bad),
          "priority", "integer");
    }
    for (String ok : new String[] {"-5", "0", "2147483647", "null"}) {
      Response r = complete("\"prompt\":\"x\",\"max_tokens\":1,\"priority\":" + ok);
      assertEquals(200, r.status(), ok + ": " + r.text());
    }
    assertQuiescent();
  }

  @Test
  void requestsThatCouldNeverBeServedAreRefusedAtValidationNamingTheLimit() {
    assertBadRequest(complete("\"prompt\":\"x\",\"n\":5"), "n", "max-num-seqs");
    assertBadRequest(complete("\"prompt\":\"x\",\"max_tokens\":800"), "max_tokens", "pool");
    assertBadRequest(complete("\"prompt\":[\"a\",\"b\",\"c\"],\"n\":3"), "prompt",
        "max-choices-per-request");
    assertBadRequest(complete("\"prompt\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"), "prompt",
        "max-queued-requests");
    assertBadRequest(complete("\"prompt\":\"x\",\"max_tokens\":1024"), "max_tokens",
        "maximum context length");
    // the engine was never asked: nothing waits, and a good request is served
    assertEquals(200, complete("\"prompt\":\"x\",\"max_tokens\":2,\"n\":4").status());
    assertQuiescent();
  }

  @Test
  void aBigBodyIsRefusedByItsCountsBeforeAnythingIsTokenized() {
    // 0.5 MB: 100,000 one-character prompts × n = 4; refused by counting array elements
    String prompts = String.join(",", Collections.nCopies(100_000, "\"a\""));
    Response r = complete("\"prompt\":[" + prompts + "],\"n\":4");
    assertBadRequest(r, "prompt", "400000 choices");
    String ids = String.join(",", Collections.nCopies(100_000, "1"));
    assertBadRequest(complete("\"prompt\":[" + ids + "]"), "prompt", "maximum context length");
    String text = "word ".repeat(400_000);
    assertBadRequest(complete("\"prompt\":\"" + text + "\""), "prompt", "more than 1023 tokens");
    assertBadRequest(post("/tokenize", "{\"prompt\":\"" + text + "\"}", KEY), "prompt",
        "max_model_len");
  }

  @Test
  void stopStringsAreBoundedAndMatchedAcrossTokensWhileStreaming() throws Exception {
    assertBadRequest(complete("\"prompt\":\"x\",\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"]"), "stop",
        "up to 4");
    assertBadRequest(complete("\"prompt\":\"x\",\"stop\":\"" + "s".repeat(17) + "\""), "stop",
        "max-stop-length");
    String base = "\"prompt\":\"The quick brown fox\",\"max_tokens\":16,\"temperature\":0,"
        + "\"ignore_eos\":true";
    JsonNode plain = complete(base).json();
    String text = plain.at("/choices/0/text").asText();
    String stop = text.substring(text.length() / 2, text.length() / 2 + 3);
    int cut = text.indexOf(stop);
    Response streamed = complete(base + ",\"stream\":true,\"stream_options\":{\"include_usage\":"
        + "true},\"stop\":[\"zzzzzz\"," + JSON.writeValueAsString(stop) + "]");
    assertEquals(200, streamed.status());
    StringBuilder got = new StringBuilder();
    String finish = null;
    int completionTokens = -1;
    for (String event : streamed.text().split("\n\n")) {
      String data = event.substring("data: ".length());
      if (data.equals("[DONE]")) {
        continue;
      }
      JsonNode e = JSON.readTree(data);
      if (e.has("usage")) {
        completionTokens = e.at("/usage/completion_tokens").asInt();
      } else {
        got.append(e.at("/choices/0/text").asText());
        finish = e.at("/choices/0/finish_reason").isNull() ? finish
            : e.at("/choices/0/finish_reason").asText();
      }
    }
    assertEquals(text.substring(0, cut), got.toString());
    assertEquals("stop", finish);
    assertTrue(completionTokens > 0 && completionTokens < 16, "tokens " + completionTokens);
    assertQuiescent();
  }

  @Test
  void onlyOneJsonValueInStrictUtf8IsAccepted() {
    String ok = "{\"model\":\"" + MODEL + "\",\"prompt\":\"x\",\"max_tokens\":1}";
    for (String trailing : List.of(" trailing", "{}", "\u0000", "]")) {
      assertError(400, post("/v1/completions", ok + trailing, KEY));
    }
    assertEquals(200, post("/v1/completions", ok + " \n\t", KEY).status());
    for (byte[] bad : List.of(new byte[] {(byte) 0xc0, (byte) 0x80},
        new byte[] {(byte) 0xed, (byte) 0xa0, (byte) 0x80},
        new byte[] {(byte) 0xf4, (byte) 0x90, (byte) 0x80, (byte) 0x80})) {
      byte[] body = RawHttp.concat(("{\"model\":\"" + MODEL + "\",\"prompt\":\"")
          .getBytes(StandardCharsets.UTF_8), bad, "\"}".getBytes(StandardCharsets.UTF_8));
      byte[] req = RawHttp.concat(("POST /v1/completions HTTP/1.1\r\nHost: x\r\n" + KEY
          + "\r\nConnection: close\r\nContent-Length: " + body.length + "\r\n\r\n")
          .getBytes(StandardCharsets.ISO_8859_1), body);
      Response r = RawHttp.exchange(port, req).getFirst();
      assertError(400, r);
      assertTrue(r.text().contains("UTF-8"), r.text());
    }
    assertBadRequest(complete("\"prompt\":\"\\ud800x\""), "prompt", "surrogate");
  }

  @Test
  void tokenIdsOutOfRangeAreRefusedNotTruncated() {
    for (String id : List.of("18446744073709551616", "4294967301", "-1", "50257", "1.5")) {
      assertBadRequest(complete("\"prompt\":[" + id + "]"), "prompt", "token ids");
      assertBadRequest(post("/detokenize", "{\"tokens\":[" + id + "]}", KEY), "tokens",
          "token ids");
    }
    assertEquals("&", post("/detokenize", "{\"tokens\":[5]}", KEY).json().get("prompt").asText());
  }

  @Test
  void modelIsRequiredAndEachModelHasItsOwnRoute() {
    Response missing = post("/v1/completions", "{\"prompt\":\"x\"}", KEY);
    assertBadRequest(missing, "model", "model is required");
    assertEquals(404, post("/v1/chat/completions", "{\"model\":\"gpt-9\",\"messages\":"
        + "[{\"role\":\"user\",\"content\":\"x\"}]}", KEY).status());
    Response one = RawHttp.exchange(port, RawHttp.get("/v1/models/" + MODEL, KEY,
        "Connection: close")).getFirst();
    assertEquals(200, one.status());
    assertEquals(MODEL, one.json().get("id").asText());
    assertEquals("model", one.json().get("object").asText());
    Response none = RawHttp.exchange(port, RawHttp.get("/v1/models/gpt-9", KEY,
        "Connection: close")).getFirst();
    assertError(404, none);
    assertEquals("model_not_found", none.json().at("/error/code").asText());
  }

  @Test
  void theBearerSchemeIsCaseInsensitiveAndProbesAreOpen() {
    for (String auth : List.of("Authorization: bearer sekret", "Authorization: BEARER   sekret")) {
      assertEquals(200, RawHttp.exchange(port, RawHttp.get("/v1/models", auth,
          "Connection: close")).getFirst().status(), auth);
    }
    for (String auth : List.of("Authorization: Bearer sekre", "Authorization: Bearer sekret2",
        "Authorization: Basic sekret", "Authorization: Bearersekret", "X-None: 1")) {
      Response r = RawHttp.exchange(port, RawHttp.get("/v1/models", auth, "Connection: close"))
          .getFirst();
      assertError(401, r);
      assertEquals("Bearer", r.header("www-authenticate"));
    }
    for (String open : List.of("/health", "/metrics", "/version")) {
      assertEquals(200, RawHttp.exchange(port, RawHttp.get(open, "Connection: close"))
          .getFirst().status(), open);
    }
    assertError(401, post("/tokenize", "{\"prompt\":\"x\"}"));
  }

  @Test
  void anEmptyCacheSaltIsANamespaceOfItsOwn() {
    String prompt = "\"prompt\":\"" + "The radix tree shares every prefix. ".repeat(8)
        + "\",\"max_tokens\":1";
    complete(prompt);
    assertTrue(cached(complete(prompt)) > 0, "unsalted requests share the default namespace");
    assertEquals(0, cached(complete(prompt + ",\"cache_salt\":\"\"")), "\"\" is not unsalted");
    assertTrue(cached(complete(prompt + ",\"cache_salt\":\"\"")) > 0);
    assertEquals(0, cached(complete(prompt + ",\"cache_salt\":\"other\"")));
    assertFalse(server.inspect().cachedBlocks() == 0);
  }

  private static int cached(Response r) {
    assertEquals(200, r.status(), r.text());
    return r.json().at("/usage/prompt_tokens_details/cached_tokens").asInt();
  }
}
