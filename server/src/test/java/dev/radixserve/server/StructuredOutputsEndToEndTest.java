package dev.radixserve.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonEOFException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import dev.radixserve.server.config.ServerConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Structured outputs end to end: the embedded random-weight model behind the real server writes
 * what the constraint allows, and an independent JSON Schema validator (networknt) checks it.
 */
class StructuredOutputsEndToEndTest {

  static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  static final String MODEL = "radixserve-embedded-gpt2";
  private static RadixServer server;
  private static RadixServer uncached;

  /** Schemas whose every output is bounded, so each must end with stop within max_tokens. */
  static final List<String> SCHEMAS = List.of(
      "{'type':'object','properties':{'ok':{'type':'boolean'}},'required':['ok'],'additionalProperties':false}",
      "{'type':'object','properties':{'name':{'type':'string','maxLength':12},'age':{'type':'integer','minimum':0,'maximum':130}},'required':['name','age'],'additionalProperties':false}",
      "{'type':'object','properties':{'color':{'enum':['red','green','blue']}},'required':['color']}",
      "{'type':'object','properties':{'v':{'const':'fixed'},'n':{'type':'null'}},'required':['v','n']}",
      "{'type':'array','items':{'type':'integer','minimum':-50,'maximum':50},'minItems':1,'maxItems':4}",
      "{'type':'object','properties':{'tags':{'type':'array','items':{'type':'string','maxLength':6},'maxItems':3}},'required':['tags']}",
      "{'type':'object','properties':{'a':{'type':'object','properties':{'b':{'type':'object','properties':{'c':{'type':'boolean'}},'required':['c']}},'required':['b']}},'required':['a']}",
      "{'type':'object','properties':{'id':{'type':'string','format':'uuid'}},'required':['id']}",
      "{'type':'object','properties':{'day':{'type':'string','format':'date'}},'required':['day']}",
      "{'type':'object','properties':{'zip':{'type':'string','pattern':'^[0-9]{5}$'},'code':{'type':'string','pattern':'^[A-Z]{2}-[a-z]{1,3}$'}},'required':['zip','code']}",
      "{'anyOf':[{'type':'integer','minimum':0,'maximum':9},{'type':'string','maxLength':3},{'type':'boolean'}]}",
      "{'type':'object','properties':{'x':{'type':['integer','null'],'maximum':1000,'minimum':-1000}},'required':['x']}",
      "{'type':'object','properties':{'p':{'$ref':'#/$defs/point'},'q':{'$ref':'#/$defs/point'}},'required':['p','q'],'$defs':{'point':{'type':'object','properties':{'x':{'type':'integer','minimum':0,'maximum':99},'y':{'type':'integer','minimum':0,'maximum':99}},'required':['x','y'],'additionalProperties':false}}}",
      "{'type':'object','properties':{'opt1':{'type':'boolean'},'req':{'type':'integer','minimum':1,'maximum':3},'opt2':{'enum':[1,2,'three']}},'required':['req']}",
      "{'type':'object','properties':{'items':{'type':'array','items':{'type':'object','properties':{'sku':{'type':'string','pattern':'^[A-Z]{3}$'},'qty':{'type':'integer','minimum':1,'maximum':9}},'required':['sku','qty']},'minItems':1,'maxItems':2}},'required':['items']}",
      "{'enum':['yes','no',true,null,42]}",
      "{'type':'object','properties':{'ip':{'type':'string','format':'ipv4'}},'required':['ip']}",
      "{'type':'object','properties':{'s':{'type':'string','minLength':2,'maxLength':4}},'required':['s'],'additionalProperties':false}",
      "{'$defs':{'node':{'type':'object','properties':{'v':{'type':'integer','minimum':0,'maximum':9},'next':{'anyOf':[{'$ref':'#/$defs/node'},{'type':'null'}]}},'required':['v','next']}},'$ref':'#/$defs/node'}",
      "{'type':'object','properties':{'when':{'type':'string','format':'time'}},'required':['when']}",
      "{'type':'object','properties':{'grid':{'type':'array','items':{'type':'array','items':{'type':'integer','minimum':0,'maximum':1},'minItems':2,'maxItems':2},'minItems':2,'maxItems':2}},'required':['grid']}",
      "{'oneOf':[{'type':'object','properties':{'kind':{'const':'circle'},'r':{'type':'integer','minimum':1,'maximum':9}},'required':['kind','r']},{'type':'object','properties':{'kind':{'const':'square'},'side':{'type':'integer','minimum':1,'maximum':9}},'required':['kind','side']}]}",
      "{'type':'object','properties':{'t':{'type':'integer','exclusiveMinimum':10,'exclusiveMaximum':20}},'required':['t']}");

