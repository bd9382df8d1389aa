package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.radixserve.model.ModelConfig;
import dev.radixserve.model.ReferenceGpt2;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.GptWeights;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.RandomGpt2;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A checkpoint unlike GPT-2's defaults, served over HTTP and checked against the float64
 * reference: untied head, {@code n_inner}, three shards, a byte-level tokenizer with a vocabulary
 * padded past it, EOS ids from generation_config.json. Prompts are prefilled in chunks of 16.
 */
class CheckpointServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final ModelConfig CONFIG =
      new ModelConfig(2, 2, 32, 128, 260, 1e-5, "gelu_new").withUntiedHead().withNInner(48);
  /** The byte-level tokenizer's ids; 257..259 are padding. */
  private static final int TOKENS = 257;
  private static final String PROMPT = "Shards, heads and widths: all as config.json says.";

  private static Path dir;
  private static GptWeights weights;
  private static ReferenceGpt2 reference;
  private static Tokenizer tokenizer;
  private static int[] prompt;
  private static int[] greedy;
  private static int eos;
  private static int eosAt;
  private static RadixServer server;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("radixserve-checkpoint");
    weights = RandomGpt2.create(CONFIG, 2026);
    reference = new ReferenceGpt2(weights);
    HfModelWriter.writeSharded(weights, dir, DType.F32, 3);
    HfModelWriter.writeByteLevelTokenizer(dir);
    tokenizer = TokenizerLoader.load(dir);
    prompt = tokenizer.encode(PROMPT);
    greedy = referenceGreedy(prompt, 8);
    // EOS: the first greedy token (from the third on) not sampled before it
    eosAt = 2;
    while (Arrays.stream(greedy, 0, eosAt).anyMatch(t -> t == greedy[eosAt])) {
      eosAt++;
    }
    eos = greedy[eosAt];
    HfModelWriter.writeGenerationConfig(dir, eos, 259);
    server = LocalServers.startCheckpoint(dir, "tiny-gpt2");
  }

  @AfterAll
  static void stop() throws Exception {
    server.shutdown(Duration.ofSeconds(5));
    weights.close();
    LocalServers.deleteModelDir(dir);
  }

  /** Greedy over the tokenizer's ids only, as the server samples. */
  private static int[] referenceGreedy(int[] start, int steps) {
    int[] seq = Arrays.copyOf(start, start.length + steps);
    for (int i = 0; i < steps; i++) {
      int len = start.length + i;
      seq[len] = ReferenceGpt2.argmax(Arrays.copyOf(reference.logits(Arrays.copyOf(seq, len))[len - 1], TOKENS));
    }
    return Arrays.copyOfRange(seq, start.length, seq.length);
  }

  private static HttpResponse<String> send(HttpRequest.Builder r) throws Exception {
    return CLIENT.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> get(String path) throws Exception {
    return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)));
  }

  private static HttpResponse<String> post(String path, String body) throws Exception {
    return send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)));
  }

  private static JsonNode completion(String body) throws Exception {
    HttpResponse<String> r = post("/v1/completions", body);
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  private static String promptJson() throws Exception {
    return "\"model\":\"tiny-gpt2\",\"prompt\":" + JSON.writeValueAsString(PROMPT);
  }

  @Test
  void modelsReportTheCheckpointAsVllmDoes() throws Exception {
    JsonNode list = JSON.readTree(get("/v1/models").body());
    assertEquals("list", list.get("object").asText());
    JsonNode card = list.at("/data/0");
    assertEquals("tiny-gpt2", card.get("id").asText());
    assertEquals("model", card.get("object").asText());
    assertEquals("radixserve", card.get("owned_by").asText());
    assertEquals(dir.toString(), card.get("root").asText());
    assertTrue(card.get("parent").isNull());
    assertEquals(128, card.get("max_model_len").asInt());
    assertTrue(card.get("created").asLong() > 0);
    assertEquals("model_permission", card.at("/permission/0/object").asText());
    assertTrue(card.at("/permission/0/allow_logprobs").asBoolean());
    assertEquals(card, JSON.readTree(get("/v1/models/tiny-gpt2").body()));
    HttpResponse<String> missing = get("/v1/models/gpt2");
    assertEquals(404, missing.statusCode());
    assertEquals("model_not_found", JSON.readTree(missing.body()).at("/error/code").asText());
  }

  @Test
  void greedyTokensEqualTheReference() throws Exception {
    JsonNode r = completion("{" + promptJson() + ",\"max_tokens\":8,\"temperature\":0,\"ignore_eos\":true}");
    assertEquals(tokenizer.decode(greedy), r.at("/choices/0/text").asText());
    assertEquals("length", r.at("/choices/0/finish_reason").asText());
  }

  @Test
  void generationConfigEosEndsTheChoice() throws Exception {
    JsonNode r = completion("{" + promptJson() + ",\"max_tokens\":8,\"temperature\":0}");
    assertEquals(tokenizer.decode(Arrays.copyOf(greedy, eosAt)), r.at("/choices/0/text").asText());
    assertEquals("stop", r.at("/choices/0/finish_reason").asText());
    assertEquals(eosAt + 1, r.at("/usage/completion_tokens").asInt()); // the EOS token counts
  }

  @Test
  void echoedPromptTokensCarryTheReferenceLogprobsAcrossChunksAndACachedPrefix() throws Exception {
    completion("{" + promptJson() + ",\"max_tokens\":1,\"temperature\":0}"); // caches the prompt
    String body = "{" + promptJson() + ",\"max_tokens\":3,\"temperature\":0,\"ignore_eos\":true,"
        + "\"echo\":true,\"logprobs\":2,\"n\":2";
    JsonNode r = completion(body + "}");
    assertEquals(0, r.at("/usage/prompt_tokens_details/cached_tokens").asInt());
    JsonNode lp = r.at("/choices/0/logprobs");
    assertEquals(PROMPT + tokenizer.decode(Arrays.copyOf(greedy, 3)), r.at("/choices/0/text").asText());
    int[] all = Arrays.copyOf(prompt, prompt.length + 3);
    System.arraycopy(greedy, 0, all, prompt.length, 3);
    double[][] logits = reference.logits(all);
    assertEquals(all.length, lp.get("tokens").size());
    assertTrue(lp.at("/token_logprobs/0").isNull());
    assertTrue(lp.at("/top_logprobs/0").isNull());
    for (int i = 1; i < all.length; i++) {
      double[] expected = ReferenceGpt2.logSoftmax(Arrays.copyOf(logits[i - 1], TOKENS));
      assertEquals(tokenizer.decode(new int[] {all[i]}), lp.at("/tokens/" + i).asText());
      assertEquals(expected[all[i]], lp.at("/token_logprobs/" + i).asDouble(), 1e-4, "token " + i);
      assertTopLogprobs(expected, lp.at("/top_logprobs/" + i));
    }
    assertEquals(0, lp.at("/text_offset/0").asInt());
    assertEquals(PROMPT.length() - 1, lp.at("/text_offset/" + (prompt.length - 1)).asInt());
    assertEquals(PROMPT.length(), lp.at("/text_offset/" + prompt.length).asInt());
    assertEquals(lp, r.at("/choices/1/logprobs")); // greedy: both choices alike, prompt included
    assertEquals(lp, streamedLogprobs(body + ",\"stream\":true}"));

    // max_tokens 0: the prompt alone, scored (the legacy API's way to score text)
    JsonNode scored = completion("{" + promptJson() + ",\"max_tokens\":0,\"echo\":true,\"logprobs\":2}");
    assertEquals(PROMPT, scored.at("/choices/0/text").asText());
    assertEquals("length", scored.at("/choices/0/finish_reason").asText());
    assertEquals(0, scored.at("/usage/completion_tokens").asInt());
    for (String field : new String[] {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
      JsonNode withOutput = lp.get(field);
      JsonNode promptOnly = scored.at("/choices/0/logprobs/" + field);
      assertEquals(prompt.length, promptOnly.size(), field);
      for (int i = 0; i < prompt.length; i++) {
        assertEquals(withOutput.get(i), promptOnly.get(i), field + " " + i);
      }
    }
    assertEquals(400, post("/v1/completions", "{" + promptJson() + ",\"max_tokens\":0}").statusCode());
  }

  /**
   * The legacy format's top_logprobs is a dict by token text: two ids that decode alike (bytes of
   * an unfinished character) share one key, holding the later one's logprob.
   */
  private static void assertTopLogprobs(double[] expected, JsonNode actual) {
    Integer[] ids = new Integer[expected.length];
    Arrays.setAll(ids, k -> k);
    Arrays.sort(ids, (a, b) -> expected[a] != expected[b] ? Double.compare(expected[b], expected[a]) : a - b);
    var want = new java.util.LinkedHashMap<String, Double>();
    for (int k = 0; k < 2; k++) {
      want.put(tokenizer.decode(new int[] {ids[k]}), expected[ids[k]]);
    }
    assertEquals(want.keySet(), iterableKeys(actual), actual.toString());
    want.forEach((token, logprob) -> assertEquals(logprob, actual.get(token).asDouble(), 1e-4, token));
  }

  private static java.util.Set<String> iterableKeys(JsonNode object) {
    var keys = new java.util.LinkedHashSet<String>();
    object.fieldNames().forEachRemaining(keys::add);
    return keys;
  }

  private static JsonNode streamedLogprobs(String body) throws Exception {
    HttpResponse<String> r = post("/v1/completions", body);
    assertEquals(200, r.statusCode(), r.body());
    ArrayNode[] fields = {JSON.createArrayNode(), JSON.createArrayNode(), JSON.createArrayNode(),
        JSON.createArrayNode()};
    String[] names = {"tokens", "token_logprobs", "top_logprobs", "text_offset"};
    for (String event : r.body().split("\n\n")) {
      String data = event.substring("data: ".length());
      if (data.equals("[DONE]")) {
        break;
      }
      JsonNode choice = JSON.readTree(data).at("/choices/0");
      if (choice.path("index").asInt() == 0 && choice.path("logprobs").isObject()) {
        for (int f = 0; f < names.length; f++) {
          fields[f].addAll((ArrayNode) choice.at("/logprobs/" + names[f]));
        }
      }
    }
    var out = JSON.createObjectNode();
    for (int f = 0; f < names.length; f++) {
      out.set(names[f], fields[f]);
    }
    return out;
  }

  @Test
  void chatTopLogprobsCarryEachTokensBytes() throws Exception {
    HttpResponse<String> r = post("/v1/chat/completions", "{\"model\":\"tiny-gpt2\",\"messages\":[{\"role\":\"user\","
        + "\"content\":\"héllo\"}],\"max_tokens\":6,\"temperature\":0,\"ignore_eos\":true,"
        + "\"logprobs\":true,\"top_logprobs\":3}");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode content = JSON.readTree(r.body()).at("/choices/0/logprobs/content");
    assertEquals(6, content.size());
    for (JsonNode t : content) {
      assertTokenBytes(t);
      assertEquals(3, t.get("top_logprobs").size());
      t.get("top_logprobs").forEach(CheckpointServingTest::assertTokenBytes);
    }
  }

  /** A token's bytes decode (invalid UTF-8 replaced) to its text; this tokenizer never merges. */
  private static void assertTokenBytes(JsonNode entry) {
    JsonNode bytes = entry.get("bytes");
    byte[] raw = new byte[bytes.size()];
    for (int k = 0; k < raw.length; k++) {
      raw[k] = (byte) bytes.get(k).asInt();
    }
    assertTrue(raw.length > 0, entry.toString());
    assertEquals(entry.get("token").asText(), new String(raw, java.nio.charset.StandardCharsets.UTF_8),
        entry.toString());
  }
}
