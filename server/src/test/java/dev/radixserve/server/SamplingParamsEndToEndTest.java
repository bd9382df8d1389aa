package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The sampling parameters over real HTTP with the real model: each one is shown to reach the
 * sampler by an outcome that only it explains (filters that leave one token reproduce greedy;
 * penalties change the greedy choice exactly as their arithmetic says; seeds reproduce).
 */
class SamplingParamsEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String PROMPT = "\"model\":\"radixserve-embedded-gpt2\",\"prompt\":\"The cat sat on the mat. The cat\"";
  private static RadixServer server;

  @BeforeAll
  static void start() {
    ServerConfig.Builder b = LocalServers.builder(128);
    server = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static JsonNode complete(String params) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(
            "{" + PROMPT + ",\"max_tokens\":12,\"ignore_eos\":true,\"logprobs\":5," + params + "}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body()).at("/choices/0");
  }

  private static List<String> tokens(JsonNode choice) {
    List<String> out = new ArrayList<>();
    choice.at("/logprobs/tokens").forEach(t -> out.add(t.asText()));
    return out;
  }

  @Test
  void filtersThatKeepOneTokenReproduceGreedy() throws Exception {
    String greedy = complete("\"temperature\":0").get("text").asText();
    assertEquals(greedy, complete("\"temperature\":1.5,\"seed\":3,\"top_k\":1").get("text").asText());
    assertEquals(greedy, complete("\"temperature\":1.5,\"seed\":3,\"min_p\":1").get("text").asText());
    assertEquals(greedy, complete("\"temperature\":1.5,\"seed\":3,\"top_p\":1e-9").get("text").asText());
    // unfiltered sampling at that temperature does not reproduce greedy (the filters did the work)
    assertNotEquals(greedy, complete("\"temperature\":1.5,\"seed\":3").get("text").asText());
  }

  @Test
  void seedReproduces() throws Exception {
    String a = complete("\"temperature\":1,\"seed\":7,\"user\":\"alice\"").get("text").asText();
    assertEquals(a, complete("\"temperature\":1,\"seed\":7").get("text").asText());
    assertNotEquals(a, complete("\"temperature\":1,\"seed\":8").get("text").asText());
  }

  @Test
  void frequencyAndPresencePenaltiesChangeGreedyAsTheirArithmeticSays() throws Exception {
    List<String> plain = tokens(complete("\"temperature\":0"));
    assertTrue(new HashSet<>(plain).size() < plain.size(), "greedy repeats itself: " + plain);
    for (String penalty : List.of("frequency_penalty", "presence_penalty")) {
      JsonNode choice = complete("\"temperature\":0,\"" + penalty + "\":2");
      List<String> toks = tokens(choice);
      assertNotEquals(plain, toks, penalty);
      // logprobs are raw (before penalties): the chosen token must maximise raw - penalty
      Map<String, Integer> counts = new HashMap<>();
      for (int i = 0; i < toks.size(); i++) {
        double chosen = penalized(choice.at("/logprobs/token_logprobs/" + i).asDouble(),
            counts.getOrDefault(toks.get(i), 0), penalty);
        var alternatives = choice.at("/logprobs/top_logprobs/" + i).fields();
        while (alternatives.hasNext()) {
          var alt = alternatives.next();
          double score = penalized(alt.getValue().asDouble(),
              counts.getOrDefault(alt.getKey(), 0), penalty);
          assertTrue(score <= chosen + 1e-4,
              penalty + " step " + i + ": " + alt.getKey() + " scores " + score + " > chosen "
                  + toks.get(i) + " " + chosen);
        }
        counts.merge(toks.get(i), 1, Integer::sum);
      }
    }
  }

  private static double penalized(double logprob, int count, String penalty) {
    return penalty.equals("frequency_penalty") ? logprob - 2.0 * count
        : logprob - (count > 0 ? 2.0 : 0.0);
  }

  @Test
  void repetitionPenaltyStopsTheRepeats() throws Exception {
    List<String> plain = tokens(complete("\"temperature\":0"));
    List<String> penalized = tokens(complete("\"temperature\":0,\"repetition_penalty\":3"));
    assertNotEquals(plain, penalized);
    assertEquals(penalized.size(), new HashSet<>(penalized).size(), "no repeats: " + penalized);
  }

  @Test
  void stopTokenIdEndsTheTextBeforeIt() throws Exception {
    List<String> plain = tokens(complete("\"temperature\":0"));
    int at = 1;
    while (plain.get(at).equals(plain.get(0))) {
      at++;
    }
    HttpResponse<String> tok = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/tokenize"))
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"model\":\"radixserve-embedded-gpt2\",\"prompt\":" + JSON.writeValueAsString(plain.get(at)) + "}"))
        .build(), HttpResponse.BodyHandlers.ofString());
    JsonNode ids = JSON.readTree(tok.body()).get("tokens");
    assertEquals(1, ids.size(), "the stop token re-tokenizes to itself: " + tok.body());
    JsonNode stopped = complete("\"temperature\":0,\"stop_token_ids\":[" + ids.get(0).asInt() + "]");
    assertEquals("stop", stopped.get("finish_reason").asText());
    assertEquals(String.join("", plain.subList(0, at)), stopped.get("text").asText());
  }

  @Test
  void versionAnswers() throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + server.port() + "/version")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode());
    assertTrue(JSON.readTree(r.body()).get("version").asText().matches("\\d+\\.\\d+\\.\\d+.*"),
        r.body());
  }
}
