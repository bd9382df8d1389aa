package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.ReferenceGpt2;
import dev.radixserve.model.ReferenceLlama;
import dev.radixserve.model.tokenizer.HfTokenizer;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A Llama-3-shaped model directory as Meta ships one: tokenizer.json (byte-level BPE with Llama
 * 3's regex and specials), tokenizer_config.json with Llama 3's chat template, and
 * generation_config.json with two EOS ids. Served over HTTP: the chat prompt is the template's
 * rendering (BOS from the template, none added by the tokenizer), greedy tokens equal the float64
 * reference's, the second EOS id ends the reply, and a second conversation with the same system
 * prompt reads it from the prefix cache.
 */
class LlamaChatServingTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String SYSTEM = "You are a helpful assistant. Answer every question in"
      + " one short sentence, and never use more words than the question has.";

  private static Path dir;
  private static LlamaWeights weights;
  private static ReferenceLlama reference;
  private static HfTokenizer tokenizer;
  private static RadixServer server;
  private static int[] greedy;
  private static int eosAt;

  @BeforeAll
  static void start() throws Exception {
    dir = Files.createTempDirectory("radixserve-llama-chat");
    copy("/hf-tokenizers/llama3/tokenizer.json", dir.resolve("tokenizer.json"));
    ObjectNode config = JSON.createObjectNode();
    config.put("tokenizer_class", "PreTrainedTokenizerFast");
    config.put("bos_token", "<|begin_of_text|>");
    config.put("eos_token", "<|eot_id|>");
    config.put("chat_template", resource("/chat-templates/llama3.jinja"));
    Files.writeString(dir.resolve("tokenizer_config.json"), JSON.writeValueAsString(config));
    tokenizer = HfTokenizer.load(dir);
    LlamaConfig c = LlamaConfig.llama(2, 32, 4, 2, 48, 256, 640)
        .withRope(new LlamaConfig.Rope("llama3", 500000, 8, 1, 4, 16));
    try (LlamaWeights w = RandomLlama.create(c, 77)) {
      HfModelWriter.write(w, dir, DType.BF16, 1);
    }
    weights = (LlamaWeights) HfModelLoader.loadWeights(dir);
    reference = new ReferenceLlama(weights);
    // the reply's EOS: <|eot_id|>, and the first greedy token from the third on not seen before
    int[] prompt = tokenizer.encodeTemplated(rendered(SYSTEM, "What is two plus two?"));
    greedy = referenceGreedy(prompt, 8);
    eosAt = 2;
    while (Arrays.stream(greedy, 0, eosAt).anyMatch(t -> t == greedy[eosAt])) {
      eosAt++;
    }
    int eot = tokenizer.encodeTemplated("<|eot_id|>")[0];
    HfModelWriter.writeGenerationConfig(dir, eot, greedy[eosAt]);
    server = LocalServers.startCheckpoint(dir, "tiny-llama-chat");
  }

  @AfterAll
  static void stop() throws Exception {
    server.shutdown(Duration.ofSeconds(5));
    weights.close();
    tokenizer.close();
    LocalServers.deleteModelDir(dir);
  }

  /** Llama 3's template, written out: what transformers renders for system + user. */
  private static String rendered(String system, String user) {
    return "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" + system
        + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n" + user
        + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n";
  }

  private static int[] referenceGreedy(int[] start, int steps) {
    int[] seq = Arrays.copyOf(start, start.length + steps);
    for (int i = 0; i < steps; i++) {
      int len = start.length + i;
      seq[len] = ReferenceGpt2.argmax(Arrays.copyOf(
          reference.logits(Arrays.copyOf(seq, len))[len - 1], tokenizer.vocabSize()));
    }
    return Arrays.copyOfRange(seq, start.length, seq.length);
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = LlamaChatServingTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static void copy(String name, Path to) throws IOException {
    try (InputStream in = LlamaChatServingTest.class.getResourceAsStream(name)) {
      Files.copy(in, to);
    }
  }

  private static JsonNode chat(String user, boolean ignoreEos) throws Exception {
    String body = "{\"model\":\"tiny-llama-chat\",\"messages\":[{\"role\":\"system\",\"content\":"
        + JSON.writeValueAsString(SYSTEM) + "},{\"role\":\"user\",\"content\":"
        + JSON.writeValueAsString(user) + "}],\"max_tokens\":8,\"temperature\":0"
        + (ignoreEos ? ",\"ignore_eos\":true" : "") + "}";
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + server.port() + "/v1/chat/completions"))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    return JSON.readTree(r.body());
  }

  @Test
  void theTemplatesPromptGreedyTokensAndEveryEosAsTransformersWouldHaveThem() throws Exception {
    JsonNode r = chat("What is two plus two?", true);
    int[] prompt = tokenizer.encodeTemplated(rendered(SYSTEM, "What is two plus two?"));
    assertEquals(prompt.length, r.at("/usage/prompt_tokens").asInt());
    assertEquals(new String(bytes(greedy), StandardCharsets.UTF_8),
        r.at("/choices/0/message/content").asText());
    JsonNode stopped = chat("What is two plus two?", false);
    assertEquals("stop", stopped.at("/choices/0/finish_reason").asText());
    assertEquals(eosAt + 1, stopped.at("/usage/completion_tokens").asInt());
    assertEquals(new String(bytes(Arrays.copyOf(greedy, eosAt)), StandardCharsets.UTF_8),
        stopped.at("/choices/0/message/content").asText());
  }

  @Test
  void anotherConversationReusesTheSystemPromptFromTheCache() throws Exception {
    chat("Which planet is the largest?", true);
    JsonNode second = chat("Why is the sky blue?", true);
    int shared = tokenizer.encodeTemplated(
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n" + SYSTEM
            + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n").length;
    int cached = second.at("/usage/prompt_tokens_details/cached_tokens").asInt();
    assertTrue(cached >= shared - 1 && cached <= shared + 2, "cached " + cached + ", shared " + shared);
  }

  private static byte[] bytes(int[] ids) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    for (int id : ids) {
      out.writeBytes(tokenizer.tokenBytes(id));
    }
    return out.toByteArray();
  }
}
