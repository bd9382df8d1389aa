package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ReferenceGpt2;
import dev.radixserve.model.ReferenceLlama;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.tokenizer.TokenizerLoader;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
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
 * A Llama-family checkpoint (GQA: 4 query heads over 2 kv heads, llama3 rope scaling, BF16
 * shards) served over HTTP through the real server and checked against the float64 reference:
 * greedy tokens, echoed prompt logprobs across prefill chunks of 16, and a second request whose
 * prompt comes from the prefix cache (rotated keys at absolute positions) with the same result.
 */
class LlamaServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final LlamaConfig CONFIG = LlamaConfig.llama(2, 32, 4, 2, 48, 128, 260)
      .withRope(new LlamaConfig.Rope("llama3", 500000, 8, 1, 4, 16));
  /** The byte-level tokenizer's ids; 257..259 are padding. */
  private static final int TOKENS = 257;
  private static final String PROMPT = "A system prompt long enough to fill a few cache blocks, then a question.";

  private static Path dir;
  private static LlamaWeights weights;
  private static ReferenceLlama reference;
  private static Tokenizer tokenizer;
  private static int[] prompt;
  private static RadixServer server;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("radixserve-llama");
    try (LlamaWeights written = RandomLlama.create(CONFIG, 2027)) {
      HfModelWriter.write(written, dir, DType.BF16, 2);
    }
    // the reference reads the BF16-rounded weights the server loads
    weights = (LlamaWeights) dev.radixserve.model.weights.HfModelLoader.loadWeights(dir);
    reference = new ReferenceLlama(weights);
    HfModelWriter.writeByteLevelTokenizer(dir);
    tokenizer = TokenizerLoader.load(dir);
    prompt = tokenizer.encode(PROMPT);
    server = LocalServers.startCheckpoint(dir, "tiny-llama");
  }

  @AfterAll
  static void stop() throws Exception {
    server.shutdown(Duration.ofSeconds(5));
    weights.close();
    LocalServers.deleteModelDir(dir);
  }

  private static JsonNode completion(String body) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  @Test
  void greedyAndEchoedLogprobsEqualTheReferenceCachedOrNot() throws Exception {
    int steps = 6;
    int[] seq = Arrays.copyOf(prompt, prompt.length + steps);
    for (int i = 0; i < steps; i++) {
      int len = prompt.length + i;
      seq[len] = ReferenceGpt2.argmax(Arrays.copyOf(
          reference.logits(Arrays.copyOf(seq, len))[len - 1], TOKENS));
    }
    double[][] logits = reference.logits(seq);
    String body = "{\"model\":\"tiny-llama\",\"prompt\":" + JSON.writeValueAsString(PROMPT)
        + ",\"max_tokens\":" + steps + ",\"temperature\":0,\"ignore_eos\":true,\"logprobs\":1";
    // echo: every prompt position scored (prompt logprobs bypass the cache, as in vLLM)
    JsonNode echoed = completion(body + ",\"echo\":true}");
    assertLogprobs(echoed, seq, logits, 1);
    // without echo: the prompt's keys, written by the echoed request, come from the cache
    JsonNode first = completion(body + "}");
    JsonNode second = completion(body + "}");
    assertEquals(0, echoed.at("/usage/prompt_tokens_details/cached_tokens").asInt());
    for (JsonNode r : new JsonNode[] {first, second}) {
      int cached = r.at("/usage/prompt_tokens_details/cached_tokens").asInt();
      assertTrue(cached >= prompt.length - 16 && cached < prompt.length, "cached " + cached);
    }
    assertLogprobs(first, seq, logits, prompt.length);
    assertLogprobs(second, seq, logits, prompt.length);
    assertEquals(first.at("/choices/0"), second.at("/choices/0"));
  }

  /** The choice's text and token logprobs are seq's from {@code from} on, as the reference says. */
  private static void assertLogprobs(JsonNode r, int[] seq, double[][] logits, int from) {
    String expectedText = tokenizer.decode(Arrays.copyOfRange(seq, prompt.length, seq.length));
    assertEquals(from < prompt.length ? PROMPT + expectedText : expectedText,
        r.at("/choices/0/text").asText());
    JsonNode lp = r.at("/choices/0/logprobs/token_logprobs");
    int offset = from < prompt.length ? 0 : prompt.length;
    assertEquals(seq.length - offset, lp.size());
    for (int i = Math.max(from, 1); i < seq.length; i++) {
      double[] expected = ReferenceGpt2.logSoftmax(Arrays.copyOf(logits[i - 1], TOKENS));
      assertEquals(expected[seq[i]], lp.get(i - offset).asDouble(), 1e-4, "token " + i);
    }
  }
}
