package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.chat.ChatTemplateException;
import dev.radixserve.model.chat.ChatTemplates;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LoadedModel;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Checkpoints that transformers itself wrote (config.json in the transformers 5 form, and the
 * transformers 4 form in the {@code -v4} cases; every rope type; each family's tokenizer class
 * and chat template), served by radixserve and held against what transformers computed on the
 * same files in float32 ({@code transformers-checkpoints/make_fixtures.py}):
 *
 * <ul>
 *   <li>token ids of fixed texts, BOS included as the tokenizer adds it;
 *   <li>at every greedy step, the top-5 logprobs within 1e-4 and the same argmax, unless
 *       transformers' top two are within 1e-4 of each other (a near-tie); the steps are fed
 *       transformers' own tokens, so a near-tie never derails the later steps. Decoding runs
 *       through the paged cache, while transformers recomputed the whole sequence each step, so
 *       this also holds cache on ≡ off (the longrope case past its original length follows
 *       generate()'s own KV-cache path instead: there the rope depends on the path, and a
 *       prompt longer than the original length runs in the long context, as the engine runs it);
 *   <li>the chat template's token count (and ids) of each conversation, and its refusals.
 * </ul>
 */
class TransformersCheckpointTest {

  static final double TOLERANCE = 1e-4;
  static final int BLOCK = 4;
  static final Clock FIXTURE_DAY =
      Clock.fixed(Instant.parse("2026-11-24T12:00:00Z"), ZoneOffset.UTC);
  static final ObjectMapper JSON = new ObjectMapper();

  static Path fixtures() {
    try {
      return Path.of(TransformersCheckpointTest.class.getResource("/transformers-checkpoints")
          .toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static Stream<String> cases() throws IOException {
    try (Stream<Path> dirs = Files.list(fixtures())) {
      return dirs.filter(d -> Files.isRegularFile(d.resolve("expected.json")))
          .map(d -> d.getFileName().toString()).sorted().toList().stream();
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void tokenizesAsTransformers(String name) throws IOException {
    Path dir = fixtures().resolve(name);
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    try (LoadedModel m = HfModelLoader.load(dir)) {
      for (JsonNode t : expected.get("texts")) {
        assertArrayEquals(ints(t.get("ids")), m.tokenizer().encode(t.get("text").asText()),
            name + ": " + t.get("text"));
      }
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void greedyStepsMatchTransformers(String name) throws IOException {
    Path dir = fixtures().resolve(name);
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), BLOCK, 24, 1)) {
      int[] table = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};
      for (JsonNode run : expected.get("runs")) {
        int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
        assertArrayEquals(ints(run.get("prompt_ids")), prompt, name + " prompt");
        // as the engine decides it: a prompt past the model's long-context length runs there
        boolean longContext = prompt.length > m.weights().config().longContextFrom();
        float[][] rows = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table, false, longContext))));
        float[] logits = rows[0];
        int position = prompt.length;
        int step = 0;
        for (JsonNode s : run.get("steps")) {
          String where = name + " \"" + run.get("prompt").asText() + "\" step " + step++;
          assertTopLogprobs(s, logits, where);
          int token = s.get("token").asInt();
          logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(new int[] {token}, position++, table, false, longContext))))[0];
        }
      }
    }
  }

  @ParameterizedTest
  @MethodSource("cases")
  void chatTemplateTokensMatchTransformers(String name) throws IOException {
    Path dir = fixtures().resolve(name);
    JsonNode expected = JSON.readTree(dir.resolve("expected.json").toFile());
    ChatTemplate template = ChatTemplates.load(dir, FIXTURE_DAY).orElseThrow();
    try (LoadedModel m = HfModelLoader.load(dir)) {
      for (JsonNode chat : expected.get("chats")) {
        List<ChatTemplate.Message> messages = new ArrayList<>();
        chat.get("messages").forEach(msg -> messages.add(new ChatTemplate.Message(
            msg.get("role").asText(), msg.get("content").asText())));
        if (chat.has("error")) {
          assertThrows(ChatTemplateException.class, () -> template.render(messages),
              name + ": transformers refused with " + chat.get("error"));
          continue;
        }
        int[] ids = m.tokenizer().encodeTemplated(template.render(messages));
        assertEquals(chat.get("token_count").asInt(), ids.length, name + " " + messages);
        assertArrayEquals(ints(chat.get("ids")), ids, name + " " + messages);
      }
    }
  }

  /**
   * transformers' top-5 (ids and logprobs) against ours: every logprob within {@link #TOLERANCE},
   * and the same ids in the same order except where two neighbours are a near-tie.
   */
  static void assertTopLogprobs(JsonNode step, float[] logits, String where) {
    double[] logprobs = ReferenceGpt2.logSoftmax(toDoubles(logits));
    JsonNode ids = step.get("top_ids");
    JsonNode values = step.get("top_logprobs");
    for (int k = 0; k < ids.size(); k++) {
      double want = values.get(k).asDouble();
      double got = logprobs[ids.get(k).asInt()];
      assertTrue(Math.abs(want - got) <= TOLERANCE, where + ": token " + ids.get(k) + " logprob "
          + got + ", transformers " + want);
    }
    int argmax = OnnxModelRunnerTest.argmax(logits);
    boolean nearTie = values.get(0).asDouble() - values.get(1).asDouble() <= TOLERANCE;
    assertTrue(nearTie || argmax == step.get("token").asInt(), where + ": greedy token " + argmax
        + ", transformers " + step.get("token"));
  }

  static double[] toDoubles(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }

  static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }
}
