package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.constraint.ConstraintCompiler;
import dev.radixserve.model.constraint.ConstraintException;
import dev.radixserve.model.constraint.ReasoningPrefix;
import dev.radixserve.model.constraint.TokenConstraint;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;

/**
 * Reads a request's structured-output fields into one {@link TokenConstraint}: OpenAI's {@code
 * response_format} ({@code text}, {@code json_object}, {@code json_schema}), vLLM's older
 * {@code guided_json} / {@code guided_regex} / {@code guided_choice} and its newer {@code
 * structured_outputs} object ({@code json}, {@code regex}, {@code choice}, {@code json_object}),
 * and the forced tool call of {@link Tools}. At most one may be given. What the compiler refuses
 * is a 400 naming the field and the keyword.
 */
final class ConstraintReader {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final Tokenizer tokenizer;
  private final java.util.Set<String> markers;
  private volatile ConstraintCompiler compiler; // built on first use: the vocabulary trie costs

  /** @param markers special tokens a forced tool call writes ({@link ToolCallSyntax#markers}) */
  ConstraintReader(Tokenizer tokenizer, java.util.Set<String> markers) {
    this.tokenizer = tokenizer;
    this.markers = markers;
  }

  /** Null when the request asks for free text. */
  TokenConstraint read(JsonNode body, Tools tools) {
    return read(body, tools, ReasoningPrefix.NONE);
  }

  /**
   * Null when the request asks for free text.
   *
   * @param reasoning what the reply may say before the constrained output (its reasoning)
   */
  TokenConstraint read(JsonNode body, Tools tools, ReasoningPrefix reasoning) {
    return readConstraint(body, tools, reasoning);
  }

  private TokenConstraint readConstraint(JsonNode body, Tools tools, ReasoningPrefix r) {
    List<String> given = new ArrayList<>();
    for (String f : List.of("response_format", "guided_json", "guided_regex", "guided_choice",
        "structured_outputs")) {
      JsonNode v = body.get(f);
      if (v != null && !v.isNull() && !(f.equals("response_format")
          && "text".equals(v.path("type").asText()))) {
        given.add(f);
      }
    }
    if (tools != null && tools.forced()) {
      given.add("tool_choice");
    }
    if (given.isEmpty()) {
      return null;
    }
    if (given.size() > 1) {
      throw ApiException.badRequest(given.get(1), "only one structured-output constraint may be"
          + " given, got " + String.join(" and ", given));
    }
    String field = given.getFirst();
    return switch (field) {
      case "response_format" -> responseFormat(body.get(field), r);
      case "guided_json" -> compile(field, r, c -> c.jsonSchema(schemaOf(body.get(field), field)));
      case "guided_regex" -> compile(field, r, c -> c.regex(text(body.get(field), field)));
      case "guided_choice" -> compile(field, r, c -> c.choice(choices(body.get(field), field)));
      case "structured_outputs" -> structuredOutputs(body.get(field), r);
      default -> compile("tools", r, c -> c.toolCalls(tools.callable(), tools.syntax().layout(),
          tools.parallel()));
    };
  }

  private TokenConstraint responseFormat(JsonNode rf, ReasoningPrefix r) {
    String type = rf.path("type").asText("");
    return switch (type) {
      case "json_object" -> compile("response_format", r, ConstraintCompiler::jsonObject);
      case "json_schema" -> {
        JsonNode js = rf.get("json_schema");
        if (js == null || !js.isObject()) {
          throw ApiException.badRequest("response_format", "response_format.json_schema must be"
              + " an object with `name` and `schema`");
        }
        JsonNode schema = js.get("schema");
        yield schema == null ? compile("response_format", r, ConstraintCompiler::jsonObject)
            : compile("response_format", r, c -> c.jsonSchema(schemaOf(schema, "response_format")));
      }
      default -> throw ApiException.badRequest("response_format", "response_format.type must be"
          + " text, json_object or json_schema, got `" + type + "`");
    };
  }

  private TokenConstraint structuredOutputs(JsonNode so, ReasoningPrefix r) {
    if (!so.isObject()) {
      throw ApiException.badRequest("structured_outputs", "structured_outputs must be an object");
    }
    String f = "structured_outputs";
    for (Iterator<String> it = so.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!List.of("json", "regex", "choice", "json_object").contains(k)) {
        throw ApiException.badRequest(f, "unsupported structured_outputs field `" + k
            + "` (supported: json, regex, choice, json_object)");
      }
    }
    if (so.size() != 1) {
      throw ApiException.badRequest(f, "structured_outputs must hold exactly one of json, regex,"
          + " choice, json_object");
    }
    if (so.has("json")) {
      return compile(f, r, c -> c.jsonSchema(schemaOf(so.get("json"), f)));
    }
    if (so.has("regex")) {
      return compile(f, r, c -> c.regex(text(so.get("regex"), f)));
    }
    if (so.has("choice")) {
      return compile(f, r, c -> c.choice(choices(so.get("choice"), f)));
    }
    return compile(f, r, ConstraintCompiler::jsonObject);
  }

  private TokenConstraint compile(String field, ReasoningPrefix r,
      Function<ConstraintCompiler, TokenConstraint> how) {
    try {
      return how.apply(compiler().after(r));
    } catch (ConstraintException e) {
      throw ApiException.badRequest(field, field + ": " + e.getMessage());
    }
  }

  private ConstraintCompiler compiler() {
    ConstraintCompiler c = compiler;
    if (c == null) {
      synchronized (this) {
        if (compiler == null) {
          compiler = new ConstraintCompiler(tokenizer, markers);
        }
        c = compiler;
      }
    }
    return c;
  }

  /** A schema given as an object, or (vLLM allows it) as a JSON string. */
  private static JsonNode schemaOf(JsonNode v, String field) {
    if (v.isTextual()) {
      try {
        v = JSON.readTree(v.asText());
      } catch (Exception e) {
        throw ApiException.badRequest(field, field + " is not valid JSON: " + e.getMessage());
      }
    }
    if (!v.isObject() && !v.isBoolean()) {
      throw ApiException.badRequest(field, field + " must be a JSON Schema object");
    }
    return v;
  }

  private static String text(JsonNode v, String field) {
    if (!v.isTextual()) {
      throw ApiException.badRequest(field, field + " must be a string");
    }
    return v.asText();
  }

  private static List<String> choices(JsonNode v, String field) {
    if (!v.isArray() || v.isEmpty()) {
      throw ApiException.badRequest(field, field + " must be a non-empty list of strings");
    }
    List<String> out = new ArrayList<>();
    for (JsonNode c : v) {
      out.add(text(c, field));
    }
    return out;
  }
}