  @BeforeAll
  static void start() {
    server = RadixServer.start(LocalServers.builder(512).build());
    ServerConfig.Builder b = LocalServers.builder(512);
    b.prefixCaching = false;
    uncached = RadixServer.start(b.build());
  }

  @AfterAll
  static void stop() {
    server.shutdown(Duration.ofSeconds(5));
    uncached.shutdown(Duration.ofSeconds(5));
  }

  static JsonNode schema(String s) {
    try {
      return JSON.readTree(s.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(e);
    }
  }

  static HttpResponse<String> post(RadixServer s, String path, JsonNode body) {
    try {
      return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.port() + path))
          .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
          HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  static JsonNode ok(RadixServer s, String path, JsonNode body) {
    HttpResponse<String> r = post(s, path, body);
    assertEquals(200, r.statusCode(), r.body());
    try {
      return JSON.readTree(r.body());
    } catch (Exception e) {
      throw new RuntimeException(e);
    }
  }

  static ObjectNode chat(String user, int maxTokens) {
    ObjectNode b = JSON.createObjectNode().put("model", MODEL).put("max_tokens", maxTokens);
    b.putArray("messages").addObject().put("role", "user").put("content", user);
    return b;
  }

  static Set<ValidationMessage> validate(JsonNode schema, JsonNode value) {
    JsonSchema s = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012).getSchema(schema,
        SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build());
    return s.validate(value);
  }

  @Test
  void everyOutputOfEverySchemaParsesAndValidates() {
    List<CompletableFuture<JsonNode>> replies = new ArrayList<>();
    for (int i = 0; i < SCHEMAS.size(); i++) {
      ObjectNode body = chat("Answer in JSON, please. Case " + i, 400).put("n", 2)
          .put("temperature", i % 2 == 0 ? 0.0 : 1.0).put("seed", i);
      ObjectNode rf = body.putObject("response_format").put("type", "json_schema");
      rf.putObject("json_schema").put("name", "case" + i).put("strict", true)
          .set("schema", schema(SCHEMAS.get(i)));
      replies.add(CompletableFuture.supplyAsync(() -> ok(server, "/v1/chat/completions", body)));
    }
    for (int i = 0; i < SCHEMAS.size(); i++) {
      JsonNode r = replies.get(i).join();
      for (JsonNode c : r.get("choices")) {
        String text = c.at("/message/content").asText();
        assertEquals("stop", c.get("finish_reason").asText(), "case " + i + ": " + text);
        JsonNode value;
        try {
          value = JSON.readTree(text);
        } catch (Exception e) {
          throw new AssertionError("case " + i + " is not JSON: " + text, e);
        }
        Set<ValidationMessage> errors = validate(schema(SCHEMAS.get(i)), value);
        assertTrue(errors.isEmpty(), "case " + i + ": " + text + " -> " + errors);
      }
    }
  }

  @Test
  void jsonObjectIsAnObjectCutOnlyByLength() throws Exception {
    for (String field : List.of("response_format", "structured_outputs")) {
      ObjectNode body = chat("an object", 24).put("temperature", 1.0).put("seed", 7);
      if (field.equals("response_format")) {
        body.putObject(field).put("type", "json_object");
      } else {
        body.putObject(field).put("json_object", true);
      }
      JsonNode c = ok(server, "/v1/chat/completions", body).at("/choices/0");
      String text = c.at("/message/content").asText();
      assertTrue(text.startsWith("{"), text);
      if (c.get("finish_reason").asText().equals("stop")) {
        assertTrue(JSON.readTree(text).isObject(), text);
      } else {
        assertEquals("length", c.get("finish_reason").asText());
        assertValidPrefix(text);
      }
    }
  }

  /** Jackson reads the whole text and fails only because it ends early. */
  static void assertValidPrefix(String text) throws Exception {
    try (JsonParser p = JSON.getFactory().createParser(text)) {
      while (true) {
        JsonToken t = p.nextToken();
        if (t == null) {
          return; // a complete document
        }
        if (t == JsonToken.VALUE_STRING) {
          p.getText();
        }
      }
    } catch (JsonEOFException expected) {
      // the output was cut
    }
  }

