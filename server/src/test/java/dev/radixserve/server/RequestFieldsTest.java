package dev.radixserve.server;

import static dev.radixserve.server.HttpFrontDoorTest.assertError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.server.RawHttp.Response;
import dev.radixserve.server.api.RequestFields;
import dev.radixserve.server.api.RequestFields.Handling;
import dev.radixserve.server.config.ServerConfig;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every request field that the official OpenAI Python SDK's {@code CompletionCreateParams} and
 * vLLM's request models define is in exactly one group of {@link RequestFields} (honoured,
 * refused, ignored), docs/api.md's table says the same, and over the real server each refused
 * field with a value it cannot honour is a 400 naming it, while its neutral value and every
 * ignored field are served. The field lists are {@code request-fields/request-fields.json}, which
 * {@code make_request_fields.py} beside it writes; with the SDK installed ({@code
 * RADIXSERVE_SDK_PYTHON}) the script is run again and must give the committed file.
 */
class RequestFieldsTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String MODEL = ServerConfig.EMBEDDED_MODEL_NAME;

  /** A value of each refused field that asks for what the server does not do. */
  private static final Map<String, String> REFUSED_EXAMPLES = new LinkedHashMap<>();

  static {
    String[] both = {
        "use_beam_search", "true", "length_penalty", "0.5",
        "watermarking", "true", "include_stop_str_in_output", "true",
        "skip_special_tokens", "false", "spaces_between_special_tokens", "false",
        "truncate_prompt_tokens", "8", "truncation_side", "\"left\"", "prompt_logprobs", "1",
        "logprob_token_ids", "[1]", "request_id", "\"r1\"", "session_id", "\"s1\"",
        "return_tokens_as_token_ids", "true", "return_token_ids", "true",
        "return_token_offsets", "true", "return_prompt_text", "true",
        "routed_experts_prompt_start", "1", "kv_transfer_params", "{\"do_remote_decode\":true}",
        "ec_transfer_params", "{}", "vllm_xargs", "{\"a\":1}",
        "repetition_detection", "{\"max_pattern_size\":4}", "stream_interval", "4",
        "thinking_token_budget", "16"};
    for (int i = 0; i < both.length; i += 2) {
      REFUSED_EXAMPLES.put(both[i], both[i + 1]);
    }
  }

  private static final Map<String, String> COMPLETIONS_EXAMPLES = Map.of(
      "suffix", "\"the end\"", "best_of", "2", "prompt_embeds", "\"AAAA\"",
      "add_special_tokens", "false");
  private static final Map<String, String> CHAT_EXAMPLES = Map.ofEntries(
      Map.entry("echo", "true"),
      Map.entry("add_generation_prompt", "false"), Map.entry("continue_final_message", "true"),
      Map.entry("add_special_tokens", "true"), Map.entry("documents", "[{\"text\":\"d\"}]"),
      Map.entry("chat_template", "\"{{ messages }}\""), Map.entry("media_io_kwargs", "{}"),
      Map.entry("mm_processor_kwargs", "{}"),
      Map.entry("audio", "{\"voice\":\"alloy\",\"format\":\"wav\"}"),
      Map.entry("modalities", "[\"text\",\"audio\"]"),
      Map.entry("functions", "[{\"name\":\"f\",\"parameters\":{}}]"),
      Map.entry("function_call", "\"auto\""),
      Map.entry("prediction", "{\"type\":\"content\",\"content\":\"x\"}"),
      Map.entry("verbosity", "\"low\""), Map.entry("web_search_options", "{}"),
      Map.entry("moderation", "{}"));

  /** A value of each ignored field as clients send it. */
  private static final Map<String, String> IGNORED_EXAMPLES = Map.of(
      "store", "true", "metadata", "{\"k\":\"v\"}", "service_tier", "\"auto\"",
      "safety_identifier", "\"u-1\"", "prompt_cache_key", "\"k\"",
      "prompt_cache_retention", "\"24h\"", "prompt_cache_options", "{\"ttl\":\"24h\"}",
      "return_mm_kwargs", "false");

  private static RadixServer server;

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(64).build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
  }

  private static JsonNode fixture() throws Exception {
    try (InputStream in = RequestFieldsTest.class.getResourceAsStream(
        "/request-fields/request-fields.json")) {
      return JSON.readTree(in);
    }
  }

  private static Set<String> names(JsonNode list) {
    Set<String> out = new TreeSet<>();
    list.forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void everySdkAndVllmFieldIsInExactlyOneGroup() throws Exception {
    JsonNode f = fixture();
    for (boolean chat : new boolean[] {false, true}) {
      String endpoint = chat ? "chat" : "completions";
      Set<String> fields = names(f.at("/openai/" + endpoint));
      fields.addAll(names(f.at("/vllm/" + endpoint)));
      assertTrue(fields.size() > 40, endpoint + ": " + fields);
      Map<String, RequestFields.Field> table = RequestFields.of(chat);
      List<String> missing = new ArrayList<>();
      for (String name : fields) {
        if (!table.containsKey(name)) {
          missing.add(name);
        }
      }
      assertEquals(List.of(), missing, endpoint + ": fields in no group");
    }
  }

  @Test
  void theCommittedFieldListsAreWhatTheSdkDefines() throws Exception {
    String python = System.getenv("RADIXSERVE_SDK_PYTHON");
    if (python == null || python.isBlank()) {
      if (System.getenv("RADIXSERVE_SDK_TESTS") != null) {
        throw new AssertionError("RADIXSERVE_SDK_TESTS is set but RADIXSERVE_SDK_PYTHON is not");
      }
      Assumptions.abort("RADIXSERVE_SDK_PYTHON is not set (eval \"$(bash .ci/install-sdks.sh)\")");
    }
    Path script = Path.of("src/test/resources/request-fields/make_request_fields.py");
    Path out = Files.createTempFile("fields", ".json");
    Process p = new ProcessBuilder(python, script.toAbsolutePath().toString())
        .redirectErrorStream(false).redirectOutput(out.toFile()).start();
    assertTrue(p.waitFor(2, TimeUnit.MINUTES));
    assertEquals(0, p.exitValue());
    assertEquals(fixture(), JSON.readTree(out.toFile()));
  }

  /** The API reference's table between its markers: field → (completions group, chat group). */
  @Test
  void theDocumentedTableIsTheServersTable() throws Exception {
    String page = Files.readString(Path.of("..", "docs", "api.md"), StandardCharsets.UTF_8);
    int from = page.indexOf("<!-- request-fields -->");
    int to = page.indexOf("<!-- /request-fields -->");
    assertTrue(from >= 0 && to > from, "docs/api.md has no request-fields table");
    Map<String, String> documented = new TreeMap<>();
    for (String line : page.substring(from, to).split("\n")) {
      String[] cells = line.split("\\|");
      if (cells.length < 5 || !cells[1].trim().startsWith("`")) {
        continue;
      }
      String name = cells[1].trim().replace("`", "");
      String previous = documented.put(name, cells[2].trim() + "/" + cells[3].trim());
      assertEquals(null, previous, name + " is listed twice");
    }
    Map<String, String> expected = new TreeMap<>();
    Set<String> all = new TreeSet<>(RequestFields.of(false).keySet());
    all.addAll(RequestFields.of(true).keySet());
    for (String name : all) {
      expected.put(name, cell(RequestFields.of(false).get(name)) + "/"
          + cell(RequestFields.of(true).get(name)));
    }
    assertEquals(expected, documented);
  }

  private static String cell(RequestFields.Field f) {
    return f == null ? "—" : f.handling().name().toLowerCase();
  }

  @Test
  void refusedFieldsAre400NamingThemAndIgnoredOnesAreServed() {
    for (boolean chat : new boolean[] {false, true}) {
      Map<String, String> refused = new TreeMap<>(REFUSED_EXAMPLES);
      refused.putAll(chat ? CHAT_EXAMPLES : COMPLETIONS_EXAMPLES);
      Set<String> tableRefused = new TreeSet<>();
      Set<String> tableIgnored = new TreeSet<>();
      RequestFields.of(chat).values().forEach(f -> {
        if (f.handling() == Handling.REFUSED) {
          tableRefused.add(f.name());
        } else if (f.handling() == Handling.IGNORED) {
          tableIgnored.add(f.name());
        }
      });
      assertEquals(tableRefused, refused.keySet(), "an example for each refused field");
      for (var e : refused.entrySet()) {
        Response r = send(chat, "\"" + e.getKey() + "\":" + e.getValue());
        assertError(400, r);
        assertEquals(e.getKey(), r.json().at("/error/param").asText(null), r.text());
        assertTrue(r.json().at("/error/message").asText().contains(e.getKey()), r.text());
        // null is the field's absence
        Response ok = send(chat, "\"" + e.getKey() + "\":null");
        assertEquals(200, ok.status(), e.getKey() + ": " + ok.text());
      }
      Set<String> ignored = new TreeSet<>(IGNORED_EXAMPLES.keySet());
      ignored.retainAll(RequestFields.of(chat).keySet());
      assertEquals(tableIgnored, ignored);
      for (String name : ignored) {
        Response r = send(chat, "\"" + name + "\":" + IGNORED_EXAMPLES.get(name));
        assertEquals(200, r.status(), name + ": " + r.text());
      }
    }
  }

  @Test
  void neutralValuesOfRefusedFieldsAreServed() {
    for (String neutral : new String[] {"\"best_of\":1", "\"suffix\":\"\"", "\"use_beam_search\":false", "\"skip_special_tokens\":true",
        "\"best_of\":2,\"n\":2", "\"add_special_tokens\":true"}) {
      assertEquals(200, send(false, neutral).status(), neutral);
    }
    for (String neutral : new String[] {"\"modalities\":[\"text\"]", "\"echo\":false",
        "\"add_generation_prompt\":true", "\"add_special_tokens\":false"}) {
      assertEquals(200, send(true, neutral).status(), neutral);
    }
    assertError(400, send(false, "\"best_of\":3,\"n\":2"));
  }

  @Test
  void aToolMessageWithoutToolCallIdIs400NamingIt() {
    String call = "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\","
        + "\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}";
    Response r = post("/v1/chat/completions", "{\"model\":\"" + MODEL + "\",\"max_tokens\":1,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}," + call
        + ",{\"role\":\"tool\",\"content\":\"12 C\"}]}");
    assertError(400, r);
    assertEquals("messages[2].tool_call_id", r.json().at("/error/param").asText(null), r.text());
    Response ok = post("/v1/chat/completions", "{\"model\":\"" + MODEL + "\",\"max_tokens\":1,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}," + call
        + ",{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"12 C\"}]}");
    assertEquals(200, ok.status(), ok.text());
  }

  private static Response send(boolean chat, String field) {
    String input = chat ? "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]"
        : "\"prompt\":\"hi\"";
    return post(chat ? "/v1/chat/completions" : "/v1/completions",
        "{\"model\":\"" + MODEL + "\",\"max_tokens\":1," + input + "," + field + "}");
  }

  private static Response post(String path, String body) {
    return RawHttp.exchange(server.port(), RawHttp.post(path, body, "Connection: close"))
        .getFirst();
  }
}
