package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.config.ServerConfig;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code logit_bias}, {@code min_tokens}, {@code allowed_token_ids} and {@code bad_words} over
 * real HTTP with the embedded model: each changes the output exactly as its rule says.
 */
class LogitRulesEndToEndTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;
  private static final String PROMPT = "\"prompt\":\"The cat sat on the mat. The cat\"";
  private static final int EOS = 50256;
  private static RadixServer server;

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(64).build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static Response post(String path, String body) {
    return RawHttp.exchange(server.port(), RawHttp.post(path, body, "Connection: close"))
        .getFirst();
  }

  private static JsonNode complete(String fields) {
    Response r = post("/v1/completions", "{\"model\":\"" + MODEL + "\"," + PROMPT
        + ",\"temperature\":0," + fields + "}");
    assertEquals(200, r.status(), r.text());
    return r.json();
  }

  /** The one token id of {@code text}. */
  private static int tokenId(String text) throws Exception {
    Response r = post("/tokenize", "{\"prompt\":" + JSON.writeValueAsString(text) + "}");
    assertEquals(1, r.json().get("count").asInt(), text + ": " + r.text());
    return r.json().at("/tokens/0").asInt();
  }

  @Test
  void minus100OnTheGreedyTokenChangesItAndPlus100ForcesOne() throws Exception {
    JsonNode greedy = complete("\"max_tokens\":1");
    String first = greedy.at("/choices/0/text").asText();
    int id = tokenId(first);
    String banned = complete("\"max_tokens\":1,\"logit_bias\":{\"" + id + "\":-100}")
        .at("/choices/0/text").asText();
    assertNotEquals(first, banned);
    // a bias that is not enough to move the choice leaves it
    assertEquals(first, complete("\"max_tokens\":1,\"logit_bias\":{\"" + id + "\":0.001}")
        .at("/choices/0/text").asText());

    int the = tokenId(" the");
    assertNotEquals(the, id);
    assertEquals(" the the the the", complete("\"max_tokens\":4,\"logit_bias\":{\"" + the
        + "\":100}").at("/choices/0/text").asText());
    // sampled, too: +100 leaves the rest no mass
    assertEquals(" the the the the", complete("\"max_tokens\":4,\"temperature\":1,\"seed\":5,"
        + "\"logit_bias\":{\"" + the + "\":100}").at("/choices/0/text").asText());
    // and in chat
    Response chat = post("/v1/chat/completions", "{\"model\":\"" + MODEL + "\",\"max_tokens\":3,"
        + "\"temperature\":0,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
        + "\"logit_bias\":{\"" + the + "\":100}}");
    assertEquals(" the the the", chat.json().at("/choices/0/message/content").asText(),
        chat.text());
  }

  @Test
  void minTokensHoldsBackEosAndStopTokenIds() throws Exception {
    String eos = "\"logit_bias\":{\"" + EOS + "\":100},\"max_tokens\":10";
    JsonNode now = complete(eos);
    assertEquals(1, now.at("/usage/completion_tokens").asInt(), now.toString());
    assertEquals("stop", now.at("/choices/0/finish_reason").asText());
    JsonNode held = complete(eos + ",\"min_tokens\":5");
    assertEquals(6, held.at("/usage/completion_tokens").asInt(), held.toString());
    assertEquals("stop", held.at("/choices/0/finish_reason").asText());
    // ignore_eos: EOS is no end, so min_tokens does not hold it (it is sampled and returned)
    JsonNode ignored = complete(eos + ",\"min_tokens\":5,\"ignore_eos\":true");
    assertEquals(10, ignored.at("/usage/completion_tokens").asInt(), ignored.toString());

    int the = tokenId(" the");
    JsonNode stopId = complete("\"max_tokens\":10,\"min_tokens\":3,\"stop_token_ids\":[" + the
        + "],\"logit_bias\":{\"" + the + "\":100}");
    assertEquals(4, stopId.at("/usage/completion_tokens").asInt(), stopId.toString());
    assertEquals("stop", stopId.at("/choices/0/finish_reason").asText());
    assertTrue(!stopId.at("/choices/0/text").asText().contains(" the"), stopId.toString());

    // stop strings count only in the text after the first min_tokens tokens
    String theForced = "\"max_tokens\":5,\"stop\":\" the\",\"logit_bias\":{\"" + the + "\":100}";
    assertEquals("", complete(theForced).at("/choices/0/text").asText());
    JsonNode heldStop = complete(theForced + ",\"min_tokens\":2");
    assertEquals(" the the", heldStop.at("/choices/0/text").asText(), heldStop.toString());
    assertEquals("stop", heldStop.at("/choices/0/finish_reason").asText());

    Response tooMany = post("/v1/completions", "{\"model\":\"" + MODEL + "\"," + PROMPT
        + ",\"max_tokens\":2,\"min_tokens\":3}");
    assertEquals(400, tooMany.status());
    assertEquals("min_tokens", tooMany.json().at("/error/param").asText());
  }

  @Test
  void allowedTokenIdsAndBadWords() throws Exception {
    int a = tokenId(" dog");
    int b = tokenId(" bird");
    JsonNode allowed = complete("\"max_tokens\":6,\"logprobs\":0,\"allowed_token_ids\":[" + a
        + "," + b + "]");
    for (JsonNode t : allowed.at("/choices/0/logprobs/tokens")) {
      assertTrue(Set.of(" dog", " bird").contains(t.asText()), allowed.toString());
    }
    // bad_words "bird" rules out " bird" (the spaced form): only " dog" is left
    assertEquals(" dog dog dog", complete("\"max_tokens\":3,\"allowed_token_ids\":[" + a + ","
        + b + "],\"bad_words\":[\"bird\"]").at("/choices/0/text").asText());
    // a two-token bad word rules out its second token right after its first only
    String forced = "\"logit_bias\":{\"" + a + "\":50,\"" + b + "\":49}";
    assertEquals(" dog dog", complete("\"max_tokens\":2," + forced).at("/choices/0/text")
        .asText());
    assertEquals(" dog bird dog", complete("\"max_tokens\":3," + forced
        + ",\"bad_words\":[\"dog dog\"]").at("/choices/0/text").asText());
  }

  @Test
  void badValuesAre400NamingTheField() {
    for (String[] bad : new String[][] {
        {"logit_bias", "{\"1\":101}"}, {"logit_bias", "{\"x\":1}"},
        {"logit_bias", "{\"50257\":1}"}, {"logit_bias", "[1]"}, {"logit_bias", "{\"1\":\"a\"}"},
        {"min_tokens", "-1"}, {"min_tokens", "1.5"}, {"allowed_token_ids", "[]"},
        {"allowed_token_ids", "[50257]"}, {"bad_words", "[1]"}, {"bad_words", "[\" \"]"},
        {"bad_words", "\"cat\""}}) {
      Response r = post("/v1/completions", "{\"model\":\"" + MODEL + "\"," + PROMPT
          + ",\"max_tokens\":2,\"" + bad[0] + "\":" + bad[1] + "}");
      assertEquals(400, r.status(), bad[0] + "=" + bad[1] + ": " + r.text());
      assertEquals(bad[0], r.json().at("/error/param").asText(), r.text());
    }
  }
}