  @Test
  void regexAndChoiceOnCompletions() {
    for (String field : List.of("guided_regex", "structured_outputs")) {
      ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", "Code:")
          .put("max_tokens", 20).put("n", 4).put("temperature", 1.0).put("seed", 3);
      String regex = "[A-Z]{3}-\\d{2,4}";
      if (field.equals("guided_regex")) {
        body.put(field, regex);
      } else {
        body.putObject(field).put("regex", regex);
      }
      for (JsonNode c : ok(server, "/v1/completions", body).get("choices")) {
        String text = c.get("text").asText();
        assertTrue(text.matches(regex), text);
        // the regex may go on after 2 digits: the model ended it with EOS or at 4 digits
        assertEquals("stop", c.get("finish_reason").asText(), text);
      }
    }
    List<String> options = List.of("alpha", "beta gamma", "\u00e9t\u00e9 \ud83d\ude00");
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", "Pick:")
        .put("max_tokens", 20).put("n", 6).put("temperature", 1.0).put("seed", 5);
    options.forEach(body.putArray("guided_choice")::add);
    for (JsonNode c : ok(server, "/v1/completions", body).get("choices")) {
      assertTrue(options.contains(c.get("text").asText()), c.toString());
      assertEquals("stop", c.get("finish_reason").asText());
    }
  }

  @Test
  void logprobsListOnlyTokensTheMaskAllows() {
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", "Pick:")
        .put("max_tokens", 5).put("logprobs", 5).put("temperature", 0.0);
    body.putArray("guided_choice").add("yes").add("no");
    JsonNode c = ok(server, "/v1/completions", body).at("/choices/0");
    assertTrue(List.of("yes", "no").contains(c.get("text").asText()), c.toString());
    JsonNode tops = c.at("/logprobs/top_logprobs");
    assertTrue(tops.size() > 0, c.toString());
    String text = c.get("text").asText();
    int offset = 0;
    for (int i = 0; i < tops.size(); i++) {
      String before = text.substring(0, offset);
      tops.get(i).fields().forEachRemaining(e -> {
        assertTrue(e.getValue().isNumber(), e.toString());
        String candidate = before + e.getKey();
        assertTrue("yes".startsWith(candidate) || "no".startsWith(candidate), candidate);
      });
      offset += c.at("/logprobs/tokens/" + i).asText().length();
    }
  }

  @Test
  void guidedJsonAndStreamingMatchNonStreaming() throws Exception {
    JsonNode schema = schema(SCHEMAS.get(1));
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("prompt", "Person:")
        .put("max_tokens", 100).put("temperature", 0.0);
    body.put("guided_json", schema.toString()); // vLLM also takes the schema as a string
    JsonNode whole = ok(server, "/v1/completions", body).at("/choices/0");
    assertTrue(validate(schema, JSON.readTree(whole.get("text").asText())).isEmpty());
    body.put("stream", true);
    HttpResponse<String> r = post(server, "/v1/completions", body);
    StringBuilder text = new StringBuilder();
    String finish = null;
    for (String event : r.body().split("\n\n")) {
      if (!event.equals("data: [DONE]")) {
        JsonNode c = JSON.readTree(event.substring(6)).at("/choices/0");
        text.append(c.get("text").asText());
        finish = c.get("finish_reason").isNull() ? finish : c.get("finish_reason").asText();
      }
    }
    assertEquals(whole.get("text").asText(), text.toString());
    assertEquals("stop", finish);
  }

  @Test
  void maxTokensCutsAConstrainedOutputWithLength() {
    ObjectNode body = chat("person", 3).put("temperature", 0.0);
    body.putObject("response_format").put("type", "json_schema").putObject("json_schema")
        .put("name", "p").set("schema", schema(SCHEMAS.get(1)));
    JsonNode c = ok(server, "/v1/chat/completions", body).at("/choices/0");
    assertEquals("length", c.get("finish_reason").asText());
    assertEquals(3, ok(server, "/v1/chat/completions", body).at("/usage/completion_tokens").asInt());
  }

