package dev.radixserve.model.constraint;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.radixserve.model.Tokenizer;
import dk.brics.automaton.Automaton;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Compiles structured-output constraints (JSON Schema, any JSON object, regex, choice, tool
 * calls) into {@link TokenConstraint}s over one tokenizer's vocabulary, and keeps the last
 * {@value #CACHED} of them: a client that sends the same schema again reuses the automaton and
 * the token masks already computed for it. Thread-safe (HTTP worker threads compile).
 *
 * <p>The character and byte automata are dk.brics.automaton's (regex to DFA, determinization,
 * minimization); the token layer above them is this package's.
 */
public final class ConstraintCompiler {

  static final int CACHED = 64;

  private final TokenVocabulary vocab;
  private final Map<String, TokenConstraint> cache;
  private final ReasoningPrefix prefix;

  public ConstraintCompiler(Tokenizer tokenizer) {
    this(tokenizer, java.util.Set.of());
  }

  /**
   * @param markers texts of special tokens that may be written as text: a tool-call syntax's
   *     markers ({@code [TOOL_CALLS]}), so a forced call can use the model's own control token
   */
  public ConstraintCompiler(Tokenizer tokenizer, java.util.Set<String> markers) {
    this(new TokenVocabulary(tokenizer, markers), new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, TokenConstraint> e) {
        return size() > CACHED;
      }
    }, ReasoningPrefix.NONE);
  }

  private ConstraintCompiler(TokenVocabulary vocab, Map<String, TokenConstraint> cache,
      ReasoningPrefix prefix) {
    this.vocab = vocab;
    this.cache = cache;
    this.prefix = prefix;
  }

  /**
   * This compiler's constraints applied after a reply's reasoning ({@link ReasoningPrefix}):
   * same vocabulary and cache.
   */
  public ConstraintCompiler after(ReasoningPrefix reasoning) {
    return reasoning == prefix ? this : new ConstraintCompiler(vocab, cache, reasoning);
  }

  /** Output that satisfies {@code schema}. */
  public TokenConstraint jsonSchema(JsonNode schema) {
    return cached("schema:" + schema, () -> SchemaCompiler.compile(schema));
  }

  /** Any JSON object ({@code response_format: json_object}). */
  public TokenConstraint jsonObject() {
    return cached("object", () -> JsonBytes.anyObject(JsonBytes.anyValue(SchemaCompiler.FREE_DEPTH - 1)));
  }

  /** Output that matches {@code regex} (ECMA syntax) as a whole. */
  public TokenConstraint regex(String regex) {
    return cached("regex:" + regex, () -> Utf8Automata.toBytes(EcmaRegex.compile(regex, "guided_regex")));
  }

  /** Exactly one of {@code options}. */
  public TokenConstraint choice(List<String> options) {
    if (options.isEmpty()) {
      throw new ConstraintException("guided_choice", "guided_choice must list at least one choice");
    }
    return cached("choice:" + String.join("\u0000", options), () -> {
      List<Automaton> all = new ArrayList<>();
      options.forEach(o -> all.add(JsonBytes.literal(o)));
      return Automaton.union(all);
    });
  }

  /**
   * One call of one of {@code tools} (name to parameters schema) in the generic format
   * {@code {"name": "NAME", "arguments": {...}}}, the arguments satisfying that tool's schema.
   */
  public TokenConstraint toolCall(Map<String, JsonNode> tools) {
    return toolCalls(tools, ToolCallLayout.GENERIC, false);
  }

  /**
   * Calls of {@code tools} (name to parameters schema) written as {@code layout} says, each
   * call's arguments satisfying its tool's schema: exactly one call, or with {@code parallel} one
   * or more.
   */
  public TokenConstraint toolCalls(Map<String, JsonNode> tools, ToolCallLayout layout,
      boolean parallel) {
    return cached("tools:" + layout + parallel + tools, () -> {
      List<Automaton> calls = new ArrayList<>();
      tools.forEach((name, params) -> calls.add(JsonBytes.literal(layout.head(TextNode.valueOf(name).toString()))
          .concatenate(SchemaCompiler.compile(params))
          .concatenate(JsonBytes.literal(layout.tail()))));
      Automaton call = Automaton.union(calls);
      Automaton all = parallel
          ? call.concatenate(JsonBytes.literal(layout.separator()).concatenate(call).repeat())
          : call;
      return JsonBytes.literal(layout.start()).concatenate(all)
          .concatenate(JsonBytes.literal(layout.end()));
    });
  }

  private TokenConstraint cached(String constraintKey, Supplier<Automaton> build) {
    String key = prefix + ":" + constraintKey;
    synchronized (cache) {
      TokenConstraint c = cache.get(key);
      if (c != null) {
        return c;
      }
    }
    TokenConstraint c;
    // dk.brics numbers states in place while it reads an automaton, and JsonBytes' pieces are
    // shared: one compilation at a time
    synchronized (ConstraintCompiler.class) {
      Automaton reasoning = prefix.automaton();
      Automaton body = build.get();
      c = new TokenConstraint(reasoning == null ? body : reasoning.concatenate(body), vocab);
    }
    synchronized (cache) {
      cache.put(key, c);
    }
    return c;
  }
}
