package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Device;
import dev.radixserve.model.graph.GraphDtype;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The low-precision device path behind the real HTTP server against the fp32 CPU server: greedy
 * completions agree token for token except where the fp32 model nearly ties (reported), the cache
 * changes nothing, and a batch gives what each request gets alone. In the CPU suite the "device"
 * is the IOBinding runner in fp16 on the CPU (the fp16 stand-in kernel); in the GPU run
 * ({@code -Dradixserve.test.device=cuda}) it is ONNX Runtime's CUDA provider.
 */
class DeviceParityEndToEndTest {

  /** A disagreement counts as a near-tie when fp32 ranks the two tokens this close (nats). */
  static final double NEAR_TIE = 0.1;
  /** On the CPU the fp16 stand-in is slow (about 0.3 s a step): a shorter run there. */
  static final boolean ON_GPU = LocalServers.testDevice() == Device.Kind.CUDA;
  static final int TOKENS = ON_GPU ? 24 : 8;
  static final List<String> PROMPTS = List.of("Once upon a time", "Roses are red, violets",
      "The quick brown fox jumps over the lazy dog because", "def fibonacci(n):",
      "The capital of France is", "In 1905, Einstein published", "A B C D E F G")
      .subList(0, ON_GPU ? 7 : 4);

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static RadixServer device;
  private static RadixServer fp32;

  @BeforeAll
  static void start() {
    ServerConfig.Builder d = LocalServers.builder(256);
    if (d.device == Device.Kind.CPU) {
      d.dtype = GraphDtype.FLOAT16;
    }
    device = RadixServer.start(d.build());
    ServerConfig.Builder c = LocalServers.builder(256);
    c.device = Device.Kind.CPU;
    c.dtype = GraphDtype.FLOAT32;
    fp32 = RadixServer.start(c.build());
  }

  @AfterAll
  static void stop() {
    device.shutdown(Duration.ofSeconds(5));
    fp32.shutdown(Duration.ofSeconds(5));
  }

  static JsonNode complete(RadixServer server, String prompt) {
    try {
      HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + server.port() + "/v1/completions"))
          .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"radixserve-embedded-gpt2\","
              + "\"prompt\":" + JSON.writeValueAsString(prompt) + ",\"max_tokens\":" + TOKENS
              + ",\"temperature\":0,\"logprobs\":5,\"ignore_eos\":true}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      return JSON.readTree(r.body()).at("/choices/0");
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static List<String> tokens(JsonNode choice) {
    List<String> tokens = new ArrayList<>();
    choice.at("/logprobs/tokens").forEach(t -> tokens.add(t.asText()));
    return tokens;
  }

  @Test
  void greedyTokensMatchTheFp32CpuServerExceptAtNearTies() {
    List<String> nearTies = new ArrayList<>();
    int compared = 0;
    for (String prompt : PROMPTS) {
      JsonNode want = complete(fp32, prompt);
      JsonNode got = complete(device, prompt);
      List<String> w = tokens(want);
      List<String> g = tokens(got);
      assertEquals(TOKENS, g.size());
      for (int i = 0; i < TOKENS; i++) {
        compared++;
        if (w.get(i).equals(g.get(i))) {
          continue;
        }
        JsonNode top = want.at("/logprobs/top_logprobs/" + i);
        double gap = top.get(w.get(i)).asDouble()
            - (top.has(g.get(i)) ? top.get(g.get(i)).asDouble() : Double.NEGATIVE_INFINITY);
        String report = "'" + prompt + "' token " + i + ": fp32 " + JSON.valueToTree(w.get(i))
            + " vs device " + JSON.valueToTree(g.get(i)) + ", fp32 gap " + gap;
        assertTrue(gap <= NEAR_TIE, "not a near-tie: " + report);
        nearTies.add(report);
        break; // the continuations differ from here on
      }
    }
    System.out.println("device vs fp32 CPU greedy: " + compared + " tokens compared, near-ties: "
        + nearTies);
    assertTrue(nearTies.size() <= PROMPTS.size() / 2, "too many near-ties: " + nearTies);
  }

  /**
   * Alone, together in one batch, and again from the prefix cache, the device gives the same
   * tokens, up to the first exact-or-nearly tied pick. Low-precision kernels need not be batch
   * invariant: ONNX Runtime's CPU fp16 path gives a step of one token logits one fp16 ulp away
   * from a step of several (measured: 0.0049), and cuBLAS may choose its algorithm by shape; a
   * flip is allowed only where the two tokens were within {@value #SAME_DEVICE_TIE} nats.
   */
  @Test
  void aBatchAndTheCacheGiveWhatEachRequestGetsAloneUpToNearTies() {
    List<JsonNode> alone = new ArrayList<>();
    for (String prompt : PROMPTS) {
      alone.add(complete(device, prompt));
    }
    List<CompletableFuture<JsonNode>> together = new ArrayList<>();
    for (String prompt : PROMPTS) {
      together.add(CompletableFuture.supplyAsync(() -> complete(device, prompt)));
    }
    List<String> nearTies = new ArrayList<>();
    for (int i = 0; i < PROMPTS.size(); i++) {
      // the second and third time, the prompt comes from the prefix cache
      sameUpToNearTie(PROMPTS.get(i), alone.get(i), together.get(i).join(), nearTies);
      sameUpToNearTie(PROMPTS.get(i), alone.get(i), complete(device, PROMPTS.get(i)), nearTies);
    }
    System.out.println("device alone vs batched/cached near-ties: " + nearTies);
    assertTrue(nearTies.size() <= PROMPTS.size() / 2, "too many near-ties: " + nearTies);
  }

  static final double SAME_DEVICE_TIE = 0.02;

  private static void sameUpToNearTie(String prompt, JsonNode want, JsonNode got,
      List<String> nearTies) {
    List<String> w = tokens(want);
    List<String> g = tokens(got);
    for (int i = 0; i < TOKENS; i++) {
      if (!w.get(i).equals(g.get(i))) {
        JsonNode top = want.at("/logprobs/top_logprobs/" + i);
        double gap = top.get(w.get(i)).asDouble()
            - (top.has(g.get(i)) ? top.get(g.get(i)).asDouble() : Double.NEGATIVE_INFINITY);
        String report = "'" + prompt + "' token " + i + ": gap " + gap;
        assertTrue(gap <= SAME_DEVICE_TIE, "not a near-tie: " + report + ", " + w + " vs " + g);
        nearTies.add(report);
        return;
      }
    }
  }
}
