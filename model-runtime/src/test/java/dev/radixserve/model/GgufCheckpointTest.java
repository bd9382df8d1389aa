package dev.radixserve.model;

import static dev.radixserve.model.TransformersCheckpointTest.JSON;
import static dev.radixserve.model.TransformersCheckpointTest.assertTopLogprobs;
import static dev.radixserve.model.TransformersCheckpointTest.ints;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.chat.ChatTemplateException;
import dev.radixserve.model.gguf.GgufModelLoader;
import dev.radixserve.model.quant.CheckpointQuantization;
import dev.radixserve.model.quant.QuantMode;
import dev.radixserve.model.quant.QuantSpec;
import dev.radixserve.model.weights.LoadedModel;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * GGUF files llama.cpp's own converter wrote from checkpoints transformers wrote ({@code
 * gguf/make_fixtures.py}), served by radixserve:
 *
 * <ul>
 *   <li>token ids of fixed texts equal transformers' on the source checkpoint (the vocabulary the
 *       converter copied into the file), BOS as the file's add_bos_token says;
 *   <li>F32 and F16 files: every greedy step's top-5 logprobs within 1e-4 of transformers on the
 *       source checkpoint (F32 holds its bfloat16 weights exactly, and so does F16 here);
 *   <li>Q8_0 and Q4_0 files, served in their own blocks computed in fp32 (accuracy_level 0), and
 *       llama-quantize's Q4_K_M and Q6_K files, served as their dequantized weights: the same
 *       against transformers run on the file's own weights as gguf-py dequantizes them;
 *   <li>the file's chat template through the Jinja engine: token counts and ids as transformers';
 *   <li>and llama.cpp's own llama-server on the same files: tokens of texts and chats, greedy
 *       tokens.
 * </ul>
 */
class GgufCheckpointTest {