  @Test
  void unsupportedOrConflictingConstraintsAre400NamingTheKeyword() {
    for (String[] bad : new String[][] {
        {"{'type':'object','not':{'type':'null'}}", "`not`"},
        {"{'type':'object','patternProperties':{'^a':{}}}", "`patternProperties`"},
        {"{'type':'array','uniqueItems':true}", "`uniqueItems`"},
        {"{'type':'string','format':'ipv6'}", "format `ipv6`"},
        {"{'type':'string','pattern':'^(?=a)b$'}", "lookaround"},
        {"{'type':'number','multipleOf':3}", "`multipleOf`"},
        {"{'$ref':'#/$defs/missing'}", "points nowhere"}}) {
      ObjectNode body = chat("x", 5);
      body.putObject("response_format").put("type", "json_schema").putObject("json_schema")
          .put("name", "bad").set("schema", schema(bad[0]));
      HttpResponse<String> r = post(server, "/v1/chat/completions", body);
      assertEquals(400, r.statusCode(), r.body());
      assertTrue(r.body().contains(bad[1].replace("`", "\\u0060")) || r.body().contains(bad[1]),
          bad[0] + " -> " + r.body());
      assertTrue(r.body().contains("\"param\":\"response_format\""), r.body());
    }
    ObjectNode two = chat("x", 5).put("guided_regex", "a+");
    two.putObject("response_format").put("type", "json_object");
    assertEquals(400, post(server, "/v1/chat/completions", two).statusCode());
    ObjectNode type = chat("x", 5);
    type.putObject("response_format").put("type", "yaml");
    assertEquals(400, post(server, "/v1/chat/completions", type).statusCode());
    ObjectNode grammar = chat("x", 5);
    grammar.putObject("structured_outputs").put("grammar", "root ::= 'a'");
    HttpResponse<String> g = post(server, "/v1/chat/completions", grammar);
    assertEquals(400, g.statusCode());
    assertTrue(g.body().contains("grammar"), g.body());
    ObjectNode exponential = JSON.createObjectNode().put("model", MODEL).put("prompt", "x")
        .put("max_tokens", 5).put("guided_regex", "(a|b)*a(a|b){20}");
    HttpResponse<String> e = post(server, "/v1/completions", exponential);
    assertEquals(400, e.statusCode(), e.body());
    assertTrue(e.body().contains("too complex") && e.body().contains("guided_regex"), e.body());
    // the server still serves
    assertEquals("stop", ok(server, "/v1/completions", JSON.createObjectNode().put("model", MODEL)
        .put("prompt", "x").put("max_tokens", 5).put("guided_regex", "ok"))
        .at("/choices/0/finish_reason").asText());
  }

  @Test
  void cacheOnEqualsCacheOffUnderAConstraint() {
    List<ObjectNode> bodies = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      ObjectNode body = chat("A shared system-like preamble that both requests start with, then " + i,
          60).put("temperature", 0.0);
      body.putObject("response_format").put("type", "json_schema").putObject("json_schema")
          .put("name", "c").set("schema", schema(SCHEMAS.get(i % 3 == 0 ? 1 : 14)));
      bodies.add(body);
    }
    for (int round = 0; round < 2; round++) { // the second round hits the cache
      List<CompletableFuture<String>> on = new ArrayList<>();
      List<CompletableFuture<String>> off = new ArrayList<>();
      for (ObjectNode b : bodies) {
        on.add(CompletableFuture.supplyAsync(() -> ok(server, "/v1/chat/completions", b)
            .at("/choices/0/message/content").asText()));
        off.add(CompletableFuture.supplyAsync(() -> ok(uncached, "/v1/chat/completions", b)
            .at("/choices/0/message/content").asText()));
      }
      for (int i = 0; i < bodies.size(); i++) {
        assertEquals(off.get(i).join(), on.get(i).join(), "request " + i + ", round " + round);
      }
    }
  }

  @Test
  void preemptedConstrainedSequencesResumeWhereTheyWere() throws Exception {
    JsonNode thirty = schema("{'type':'array','items':{'type':'integer','minimum':100,"
        + "'maximum':999},'minItems':30,'maxItems':30}");
    List<ObjectNode> bodies = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      ObjectNode b = JSON.createObjectNode().put("model", MODEL).put("max_tokens", 200)
          .put("temperature", 0.0).put("prompt", ("Numbers, list " + i + ". ").repeat(12));
      b.set("guided_json", thirty);
      bodies.add(b);
    }
    List<String> expected = completeAll(uncached, bodies);
    // 8 sequences of ~60 prompt + ~90 output tokens need ~80 blocks: a 24-block pool preempts
    RadixServer tiny = RadixServer.start(LocalServers.builder(24).build());
    try {
      assertEquals(expected, completeAll(tiny, bodies));
      HttpResponse<String> m = CLIENT.send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + tiny.port() + "/metrics")).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      double preemptions = m.body().lines().filter(l -> l.startsWith("radixserve_preemptions_total "))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.indexOf(' ') + 1))).findFirst()
          .orElseThrow();
      assertTrue(preemptions > 0, "no preemption happened");
    } finally {
      tiny.shutdown(Duration.ofSeconds(5));
    }
    for (String text : expected) {
      assertTrue(validate(thirty, JSON.readTree(text)).isEmpty(), text);
    }
  }

  private static List<String> completeAll(RadixServer s, List<ObjectNode> bodies) {
    List<CompletableFuture<String>> fs = new ArrayList<>();
    for (ObjectNode b : bodies) {
      fs.add(CompletableFuture.supplyAsync(() -> {
        JsonNode c = ok(s, "/v1/completions", b).at("/choices/0");
        assertEquals("stop", c.get("finish_reason").asText(), c.toString());
        return c.get("text").asText();
      }));
    }
    return fs.stream().map(CompletableFuture::join).toList();
  }
}
