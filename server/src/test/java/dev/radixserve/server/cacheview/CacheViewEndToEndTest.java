package dev.radixserve.server.cacheview;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.LocalServers;
import dev.radixserve.server.RadixServer;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The cache view's HTTP routes on a real server with an API key: auth, errors, tree, stream. */
class CacheViewEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String KEY = "view-key";
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static RadixServer server;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(128);
    b.apiKey = KEY;
    server = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static HttpRequest.Builder request(String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .timeout(Duration.ofSeconds(30));
  }

  private static HttpResponse<String> send(HttpRequest.Builder r) throws Exception {
    return CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return send(request(path).header("Authorization", "Bearer " + KEY));
  }

  private static void assertError(HttpResponse<String> r, int status, String param)
      throws Exception {
    assertEquals(status, r.statusCode(), r.body());
    JsonNode e = JSON.readTree(r.body()).get("error");
    assertTrue(e.get("message").asText().length() > 5, r.body());
    assertEquals(param, e.get("param").isNull() ? null : e.get("param").asText(), r.body());
  }

  private static String completion(String prompt) throws Exception {
    HttpResponse<String> r = send(request("/v1/completions")
        .header("Authorization", "Bearer " + KEY).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"" + ServerConfig.EMBEDDED_MODEL_NAME
            + "\",\"prompt\":" + JSON.writeValueAsString(prompt)
            + ",\"max_tokens\":2,\"temperature\":0}")));
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body()).get("id").asText();
  }

  @Test
  void theKeyGuardsEveryRouteAndTheLoginCookieOpensOnlyTheView() throws Exception {
    assertError(send(request("/cache/tree")), 401, null);
    assertError(send(request("/cache/events")), 401, null);
    HttpResponse<String> page = send(request("/cache").header("Accept", "text/html"));
    assertEquals(401, page.statusCode());
    assertTrue(page.body().contains("<form id=\"login\""), page.body());
    assertEquals(200, get("/cache").statusCode());
    assertTrue(get("/cache").body().contains("<svg id=\"tree\""));
    assertTrue(get("/cache/view.js").headers().firstValue("Content-Security-Policy").orElseThrow()
        .contains("script-src 'self'"));

    HttpRequest.Builder login = request("/cache/login")
        .header("Content-Type", "application/x-www-form-urlencoded");
    assertEquals(401, send(login.copy().POST(HttpRequest.BodyPublishers.ofString("key=nope")))
        .statusCode());
    HttpResponse<String> ok = send(login.copy().POST(
        HttpRequest.BodyPublishers.ofString("key=" + KEY)));
    assertEquals(303, ok.statusCode());
    String cookie = ok.headers().firstValue("Set-Cookie").orElseThrow();
    assertTrue(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict")
        && cookie.contains("Path=/cache") && !cookie.contains(KEY), cookie);
    String pair = cookie.substring(0, cookie.indexOf(';'));
    assertEquals(200, send(request("/cache/tree").header("Cookie", pair)).statusCode());
    assertError(send(request("/v1/models").header("Cookie", pair)), 401, null);
  }

  @Test
  void badRequestsGetTheirStatusInOpenAisShape() throws Exception {
    assertError(get("/cache/tree?max_nodes=0"), 400, "max_nodes");
    assertError(get("/cache/tree?depth=-1"), 400, "depth");
    assertError(get("/cache/tree?expand=1,x"), 400, "expand");
    assertError(get("/cache/tree?colour=red"), 400, "colour");
    assertError(get("/cache/tree?node=123456789"), 404, "node");
    assertError(get("/cache/nothing"), 404, null);
    assertError(send(request("/cache/tree").header("Authorization", "Bearer " + KEY)
        .POST(HttpRequest.BodyPublishers.noBody())), 405, null);
    assertError(send(request("/cache/login").GET()), 405, null);
    assertEquals(200, get("/health").statusCode());
  }

  @Test
  void treeAndStreamFollowRequestsThatShareAPrefix() throws Exception {
    HttpResponse<Stream<String>> events = CLIENT.send(request("/cache/events")
        .header("Authorization", "Bearer " + KEY).build(), HttpResponse.BodyHandlers.ofLines());
    assertEquals(200, events.statusCode());
    assertEquals("text/event-stream; charset=utf-8",
        events.headers().firstValue("Content-Type").orElseThrow());
    try (Stream<String> lines = events.body()) {
      Iterator<String> it = lines.iterator();
      assertEquals("event: hello", it.next());
      JsonNode hello = JSON.readTree(it.next().substring("data: ".length()));
      assertEquals(16, hello.get("block_size").asInt());
      assertEquals(128, hello.at("/pool/total").asInt());

      String system = "The following is a conversation with an assistant that knows a great"
          + " deal about lighthouses, tides, ships and the sea. Question: ";
      completion(system + "how tall is the tallest lighthouse?");
      String id = completion(system + "why is the sea salty?");

      // the stream: the second request's admission match, then a diff holding the new nodes
      JsonNode match = null;
      boolean stored = false;
      boolean diffWithNodes = false;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while ((match == null || !stored || !diffWithNodes) && System.nanoTime() < deadline) {
        String event = it.next();
        if (!event.startsWith("event: ")) {
          continue;
        }
        JsonNode data = JSON.readTree(it.next().substring("data: ".length()));
        if (event.equals("event: cache")) {
          for (JsonNode e : data.get("events")) {
            stored |= e.get("type").asText().equals("stored");
            if (e.get("type").asText().equals("match")
                && e.get("request").asText().equals(id + "-0")) {
              match = e;
            }
          }
        } else if (event.equals("event: diff")) {
          diffWithNodes |= data.has("upserts") && data.get("upserts").size() > 0;
        }
      }
      assertTrue(stored && diffWithNodes && match != null, "stream missed events");
      // token-granular: the match runs to the 27th token, where the questions part, inside the
      // prompts' second block: one whole shared block, then 11 slots copied from the first
      // request's second block (the node the match ends at)
      int matched = match.get("matched_tokens").asInt();
      assertEquals(27, matched, match.toString());

      // the tree (a snapshot up to a tick old: asked again until the second request's finish
      // shows): a shared one-block node with two children, one per question's second block;
      // under each, the partial prompt tail and the finished prompt + output (partial leaves)
      JsonNode tree = JSON.readTree(get("/cache/tree?request=" + id).body());
      while (tree.at("/totals/locked").asInt() > 0 && System.nanoTime() < deadline) {
        Thread.sleep(100);
        tree = JSON.readTree(get("/cache/tree?request=" + id).body());
      }
      assertEquals(7, tree.at("/totals/nodes").asInt(), tree.toString());
      assertEquals(0, tree.at("/totals/locked").asInt());
      JsonNode req = tree.at("/request/matches/0");
      assertEquals(matched, req.get("matched_tokens").asInt());
      assertEquals(3, req.get("path").size(), req.toString()); // root, shared node, copy source
      long sharedId = req.get("path").get(1).asLong();
      JsonNode shared = null;
      JsonNode end = null;
      for (JsonNode n : tree.get("nodes")) {
        if (n.get("id").asLong() == sharedId) {
          shared = n;
        }
        if (n.get("id").asLong() == req.get("node").asLong()) {
          end = n;
        }
      }
      assertEquals(16, shared.get("tokens").asInt());
      assertEquals(2, shared.get("children").asInt());
      assertEquals(1, shared.get("blocks").asInt());
      assertTrue(shared.get("text").asText().startsWith("The following is a conversation"));
      assertEquals(sharedId, end.get("parent").asLong());
      assertEquals(16, end.get("tokens").asInt());
      assertTrue(end.get("text").asText().contains("how tall"), end.toString());

      // bounded: one node of budget keeps the root and sums up the rest
      JsonNode one = JSON.readTree(get("/cache/tree?max_nodes=1").body());
      assertEquals(1, one.get("nodes").size());
      assertEquals(true, one.get("truncated").asBoolean());
      assertEquals(7, one.at("/nodes/0/more/nodes").asInt());
    }
    assertTrue(server.inspect().quiescent(), server.inspect().toString());
  }
}