  static Path fixtures() {
    try {
      return Path.of(GgufCheckpointTest.class.getResource("/gguf").toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  static JsonNode expected(String name) throws IOException {
    return JSON.readTree(fixtures().resolve(name).toFile());
  }

  @ParameterizedTest(name = "{0}-{1}")
  @CsvSource({"llama3, f32", "llama3, f16", "llama3, q8_0", "llama3, q4_0",
      "qwen2, f32", "qwen2, f16", "qwen2, q8_0", "qwen2, q4_0", "qwen3, f32", "qwen3, q8_0",
      "gpt2, f32", "gpt2, q8_0", "phi3, f32", "phi3, q8_0", "phi3, q4_0", "phi3-long, f32",
      "phi3-window, f32", "gemma2, f32", "gemma2, q8_0", "gemma3, f32", "gemma3, q4_0"})
  void tokenizesAsTheConvertersSource(String model, String type) throws IOException {
    JsonNode expected = expected(model + "-expected.json");
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve(model + "-" + type + ".gguf"))) {
      for (JsonNode t : expected.get("texts")) {
        assertArrayEquals(ints(t.get("ids")), m.tokenizer().encode(t.get("text").asText()),
            model + ": " + t.get("text"));
      }
    }
  }

  @ParameterizedTest(name = "{0}-{1}")
  @CsvSource({"llama3, f32, llama3-expected.json", "llama3, f16, llama3-expected.json",
      "llama3, q8_0, llama3-q8_0-expected.json", "llama3, q4_0, llama3-q4_0-expected.json",
      "qwen2, f32, qwen2-expected.json", "qwen2, f16, qwen2-expected.json",
      "qwen2, q8_0, qwen2-q8_0-expected.json", "qwen2, q4_0, qwen2-q4_0-expected.json",
      "qwen3, f32, qwen3-expected.json", "qwen3, q8_0, qwen3-q8_0-expected.json",
      "gpt2, f32, gpt2-expected.json", "gpt2, q8_0, gpt2-q8_0-expected.json",
      "gpt2, q4_0, gpt2-q4_0-expected.json",
      "llama3-wide, q4_k_m, llama3-wide-q4_k_m-expected.json",
      "llama3-wide, q6_k, llama3-wide-q6_k-expected.json",
      "phi3, f32, phi3-expected.json", "phi3, q8_0, phi3-q8_0-expected.json",
      "phi3, q4_0, phi3-q4_0-expected.json", "phi3-long, f32, phi3-long-expected.json",
      "phi3-window, f32, phi3-window-expected.json",
      "gemma2, f32, gemma2-expected.json", "gemma2, q8_0, gemma2-q8_0-expected.json",
      "gemma2, q4_0, gemma2-q4_0-expected.json", "gemma3, f32, gemma3-expected.json",
      "gemma3, q8_0, gemma3-q8_0-expected.json", "gemma3, q4_0, gemma3-q4_0-expected.json",
      "phi3-wide, q4_k_m, phi3-wide-q4_k_m-expected.json",
      "gemma3-wide, q4_k_m, gemma3-wide-q4_k_m-expected.json"})
  void greedyStepsMatchTheReference(String model, String type, String reference)
      throws IOException {
    JsonNode expected = expected(reference);
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve(model + "-" + type + ".gguf"))) {
      CheckpointQuantization q = m.weights().checkpointQuantization();
      if (type.endsWith("_k") || type.endsWith("_k_m")) {
        assertNull(q, "K-quants are served as the file's dequantized weights");
      } else if (type.startsWith("q")) {
        assertEquals(type.equals("q8_0") ? 8 : 4, q.bits(), "served in the file's own blocks");
      } else {
        assertNull(q);
      }
      QuantSpec exact = q == null ? QuantSpec.none()
          : QuantSpec.forModel(QuantSpec.none(), q, 0, QuantSpec.HeadSetting.AUTO)
              .withHeadMode(QuantMode.NONE);
      assertGreedySteps(m, exact, expected, model + "-" + type);
    }
  }

  /**
   * A GPT-2 file whose projections are all Q8_0 or all Q4_0 is served on its blocks; a session
   * that reads them as floats instead (plain MatMul: {@code QuantSpec.none()}) reads Conv1D's
   * [in, out], the transpose of the file's [out][in] rows, and computes the same model: every
   * greedy step as transformers on the file's own weights (gguf-py's dequantization). Until
   * 2026-11-29 the file's rows were handed over as they lie and the steps were another model's.
   */
  @ParameterizedTest(name = "gpt2-{0}")
  @CsvSource({"q8_0", "q4_0"})
  void gpt2InItsOwnBlocksReadAsFloatsMatchesTheReference(String type) throws IOException {
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve("gpt2-" + type + ".gguf"))) {
      assertEquals(type.equals("q8_0") ? 8 : 4, m.weights().checkpointQuantization().bits(),
          "served in the file's own blocks");
      assertGreedySteps(m, QuantSpec.none(), expected("gpt2-" + type + "-expected.json"),
          "gpt2-" + type + " as floats");
    }
  }

  /**
   * Every greedy step's top-5 logprobs within 1e-4 of the reference's (and its token, but at a
   * near-tie), from each prompt.
   */
  static void assertGreedySteps(LoadedModel m, QuantSpec spec, JsonNode expected,
      String where) {
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1, Map.of(),
        spec)) {
      int[] table = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};
      for (JsonNode run : expected.get("runs")) {
        int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
        assertArrayEquals(ints(run.get("prompt_ids")), prompt, where + " prompt");
        boolean longContext = longContext(m, prompt);
        float[] logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table, false, longContext))))[0];
        int position = prompt.length;
        int step = 0;
        for (JsonNode s : run.get("steps")) {
          assertTopLogprobs(s, logits, where + " step " + step++);
          logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {s.get("token").asInt()}, position++, table, false, longContext))))[0];
        }
      }
    }
  }

  /**
   * K-quant and IQ4_NL/IQ4_XS files as serve runs them by default: requantized into MatMulNBits
   * at int8 (GgufTensors#nearestMode) but for Q4_K projections, served on their own codes with a
   * float offset per block, int8 LM head and embedding, int8 activations (accuracy_level 4);
   * the Q4_K_M file under an explicit {@code --quantization int8} (every layer requantized);
   * and under {@code --quantization int4}: its Q4_K projections on their own codes with a float
   * offset per block, its Q6_K ones re-rounded to int4.
   * Greedy decoding from each prompt gives transformers' tokens on the file's own dequantized
   * weights (journal 2026-11-28-gguf has the logprob differences), and llama-server's greedy
   * tokens on the file ({@code llama_server_reference.py}).
   */
  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({"q4_k_m, auto, INT8, 5", "q6_k, auto, INT8, 0", "iq4_nl, auto, INT8, 0",
      "iq4_xs, auto, INT8, 0", "q4_k_m, int8, INT8, 0", "q4_k_m, int4, INT4, 5"})
  void kQuantFilesServedRequantizedGiveTheFilesGreedyTokens(String type, String flag,
      QuantMode mode, int offsets) throws IOException {
    JsonNode expected = expected("llama3-wide-" + type + "-expected.json");
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve("llama3-wide-" + type
        + ".gguf"))) {
      boolean auto = flag.equals("auto");
      QuantSpec served = QuantSpec.forModel(auto ? QuantSpec.none()
              : QuantSpec.of(QuantMode.parse(flag)), null,
          auto ? m.weights().requantizeAs() : QuantMode.NONE, m.weights().offsetWeights(),
          QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(m.weights().config().hiddenSize());
      assertEquals(mode, served.mode());
      assertEquals(offsets, served.offsetWeights().size());
      assertEquals(QuantMode.INT8, served.headMode());
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1, Map.of(),
          served)) {
        int[] table = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};
        for (JsonNode run : expected.get("runs")) {
          int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
          float[] logits = runner.forward(new ForwardBatch(List.of(
              new ForwardBatch.Seq(prompt, 0, table))))[0];
          int position = prompt.length;
          for (JsonNode s : run.get("steps")) {
            assertEquals(s.get("token").asInt(), OnnxModelRunnerTest.argmax(logits),
                type + " step " + (position - prompt.length));
            logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
                new int[] {s.get("token").asInt()}, position++, table))))[0];
          }
        }
        assertLlamaServersGreedy(m, runner, table,
            expected("llama3-wide-" + type + ".llama-server.json"), type + " " + flag);
      }
    }
  }

  /**
   * llama-quantize's Q4_K_M of a 256-wide Phi-3 (make_fixtures.py k-wide) holds the fused
   * gate/up (and o_proj) in Q4_K and the fused qkv in Q6_K: served by default, gate and up are
   * each served on the file's own Q4_K codes (a slice of the fused rows, {@code
   * GgufQ4KBlocksTest}'s route), q/k/v requantized to int8. Greedy decoding gives transformers' tokens on the file's dequantized
   * weights and llama-server's, up to the first near-tie (a top-2 gap under 0.05, where the
   * int8 activations of either server may choose the other token).
   */
  @Test
  void aKQuantFilesFusedProjectionsAreServedOnTheirOwnBlocks() throws IOException {
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve("phi3-wide-q4_k_m.gguf"))) {
      assertEquals(java.util.Set.of("layers.0.mlp.gate_proj.weight",
          "layers.0.mlp.up_proj.weight", "layers.0.self_attn.o_proj.weight"),
          m.weights().offsetWeights());
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), null, m.weights().requantizeAs(),
          m.weights().offsetWeights(), QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(m.weights().config().hiddenSize());
      assertEquals(QuantMode.INT8, served.mode());
      // the reference's first near-ties: step 5 of run 0 (0.020), step 8 of run 1 (0.008)
      assertServedGreedyUpToANearTie(m, served, "phi3-wide-q4_k_m", 5, 8);
    }
  }

  /**
   * llama-quantize's Q4_K_M of a 256-wide two-layer Gemma 3 (make_fixtures.py k-wide): its q, k,
   * o, gate and up projections in Q4_K (and layer 0's v and down), the rest and the tied table in
   * Q6_K. Served by default on the Gemma graph, the Q4_K layers on the file's own codes (norms
   * less the converter's +1, the embedding gathered from the head's int8 table): greedy decoding
   * gives transformers' tokens on the file's dequantized weights and llama-server's, up to the
   * first near-tie.
   */
  @Test
  void aGemmaKQuantFileIsServedOnItsOwnBlocks() throws IOException {
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve("gemma3-wide-q4_k_m.gguf"))) {
      assertInstanceOf(GemmaConfig.class, m.weights().config());
      assertEquals(java.util.Set.of("layers.0.self_attn.q_proj.weight",
          "layers.0.self_attn.k_proj.weight", "layers.0.self_attn.v_proj.weight",
          "layers.0.self_attn.o_proj.weight", "layers.0.mlp.gate_proj.weight",
          "layers.0.mlp.up_proj.weight", "layers.0.mlp.down_proj.weight",
          "layers.1.self_attn.q_proj.weight", "layers.1.self_attn.k_proj.weight",
          "layers.1.self_attn.o_proj.weight", "layers.1.mlp.gate_proj.weight",
          "layers.1.mlp.up_proj.weight"), m.weights().offsetWeights());
      QuantSpec served = QuantSpec.forModel(QuantSpec.none(), null, m.weights().requantizeAs(),
          m.weights().offsetWeights(), QuantSpec.CPU_ACCURACY_LEVEL, QuantSpec.HeadSetting.AUTO)
          .resolvedFor(m.weights().config().hiddenSize());
      assertEquals(QuantMode.INT8, served.mode());
      // run 0 has no near-tie in its 10 steps; run 1's first step is one (0.013), where both
      // references chose the same token, which int8 activations may not
      assertServedGreedyUpToANearTie(m, served, "gemma3-wide-q4_k_m", 10, 0);
    }
  }

  /**
   * Greedy decoding of {@code name}'s file served by {@code served} gives the reference's tokens
   * (transformers on the file's dequantized weights) and llama-server's, each run up to the
   * reference's first near-tie (a top-2 gap under 0.05, where the int8 activations of either
   * server may choose the other token): {@code checkedRuns[r]} steps of run r.
   */
  private static void assertServedGreedyUpToANearTie(LoadedModel m, QuantSpec served,
      String name, int... checkedRuns) throws IOException {
    JsonNode reference = expected(name + "-expected.json");
    JsonNode server = expected(name + ".llama-server.json");
    int[] table = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};
    try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1, Map.of(),
        served)) {
      assertEquals(checkedRuns.length, reference.get("runs").size());
      for (int r = 0; r < checkedRuns.length; r++) {
        JsonNode run = reference.get("runs").get(r);
        int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
        float[] logits = runner.forward(new ForwardBatch(List.of(
            new ForwardBatch.Seq(prompt, 0, table))))[0];
        int checked = 0;
        for (JsonNode s : run.get("steps")) {
          JsonNode top = s.get("top_logprobs");
          if (top.get(0).asDouble() - top.get(1).asDouble() < 0.05) {
            break;
          }
          int token = OnnxModelRunnerTest.argmax(logits);
          assertEquals(s.get("token").asInt(), token, name + " run " + r + " step " + checked);
          assertEquals(server.get("runs").get(r).get("tokens").get(checked).asInt(), token,
              name + " llama-server, run " + r + " step " + checked);
          logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
              new int[] {token}, prompt.length + checked++, table))))[0];
        }
        assertEquals(checkedRuns[r], checked, name + " run " + r + ": steps before a near-tie");
      }
    }
  }

  /**
   * llama.cpp's own answers on the same files ({@code llama_server_reference.py}): /tokenize of
   * the fixed texts (BOS as the file says, special tokens parsed) equals radixserve's ids; greedy
   * decoding gives llama-server's tokens (F32/F16; the quantized files' agreement is in
   * docs/benchmarks/journal/2026-11-21-to-28.md); the chat template's tokens equal /apply-template + /tokenize where the
   * template prints no date (Llama 3.2's prints today's, and llama-server strips its BOS text).
   */
  @ParameterizedTest(name = "{0}-{1}")
  @CsvSource({"llama3, f32", "llama3, f16", "llama3, q8_0", "llama3, q4_0", "qwen2, f32",
      "qwen2, f16", "qwen2, q8_0", "qwen2, q4_0", "qwen3, f32", "qwen3, q8_0", "gpt2, f32",
      "gpt2, q8_0", "llama3-wide, q4_k_m", "llama3-wide, q6_k", "llama3-wide, iq4_nl",
      "llama3-wide, iq4_xs", "phi3, f32", "phi3-long, f32", "gemma2, f32", "gemma2, q8_0",
      "gemma2, q4_0", "gemma3, f32", "gemma3, q8_0", "gemma3, q4_0", "phi3-wide, q4_k_m",
      "gemma3-wide, q4_k_m", "llama3-pre, smollm", "llama3-pre, gpt-4o"})
  void matchesLlamaServer(String model, String type) throws IOException {
    JsonNode server = expected(model + "-" + type + ".llama-server.json");
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve(model + "-" + type + ".gguf"),
        TransformersCheckpointTest.FIXTURE_DAY)) {
      for (JsonNode t : server.get("texts")) {
        assertArrayEquals(ints(t.get("ids")), m.tokenizer().encode(t.get("text").asText()),
            model + "-" + type + ": " + t.get("text"));
      }
      for (JsonNode chat : server.get("chats")) {
        if (model.startsWith("llama3")) {
          continue;
        }
        List<ChatTemplate.Message> messages = new ArrayList<>();
        chat.get("messages").forEach(msg -> messages.add(new ChatTemplate.Message(
            msg.get("role").asText(), msg.get("content").asText())));
        if (model.equals("gemma2") && messages.getFirst().role().equals("system")) {
          // Gemma 2's template raises on a system turn, and so does it here (a 400), as in
          // transformers; llama-server folds the system text into the first user turn instead
          ChatTemplateException e = assertThrows(ChatTemplateException.class,
              () -> m.chatTemplate().render(messages));
          assertTrue(e.getMessage().contains("System role not supported"), e.getMessage());
          continue;
        }
        String rendered = m.chatTemplate().render(messages);
        String prompt = chat.get("prompt").asText();
        int[] want = ints(chat.get("ids"));
        if (!rendered.equals(prompt) && rendered.endsWith(prompt)) {
          // llama-server's /apply-template cuts the BOS text a template starts with (its
          // tokenizer adds BOS instead): the cut is the BOS token, and the ids follow it
          int[] cut = m.tokenizer().encodeTemplated(rendered.substring(0,
              rendered.length() - prompt.length()));
          assertEquals(1, cut.length, model + ": the template's prefix is one token");
          want = java.util.stream.IntStream.concat(java.util.stream.IntStream.of(cut[0]),
              java.util.Arrays.stream(want)).toArray();
          rendered = rendered.substring(rendered.length() - prompt.length());
        }
        assertEquals(prompt, rendered, model + " " + messages);
        assertArrayEquals(want, m.tokenizer().encodeTemplated(m.chatTemplate().render(messages)),
            model + " " + messages);
      }
      if (type.startsWith("q")) {
        return;
      }
      try (OnnxModelRunner runner = OnnxModelRunner.create(m.weights(), 4, 24, 1)) {
        int[] table = {5, 2, 11, 0, 7, 19, 3, 14, 9, 1, 22, 6, 17, 4, 12, 8};
        assertLlamaServersGreedy(m, runner, table, server, model + "-" + type);
      }
    }
  }

  /**
   * Llama 3's chat against llama-server's on the same day ({@code llama_server_reference.py
   * --dated-chats "24 Nov 2026"}: /apply-template with that {@code date_string}, /tokenize with
   * add_special): the file's template on a clock set to that day renders llama-server's prompt
   * (after the BOS text, which llama-server leaves to the tokenizer) and the same ids.
   */
  @Test
  void llama3ChatEqualsLlamaServersOnTheSameDay() throws IOException {
    JsonNode server = expected("llama3-f32.dated-chats.llama-server.json");
    assertEquals("24 Nov 2026", server.get("date_string").asText());
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve("llama3-f32.gguf"),
        TransformersCheckpointTest.FIXTURE_DAY)) {
      for (JsonNode chat : server.get("chats")) {
        List<ChatTemplate.Message> messages = new ArrayList<>();
        chat.get("messages").forEach(msg -> messages.add(new ChatTemplate.Message(
            msg.get("role").asText(), msg.get("content").asText())));
        String rendered = m.chatTemplate().render(messages);
        assertEquals("<|begin_of_text|>" + chat.get("prompt").asText(), rendered,
            messages.toString());
        assertArrayEquals(ints(chat.get("ids")), m.tokenizer().encodeTemplated(rendered),
            messages.toString());
      }
    }
  }

  /** As the engine decides it: a prompt past the model's long-context length runs there. */
  private static boolean longContext(LoadedModel m, int[] prompt) {
    return prompt.length > m.weights().config().longContextFrom();
  }

  /** Greedy decoding from each of llama-server's prompts gives its tokens. */
  static void assertLlamaServersGreedy(LoadedModel m, OnnxModelRunner runner, int[] table,
      JsonNode server, String where) {
    for (JsonNode run : server.get("runs")) {
      int[] prompt = m.tokenizer().encode(run.get("prompt").asText());
      int[] want = ints(run.get("tokens"));
      int[] got = new int[want.length];
      boolean longContext = longContext(m, prompt);
      float[] logits = runner.forward(new ForwardBatch(List.of(
          new ForwardBatch.Seq(prompt, 0, table, false, longContext))))[0];
      for (int i = 0; i < want.length; i++) {
        got[i] = OnnxModelRunnerTest.argmax(logits);
        logits = runner.forward(new ForwardBatch(List.of(new ForwardBatch.Seq(
            new int[] {got[i]}, prompt.length + i, table, false, longContext))))[0];
      }
      assertArrayEquals(want, got, where + " greedy from \"" + run.get("prompt").asText()
          + "\" as llama-server");
    }
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"llama3", "qwen2", "qwen3"})
  void chatTemplateFromTheFileCountsAsTransformers(String model) throws IOException {
    JsonNode expected = expected(model + "-expected.json");
    try (LoadedModel m = GgufModelLoader.load(fixtures().resolve(model + "-q8_0.gguf"),
        TransformersCheckpointTest.FIXTURE_DAY)) {
      ChatTemplate template = m.chatTemplate();
      assertInstanceOf(dev.radixserve.model.chat.JinjaChatTemplate.class, template);
      for (JsonNode chat : expected.get("chats")) {
        List<ChatTemplate.Message> messages = new ArrayList<>();
        chat.get("messages").forEach(msg -> messages.add(new ChatTemplate.Message(
            msg.get("role").asText(), msg.get("content").asText())));
        int[] ids = m.tokenizer().encodeTemplated(template.render(messages));
        assertEquals(chat.get("token_count").asInt(), ids.length, model + " " + messages);
        assertArrayEquals(ints(chat.get("ids")), ids, model + " " + messages);
      }
    }
  }
}
