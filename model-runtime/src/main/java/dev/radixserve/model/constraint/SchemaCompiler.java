package dev.radixserve.model.constraint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dk.brics.automaton.Automaton;
import dk.brics.automaton.BasicAutomata;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON Schema as the byte automaton of the JSON texts that satisfy it (in {@link JsonBytes}'
 * layout). The subset: OpenAI's strict mode and a little more, see {@link #KEYWORDS}; any other
 * keyword is refused by name. Objects list their properties in schema order, each required one
 * always and each optional one or not; extra properties are never written (valid whatever
 * {@code additionalProperties} says).
 *
 * <p>JSON nests without bound, and an automaton is finite: free-form values (no schema, {@code
 * json_object}) nest at most {@link #FREE_DEPTH} levels, and a recursive {@code $ref} is
 * expanded at most {@link #REF_DEPTH} times on one path, after which that branch has no words (an
 * optional field or an empty array ends the recursion). That is the bound this design takes
 * instead of a pushdown automaton.
 */
final class SchemaCompiler {

  static final int FREE_DEPTH = 4;
  static final int REF_DEPTH = 3;

  private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default",
      "examples", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly", "$defs",
      "definitions", "strict", "discriminator", "nullable");
  /** Every keyword this compiler reads; a schema with another is refused. */
  static final Set<String> KEYWORDS = Set.of("type", "enum", "const", "anyOf", "oneOf", "allOf",
      "$ref", "properties", "required", "additionalProperties", "items", "minItems", "maxItems",
      "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
      "exclusiveMaximum");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final JsonNode root;
  private final Map<String, Integer> refsOnPath = new HashMap<>();

  private SchemaCompiler(JsonNode root) {
    this.root = root;
  }

  static Automaton compile(JsonNode schema) {
    Automaton a = new SchemaCompiler(schema).value(schema, "#");
    Dfa.minimize(a);
    if (a.isEmpty()) {
      throw new ConstraintException("$ref", "the schema admits no JSON value within the bounds"
          + " of this server (recursive $ref expanded " + REF_DEPTH + " levels)");
    }
    return a;
  }

  private Automaton value(JsonNode s, String path) {
    if (s.isBoolean()) {
      return s.asBoolean() ? JsonBytes.anyValue(FREE_DEPTH) : Automaton.makeEmpty();
    }
    if (!s.isObject()) {
      throw new ConstraintException("schema", "a schema must be an object or a boolean at " + path);
    }
    for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!KEYWORDS.contains(k) && !ANNOTATIONS.contains(k)) {
        throw ConstraintException.unsupported(k, path);
      }
    }
    if (s.has("$ref")) {
      return ref(s.get("$ref").asText(), path);
    }
    if (s.has("const")) {
      return literal(s.get("const"));
    }
    if (s.has("enum")) {
      JsonNode e = s.get("enum");
      if (!e.isArray() || e.isEmpty()) {
        throw new ConstraintException("enum", "enum must be a non-empty list at " + path);
      }
      List<Automaton> options = new ArrayList<>();
      e.forEach(v -> options.add(literal(v)));
      return Automaton.union(options);
    }
    for (String union : List.of("anyOf", "oneOf")) {
      if (s.has(union)) {
        List<Automaton> options = new ArrayList<>();
        JsonNode list = s.get(union);
        for (int i = 0; i < list.size(); i++) {
          options.add(value(list.get(i), path + "/" + union + "/" + i));
        }
        return options.isEmpty() ? Automaton.makeEmpty() : Automaton.union(options);
      }
    }
    if (s.has("allOf")) {
      JsonNode all = s.get("allOf");
      if (all.size() != 1) {
        throw new ConstraintException("allOf", "allOf with other than one schema at " + path
            + " is not supported");
      }
      return value(all.get(0), path + "/allOf/0");
    }
    JsonNode type = s.get("type");
    if (type == null) {
      return s.has("properties") ? object(s, path) : JsonBytes.anyValue(FREE_DEPTH);
    }
    if (type.isArray()) {
      List<Automaton> options = new ArrayList<>();
      type.forEach(t -> options.add(typed(t.asText(), s, path)));
      return Automaton.union(options);
    }
    return typed(type.asText(), s, path);
  }

  private Automaton typed(String type, JsonNode s, String path) {
    return switch (type) {
      case "string" -> string(s, path);
      case "integer" -> integer(s, path);
      case "number" -> {
        for (String k : List.of("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")) {
          if (s.has(k)) {
            throw new ConstraintException(k, "`" + k + "` on a number is not supported at " + path
                + " (it is on integers)");
          }
        }
        yield JsonBytes.NUMBER;
      }
      case "boolean" -> JsonBytes.BOOLEAN;
      case "null" -> JsonBytes.NULL;
      case "object" -> object(s, path);
      case "array" -> array(s, path);
      default -> throw new ConstraintException("type", "unknown type `" + type + "` at " + path);
    };
  }

  private Automaton ref(String ref, String path) {
    int depth = refsOnPath.getOrDefault(ref, 0);
    if (depth >= REF_DEPTH) {
      return Automaton.makeEmpty();
    }
    JsonNode target = resolve(ref, path);
    refsOnPath.put(ref, depth + 1);
    try {
      return value(target, ref);
    } finally {
      refsOnPath.put(ref, depth);
    }
  }

  private JsonNode resolve(String ref, String path) {
    if (!ref.startsWith("#")) {
      throw new ConstraintException("$ref", "only local $ref (#/...) is supported, got `" + ref
          + "` at " + path);
    }
    JsonNode target = ref.equals("#") ? root : root.at(ref.substring(1));
    if (target.isMissingNode()) {
      throw new ConstraintException("$ref", "$ref `" + ref + "` points nowhere (at " + path + ")");
    }
    return target;
  }

  private Automaton string(JsonNode s, String path) {
    if (s.has("pattern") || s.has("format")) {
      if (s.has("minLength") || s.has("maxLength")) {
        throw new ConstraintException("maxLength", "minLength/maxLength together with a pattern"
            + " or format are not supported at " + path);
      }
      Automaton chars = s.has("pattern")
          ? EcmaRegex.compile(s.get("pattern").asText(), "pattern")
          : Formats.of(s.get("format").asText(), path);
      if (s.has("pattern") && s.has("format")) {
        chars = chars.intersection(Formats.of(s.get("format").asText(), path));
      }
      return JsonBytes.string(chars);
    }
    int min = nonNegative(s, "minLength", 0, path);
    int max = nonNegative(s, "maxLength", -1, path);
    return JsonBytes.string(min, max);
  }

  private Automaton integer(JsonNode s, String path) {
    boolean bounded = s.has("minimum") || s.has("maximum") || s.has("exclusiveMinimum")
        || s.has("exclusiveMaximum");
    if (!bounded) {
      return JsonBytes.INTEGER;
    }
    long lo = -999_999_999_999_999L;
    long hi = 999_999_999_999_999L;
    lo = Math.max(lo, Math.max(bound(s, "minimum", path), bound(s, "exclusiveMinimum", path)));
    hi = Math.min(hi, Math.min(bound(s, "maximum", path), bound(s, "exclusiveMaximum", path)));
    if (lo > hi) {
      throw new ConstraintException("minimum", "no integer lies between the bounds at " + path);
    }
    List<Automaton> parts = new ArrayList<>();
    if (hi >= 0) {
      parts.add(decimal(Math.max(lo, 0), hi));
    }
    if (lo < 0) {
      // -0 is not written: negative values start at -1
      parts.add(JsonBytes.literal("-").concatenate(decimal(Math.max(1, -Math.min(hi, -1)), -lo)));
    }
    return Automaton.union(parts);
  }

  /** Decimal numerals (no leading zeros) of {@code [lo, hi]}, both >= 0. */
  private static Automaton decimal(long lo, long hi) {
    if (hi > Integer.MAX_VALUE) {
      // dk.brics' interval automaton takes ints; beyond that, bound the lower end only by digits
      Automaton digit = Automaton.makeCharRange('0', '9');
      Automaton any = JsonBytes.literal("0").union(Automaton.makeCharRange('1', '9')
          .concatenate(digit.repeat(0, 14)));
      return lo == 0 ? any : any.intersection(decimalAtLeast(lo));
    }
    // dk.brics' interval also takes leading zeros, which JSON has not
    return BasicAutomata.makeInterval((int) lo, (int) hi, 0).intersection(JsonBytes.literal("0")
        .union(Automaton.makeCharRange('1', '9').concatenate(Automaton.makeCharRange('0', '9').repeat())));
  }

  private static Automaton decimalAtLeast(long lo) {
    if (lo > Integer.MAX_VALUE) {
      throw new ConstraintException("minimum", "integer bounds beyond 2^31 are not supported");
    }
    Automaton digit = Automaton.makeCharRange('0', '9');
    Automaton upTo = BasicAutomata.makeInterval(0, (int) lo - 1, 0);
    Automaton numerals = JsonBytes.literal("0").union(Automaton.makeCharRange('1', '9')
        .concatenate(digit.repeat(0, 14)));
    return numerals.minus(upTo);
  }

  /** The integer bound {@code key} sets, or the widest when absent. */
  private static long bound(JsonNode s, String key, String path) {
    JsonNode v = s.get(key);
    boolean lower = key.toLowerCase().contains("min");
    if (v == null) {
      return lower ? Long.MIN_VALUE : Long.MAX_VALUE;
    }
    if (!v.isNumber()) {
      throw new ConstraintException(key, key + " must be a number at " + path);
    }
    double d = v.asDouble();
    return switch (key) {
      case "minimum" -> (long) Math.ceil(d);
      case "exclusiveMinimum" -> (long) Math.floor(d) + 1;
      case "maximum" -> (long) Math.floor(d);
      default -> (long) Math.ceil(d) - 1; // exclusiveMaximum
    };
  }

  private Automaton object(JsonNode s, String path) {
    JsonNode props = s.get("properties");
    JsonNode additional = s.get("additionalProperties");
    if (props == null || props.isEmpty()) {
      if (additional != null && additional.isBoolean() && !additional.asBoolean()) {
        return JsonBytes.literal("{}");
      }
      Automaton v = additional == null || additional.isBoolean() ? JsonBytes.anyValue(FREE_DEPTH - 1)
          : value(additional, path + "/additionalProperties");
      return JsonBytes.anyObject(v);
    }
    if (additional != null && additional.isObject()) {
      throw new ConstraintException("additionalProperties", "additionalProperties as a schema"
          + " together with properties is not supported at " + path);
    }
    Set<String> required = new HashSet<>();
    if (s.has("required")) {
      s.get("required").forEach(r -> required.add(r.asText()));
    }
    Map<String, JsonNode> fields = new LinkedHashMap<>();
    props.fields().forEachRemaining(e -> fields.put(e.getKey(), e.getValue()));
    for (String r : required) {
      if (!fields.containsKey(r)) {
        throw new ConstraintException("required", "required property `" + r
            + "` is not among the properties at " + path);
      }
    }
    List<String> names = new ArrayList<>(fields.keySet());
    int n = names.size();
    // after[i]: properties i.. when one was written before (each starts with a comma);
    // first[i]: the same when none was
    Automaton after = Automaton.makeEmptyString();
    Automaton first = Automaton.makeEmptyString();
    for (int i = n - 1; i >= 0; i--) {
      String name = names.get(i);
      Automaton kv = literal(JSON.getNodeFactory().textNode(name)).concatenate(JsonBytes.COLON)
          .concatenate(value(fields.get(name), path + "/properties/" + name));
      Automaton taken = kv.concatenate(after);
      Automaton nextAfter = JsonBytes.COMMA.concatenate(taken);
      Automaton nextFirst = taken;
      if (!required.contains(name)) {
        nextAfter = nextAfter.union(after);
        nextFirst = nextFirst.union(first);
      }
      Dfa.minimize(nextAfter);
      Dfa.minimize(nextFirst);
      after = nextAfter;
      first = nextFirst;
    }
    return JsonBytes.literal("{").concatenate(first).concatenate(JsonBytes.literal("}"));
  }

  private Automaton array(JsonNode s, String path) {
    int min = nonNegative(s, "minItems", 0, path);
    int max = nonNegative(s, "maxItems", -1, path);
    if (max >= 0 && max < min) {
      throw new ConstraintException("maxItems", "maxItems < minItems at " + path);
    }
    Automaton item = s.has("items") ? value(s.get("items"), path + "/items")
        : JsonBytes.anyValue(FREE_DEPTH - 1);
    if (item.isEmpty()) {
      if (min > 0) {
        return Automaton.makeEmpty();
      }
      return JsonBytes.literal("[]");
    }
    return JsonBytes.list("[", item, min, max, "]");
  }

  private static int nonNegative(JsonNode s, String key, int dflt, String path) {
    JsonNode v = s.get(key);
    if (v == null) {
      return dflt;
    }
    if (!v.canConvertToInt() || v.asInt() < 0 || v.asInt() > 10_000) {
      throw new ConstraintException(key, key + " must be an integer in [0, 10000] at " + path);
    }
    return v.asInt();
  }

  private static Automaton literal(JsonNode v) {
    try {
      return JsonBytes.literal(JSON.writeValueAsString(v));
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
