package dev.radixserve.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.weights.GemmaWeights;
import dev.radixserve.model.weights.HfModelLoader;
import dev.radixserve.model.weights.LoadedModel;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Gemma 2 and Gemma 3 (text) checkpoints that transformers 5.18 wrote ({@code
 * resources/gemma/make_fixtures.py}), loaded by {@link HfModelLoader} and run by ONNX Runtime
 * against what transformers computed for them (float32, eager attention): the prompt's token ids,
 * 12 greedy steps decoded through the paged cache (up to a near-tie), every step's top-5
 * log-probabilities within 1e-4, and the chat template's ids. The prompt (55 tokens) is
 * several times the sliding window (8), so the windowed layers forget most of it.
 */
class GemmaCheckpointTest {

  static final int BLOCK = 4;
  static final double TOLERANCE = 1e-4;
  /** transformers' top-2 closer than this: either token is the reference's answer. */
  static final double NEAR_TIE = 1e-4;

  @TempDir Path tmp;

  /**
   * {@code gemma3-transformers4}: gemma3's checkpoint with the config as transformers 4 wrote it
   * (rope_theta, rope_local_base_freq, rope_scaling, sliding_window_pattern), which must read as
   * the same model.
   */
  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3", "gemma3-transformers4"})
  void matchesTransformers(String name) throws IOException {
    Path dir = fixture(name);
    JsonNode expected = expected(name);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), BLOCK, 32, 1)) {
      assertTrue(m.weights() instanceof GemmaWeights, m.weights().describe());
      int[] prompt = m.tokenizer().encode(expected.get("prompt").asText());
      assertArrayEquals(ints(expected.get("prompt_ids")), prompt, "prompt ids");

      int[] table = scrambledTable();
      float[] logits = lastRow(runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, false)))));
      int position = prompt.length;
      int step = 0;
      for (JsonNode s : expected.get("steps")) {
        String where = name + " step " + step;
        double[] logprobs = ReferenceGpt2.logSoftmax(toDoubles(logits));
        assertTop5Close(s, logprobs, where);
        int token = OnnxModelRunnerTest.argmax(logits);
        if (token != s.get("token").asInt()) {
          assertTrue(s.get("top2_gap").asDouble() < NEAR_TIE, where + ": chose " + token
              + ", transformers " + s.get("token") + " (top-2 gap " + s.get("top2_gap") + ")");
          break; // a near-tie went the other way: the sequences part here
        }
        logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(new int[] {token}, position, table))))[0];
        position++;
        step++;
      }
      assertEquals(expected.get("steps").size(), step, name + ": greedy steps equal");
    }
  }

  /**
   * The paged cache across the window: the prompt prefilled in chunks of 5 (each chunk's queries
   * see the cached keys before it, a window that straddles chunks and blocks) gives every
   * position the log-probabilities of one whole prefill.
   */
  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3"})
  void chunkedPrefillThroughTheCacheEqualsOneShot(String name) throws IOException {
    Path dir = fixture(name);
    try (LoadedModel m = HfModelLoader.load(dir);
        OnnxModelRunner whole = OnnxModelRunner.create(m.weights(), BLOCK, 32, 1);
        OnnxModelRunner chunked = OnnxModelRunner.create(m.weights(), BLOCK, 32, 1)) {
      int[] prompt = ints(expected(name).get("prompt_ids"));
      int[] table = scrambledTable();
      float[][] once = whole.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, true))));
      for (int start = 0; start < prompt.length; start += 5) {
        int[] chunk = Arrays.copyOfRange(prompt, start, Math.min(prompt.length, start + 5));
        float[][] rows = chunked.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(chunk, start, table, true))));
        for (int i = 0; i < chunk.length; i++) {
          double[] a = ReferenceGpt2.logSoftmax(toDoubles(once[start + i]));
          double[] b = ReferenceGpt2.logSoftmax(toDoubles(rows[i]));
          double worst = 0;
          for (int v = 0; v < a.length; v++) {
            worst = Math.max(worst, Math.abs(a[v] - b[v]));
          }
          assertTrue(worst <= 1e-5, name + " position " + (start + i) + ": " + worst);
        }
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"gemma2", "gemma3"})
  void chatTemplateIdsMatchTransformers(String name) throws IOException {
    try (LoadedModel m = HfModelLoader.load(fixture(name))) {
      for (JsonNode chat : expected(name).get("chats")) {
        List<ChatTemplate.Message> messages = new ArrayList<>();
        for (JsonNode msg : chat.get("messages")) {
          JsonNode content = msg.get("content");
          // a list of parts: this API's messages are text, so the one text part is the content
          messages.add(new ChatTemplate.Message(msg.get("role").asText(),
              content.isTextual() ? content.asText() : content.get(0).get("text").asText()));
        }
        String text = m.chatTemplate().render(messages);
        int[] ids = m.tokenizer().encodeTemplated(text);
        assertEquals(chat.get("text").asText(), text);
        assertEquals(chat.get("ids").size(), ids.length, name + " token count");
        assertArrayEquals(ints(chat.get("ids")), ids, name + " " + text);
      }
    }
  }

  private static void assertTop5Close(JsonNode step, double[] logprobs, String where) {
    JsonNode ids = step.get("top_ids");
    JsonNode values = step.get("top_logprobs");
    for (int j = 0; j < ids.size(); j++) {
      double delta = Math.abs(logprobs[ids.get(j).asInt()] - values.get(j).asDouble());
      assertTrue(delta <= TOLERANCE, where + ": token " + ids.get(j) + " logprob "
          + logprobs[ids.get(j).asInt()] + ", transformers " + values.get(j) + " (Δ " + delta
          + ")");
    }
  }

  /** 17 blocks of 4 hold the prompt and 12 steps; ids out of order, as a pool hands them out. */
  private static int[] scrambledTable() {
    return new int[] {3, 9, 1, 14, 7, 0, 12, 5, 11, 2, 15, 4, 8, 6, 30, 17, 22, 19, 25, 28};
  }

  private Path fixture(String name) throws IOException {
    if (!name.equals("gemma3-transformers4")) {
      return resource(name);
    }
    Path source = resource("gemma3");
    Path dir = tmp.resolve(name);
    Files.createDirectories(dir);
    try (Stream<Path> files = Files.list(source)) {
      for (Path f : files.toList()) {
        Files.copy(f, dir.resolve(f.getFileName()));
      }
    }
    Files.copy(source.resolve("config.transformers4.json"), dir.resolve("config.json"),
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return dir;
  }

  private static JsonNode expected(String name) throws IOException {
    String folder = name.startsWith("gemma3") ? "gemma3" : name;
    return new ObjectMapper().readTree(resource(folder).resolve("expected.json").toFile());
  }

  static Path resource(String name) {
    try {
      return Path.of(GemmaCheckpointTest.class.getResource("/gemma/" + name).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static float[] lastRow(float[][] rows) {
    return rows[rows.length - 1];
  }

  private static int[] ints(JsonNode array) {
    int[] out = new int[array.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = array.get(i).asInt();
    }
    return out;
  }

  private static double[] toDoubles(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }
}
