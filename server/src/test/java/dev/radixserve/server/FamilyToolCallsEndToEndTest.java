package dev.radixserve.server;

import static dev.radixserve.server.StructuredOutputsEndToEndTest.JSON;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.ok;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.post;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.schema;
import static dev.radixserve.server.StructuredOutputsEndToEndTest.validate;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.LlamaConfig;
import dev.radixserve.model.tokenizer.HfTokenizer;
import dev.radixserve.model.weights.DType;
import dev.radixserve.model.weights.HfModelWriter;
import dev.radixserve.model.weights.LlamaWeights;
import dev.radixserve.model.weights.RandomLlama;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Tool calls in the families' own syntax, end to end: a tiny random Llama-3.2-shaped checkpoint
 * (Llama 3.2's template, calls {@code {"name", "parameters"}} separated by {@code ; }) and a
 * Qwen2.5-shaped one (Qwen2.5's template; {@code <tool_call>} and {@code </tool_call>} are added
 * tokens that are not special, as in Qwen's tokenizer.json), served over HTTP through ONNX
 * Runtime. The tools reach the template as transformers passes them (the prompt has the length
 * of transformers' rendering), forced calls are decoded in the family's syntax (the raw tokens,
 * read back through logprobs, are that syntax) and parse back into valid calls, one with
 * {@code parallel_tool_calls: false}, one or more with the default; streams reassemble to the
 * non-streamed reply, call by call.
 *
 * <p>Besides the template's end token, a few unused ids past the tokenizer's vocabulary are end
 * tokens of these checkpoints, so that a random model ends a parallel reply after a few calls
 * instead of writing calls until max_tokens (end tokens are allowed only where a reply is
 * complete), and sometimes goes on to a second call.
 */
class FamilyToolCallsEndToEndTest {

  private static final Map<String, String> TOOLS = new LinkedHashMap<>();

  static {
    TOOLS.put("get_weather", "{'type':'object','properties':{'city':{'type':'string','maxLength':6},"
        + "'unit':{'enum':['celsius','fahrenheit']}},'required':['city','unit'],"
        + "'additionalProperties':false}");
    TOOLS.put("get_time", "{'type':'object','properties':{'tz':{'type':'string','pattern':"
        + "'^[A-Z]{3}$'}},'required':['tz'],'additionalProperties':false}");
  }

  /**
   * How a family writes calls, spelled out here (not taken from the server's code): {@code start
   * open{"name": "N", "KEY": ARGS}close sep open... end}, and its call ids.
   */
  record Syntax(String start, String open, String key, String close, String sep, String end,
      String idPattern) {

    String write(List<String> calls) {
      return start + String.join(sep, calls) + end;
    }

    String call(String name, String args) {
      return open + "{\"name\": \"" + name + "\", \"" + key + "\": " + args + "}" + close;
    }
  }

  /** One served checkpoint. */
  record Family(String name, String template, Path dir, HfTokenizer tokenizer, RadixServer server,
      Syntax syntax) {}

  private static final int EXTRA_END_TOKENS = 4;
  private static final String OPENAI_ID = "call_[A-Za-z0-9]{24}";
  private static Family llama;
  private static Family qwen;
  private static Family mistral;

  @BeforeAll
  static void start() throws Exception {
    llama = family("tiny-llama-tools", "llama3", "llama3_2", "<|begin_of_text|>", "<|eot_id|>",
        LlamaConfig.llama(2, 32, 4, 2, 48, 4096, 640)
            .withRope(new LlamaConfig.Rope("llama3", 500000, 8, 1, 4, 16)), List.of(), List.of(),
        new Syntax("", "", "parameters", "", "; ", "", OPENAI_ID));
    qwen = family("tiny-qwen-tools", "qwen2", "qwen2_5", null, "<|im_end|>",
        LlamaConfig.llama(2, 32, 4, 2, 48, 4096, 640).withModelType("qwen2", true, false)
            .withTiedEmbeddings(), List.of("<tool_call>", "</tool_call>"), List.of(),
        new Syntax("", "<tool_call>\n", "arguments", "\n</tool_call>", "\n", "", OPENAI_ID));
    // Mistral Nemo's control tokens are special: the forced call writes [TOOL_CALLS] as one
    mistral = family("tiny-mistral-tools", "sentencepiece", "mistral_nemo", "<s>", "</s>",
        LlamaConfig.llama(2, 32, 4, 2, 48, 4096, 800), List.of(), List.of("[INST]", "[/INST]",
            "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[TOOL_RESULTS]",
            "[/TOOL_RESULTS]"),
        new Syntax("[TOOL_CALLS][", "", "arguments", "", ", ", "]", "[A-Za-z0-9]{9}"));
  }

  @AfterAll
  static void stop() throws Exception {
    for (Family f : List.of(llama, qwen, mistral)) {
      f.server().shutdown(Duration.ofSeconds(5));
      f.tokenizer().close();
      LocalServers.deleteModelDir(f.dir());
    }
  }

  private static Family family(String name, String tokenizerName, String template, String bos,
      String eos, LlamaConfig config, List<String> addedTokens, List<String> specialTokens,
      Syntax syntax) throws Exception {
    Path dir = Files.createTempDirectory("radixserve-" + name);
    ObjectNode tok = (ObjectNode) JSON.readTree(resource("/hf-tokenizers/" + tokenizerName
        + "/tokenizer.json"));
    ArrayNode added = (ArrayNode) tok.get("added_tokens");
    int next = 0;
    for (JsonNode id : tok.get("model").get("vocab")) {
      next = Math.max(next, id.asInt() + 1);
    }
    for (JsonNode a : added) {
      next = Math.max(next, a.get("id").asInt() + 1);
    }
    for (String t : addedTokens) {
      added.addObject().put("id", next++).put("content", t).put("single_word", false)
          .put("lstrip", false).put("rstrip", false).put("normalized", false).put("special", false);
    }
    for (String t : specialTokens) {
      added.addObject().put("id", next++).put("content", t).put("single_word", false)
          .put("lstrip", false).put("rstrip", false).put("normalized", false).put("special", true);
    }
    Files.writeString(dir.resolve("tokenizer.json"), JSON.writeValueAsString(tok));
    ObjectNode tc = JSON.createObjectNode();
    tc.put("tokenizer_class", "PreTrainedTokenizerFast");
    tc.put("bos_token", bos);
    tc.put("eos_token", eos);
    tc.put("chat_template", resource("/chat-templates/" + template + ".jinja"));
    Files.writeString(dir.resolve("tokenizer_config.json"), JSON.writeValueAsString(tc));
    HfTokenizer tokenizer = HfTokenizer.load(dir);
    try (LlamaWeights w = RandomLlama.create(config, 91)) {
      HfModelWriter.write(w, dir, DType.BF16, 1);
    }
    int end = tokenizer.encodeTemplated(eos)[0];
    int[] eosIds = IntStream.concat(IntStream.of(end),
        IntStream.range(tokenizer.vocabSize(), tokenizer.vocabSize() + EXTRA_END_TOKENS)).toArray();
    HfModelWriter.writeGenerationConfig(dir, eosIds);
    var b = LocalServers.builder(512);
    b.model = dir;
    b.servedModelName = name;
    b.maxNumBatchedTokens = 512;
    return new Family(name, template, dir, tokenizer, RadixServer.start(b.build()), syntax);
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = FamilyToolCallsEndToEndTest.class.getResourceAsStream(name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  private static ObjectNode request(Family f, int maxTokens) {
    ObjectNode body = JSON.createObjectNode().put("model", f.name()).put("max_tokens", maxTokens)
        .put("temperature", 0.0);
    body.putArray("messages").addObject().put("role", "user").put("content", "Weather in Oslo?");
    ArrayNode tools = body.putArray("tools");
    TOOLS.forEach((name, params) -> {
      ObjectNode fn = tools.addObject().put("type", "function").putObject("function");
      fn.put("name", name).put("description", "tool " + name).set("parameters", schema(params));
    });
    return body;
  }

  /**
   * The reply's raw text: its tokens' bytes, read back through logprobs, without the end token
   * that closed it (logprobs list it, as vLLM's do).
   */
  private static String raw(JsonNode choice) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    JsonNode tokens = choice.at("/logprobs/content");
    for (int i = 0; i < tokens.size(); i++) {
      JsonNode t = tokens.get(i);
      if (i == tokens.size() - 1 && (t.get("bytes").isEmpty()
          || List.of("<|eot_id|>", "<|im_end|>", "</s>").contains(t.get("token").asText()))) {
        break;
      }
      for (JsonNode b : t.get("bytes")) {
        out.write(b.asInt());
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static void assertValidCalls(Family f, JsonNode message, String onlyName)
      throws Exception {
    JsonNode calls = message.get("tool_calls");
    assertNotNull(calls, message.toString());
    for (JsonNode call : calls) {
      assertTrue(call.get("id").asText().matches(f.syntax().idPattern()), call.toString());
      assertEquals("function", call.get("type").asText());
      String name = call.at("/function/name").asText();
      assertTrue(onlyName == null ? TOOLS.containsKey(name) : onlyName.equals(name), name);
      JsonNode args = JSON.readTree(call.at("/function/arguments").asText());
      assertTrue(validate(schema(TOOLS.get(name)), args).isEmpty(), args.toString());
    }
  }

  @Test
  void forcedCallsAreWrittenInTheFamilysSyntaxAndParseBack() throws Exception {
    for (Family f : List.of(llama, qwen, mistral)) {
      for (boolean parallel : new boolean[] {false, true}) {
        ObjectNode body = request(f, 300).put("tool_choice", "required").put("logprobs", true);
        if (!parallel) {
          body.put("parallel_tool_calls", false);
        }
        JsonNode c = ok(f.server(), "/v1/chat/completions", body).at("/choices/0");
        String raw = raw(c);
        // one call ends the reply; several may run into max_tokens (greedy random models loop)
        boolean cut = parallel && c.get("finish_reason").asText().equals("length");
        if (!cut) {
          assertEquals("tool_calls", c.get("finish_reason").asText(), f.name() + " " + raw);
        }
        assertTrue(c.at("/message/content").isNull(), c.toString());
        assertTrue(raw.startsWith(f.syntax().start() + f.syntax().open() + "{\"name\": \""),
            f.name() + ": " + raw);
        JsonNode calls = c.at("/message/tool_calls");
        if (!parallel) {
          assertEquals(1, calls.size(), raw);
        }
        // every call is in the raw text in the family's syntax, and nothing else is
        List<String> written = new ArrayList<>();
        for (JsonNode call : calls) {
          written.add(f.syntax().call(call.at("/function/name").asText(),
              call.at("/function/arguments").asText()));
        }
        if (cut) {
          // the text stops inside or just after the last call
          String upToLast = f.syntax().start() + String.join(f.syntax().sep(), written);
          assertTrue(upToLast.startsWith(raw) || raw.startsWith(upToLast), raw);
          assertTrue(calls.size() > 1, raw);
          ArrayNode complete = JSON.createArrayNode();
          for (int i = 0; i < calls.size() - 1; i++) {
            complete.add(calls.get(i));
          }
          assertValidCalls(f, JSON.createObjectNode().set("tool_calls", complete), null);
        } else {
          assertEquals(f.syntax().write(written), raw);
          assertValidCalls(f, c.get("message"), null);
        }
      }
      ObjectNode named = request(f, 300).put("parallel_tool_calls", false);
      named.putObject("tool_choice").put("type", "function").putObject("function")
          .put("name", "get_time");
      JsonNode c = ok(f.server(), "/v1/chat/completions", named).at("/choices/0");
      assertEquals("tool_calls", c.get("finish_reason").asText(), c.toString());
      assertValidCalls(f, c.get("message"), "get_time");
    }
  }

  @Test
  void parallelRepliesHoldSeveralValidCalls() throws Exception {
    for (Family f : List.of(llama, qwen, mistral)) {
      int most = 0;
      for (int seed = 0; seed < 16; seed++) {
        ObjectNode body = request(f, 400).put("tool_choice", "required").put("temperature", 1.0)
            .put("seed", seed);
        JsonNode c = ok(f.server(), "/v1/chat/completions", body).at("/choices/0");
        if (c.get("finish_reason").asText().equals("tool_calls")) {
          assertValidCalls(f, c.get("message"), null);
          most = Math.max(most, c.at("/message/tool_calls").size());
        }
      }
      assertTrue(most >= 2, f.name() + ": no reply with several calls in 16 seeds");
    }
  }

  @Test
  void streamedCallsReassembleCallByCall() throws Exception {
    int most = 0;
    for (Family f : List.of(llama, qwen, mistral)) {
      // greedy, then sampled (seeded: the stream samples what the whole reply sampled)
      for (int seed = -1; seed < 4; seed++) {
        for (String choice : new String[] {"required", "get_weather"}) {
          for (boolean parallel : new boolean[] {false, true}) {
            ObjectNode body = request(f, 300).put("parallel_tool_calls", parallel);
            if (seed >= 0) {
              body.put("temperature", 1.0).put("seed", seed);
            }
            if (choice.equals("required")) {
              body.put("tool_choice", choice);
            } else {
              body.putObject("tool_choice").put("type", "function").putObject("function")
                  .put("name", choice);
            }
            JsonNode whole = ok(f.server(), "/v1/chat/completions", body).at("/choices/0");
            body.put("stream", true);
            HttpResponse<String> r = post(f.server(), "/v1/chat/completions", body);
            assertEquals(200, r.statusCode(), r.body());
            List<String> names = new ArrayList<>();
            List<StringBuilder> args = new ArrayList<>();
            String finish = null;
            for (String event : r.body().split("\n\n")) {
              if (event.equals("data: [DONE]")) {
                continue;
              }
              JsonNode ch = JSON.readTree(event.substring(6)).at("/choices/0");
              JsonNode d = ch.get("delta");
              for (JsonNode tc : d.path("tool_calls")) {
                int index = tc.get("index").asInt();
                if (tc.has("id")) {
                  assertEquals(names.size(), index, "calls start in order");
                  names.add(tc.at("/function/name").asText());
                  args.add(new StringBuilder());
                }
                args.get(index).append(tc.at("/function/arguments").asText());
              }
              if (!ch.get("finish_reason").isNull()) {
                finish = ch.get("finish_reason").asText();
              }
            }
            assertEquals(whole.get("finish_reason").asText(), finish);
            JsonNode calls = whole.at("/message/tool_calls");
            assertEquals(calls.size(), names.size(), r.body());
            for (int i = 0; i < names.size(); i++) {
              assertEquals(calls.get(i).at("/function/name").asText(), names.get(i));
              assertEquals(calls.get(i).at("/function/arguments").asText(), args.get(i).toString());
            }
            if (!parallel) {
              assertEquals(1, names.size());
            }
            most = Math.max(most, names.size());
          }
        }
      }
    }
    assertTrue(most >= 2, "some streamed reply holds several calls");
  }

  /**
   * transformers' renderings with tools (expected.json): the server's prompt has exactly as
   * many tokens, the client's JSON-text arguments read back into objects as vLLM does; a
   * conversation the template refuses (Llama 3.2: one call per assistant turn) is a 400.
   */
  @Test
  void toolsAndEarlierCallsReachTheTemplateAsTransformersRendersThem() throws Exception {
    JsonNode cases = JSON.readTree(resource("/chat-templates/expected.json"));
    String today = LocalDate.now().format(DateTimeFormatter.ofPattern("dd MMM yyyy", Locale.US));
    int checked = 0;
    for (Family f : List.of(llama, qwen, mistral)) {
      for (JsonNode c : cases) {
        if (!c.get("template").asText().equals(f.template()) || !c.has("tools")) {
          continue;
        }
        ObjectNode body = JSON.createObjectNode().put("model", f.name()).put("max_tokens", 1);
        ArrayNode msgs = body.putArray("messages");
        for (JsonNode m : c.get("messages")) {
          ObjectNode copy = m.deepCopy();
          for (JsonNode call : copy.path("tool_calls")) {
            ObjectNode fn = (ObjectNode) call.get("function");
            fn.put("arguments", fn.get("arguments").toString()); // as OpenAI clients send it
          }
          msgs.add(copy);
        }
        body.set("tools", c.get("tools"));
        if (c.has("error")) {
          HttpResponse<String> r = post(f.server(), "/v1/chat/completions", body);
          assertEquals(400, r.statusCode(), r.body());
          assertTrue(r.body().contains(c.get("error").asText()), r.body());
        } else {
          String rendered = c.get("rendered").asText().replace("24 Nov 2026", today);
          assertEquals(f.tokenizer().encodeTemplated(rendered).length,
              ok(f.server(), "/v1/chat/completions", body).at("/usage/prompt_tokens").asInt(),
              f.name() + " " + c.get("messages"));
        }
        checked++;
      }
    }
    assertEquals(12, checked);
  }

  @Test
  void autoReplyIsContentOrValidCalls() throws Exception {
    for (Family f : List.of(llama, qwen, mistral)) {
      for (int seed = 0; seed < 3; seed++) {
        ObjectNode body = request(f, 40).put("temperature", 1.0).put("seed", seed)
            .put("logprobs", true);
        JsonNode c = ok(f.server(), "/v1/chat/completions", body).at("/choices/0");
        if (c.at("/message").has("tool_calls")) {
          assertValidCalls(f, c.get("message"), null);
        } else {
          assertEquals(raw(c), c.at("/message/content").asText());
        }
      }
    }
  }
}
