package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import dev.radixserve.cache.CacheNamespace;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.chat.ChatTemplate;
import dev.radixserve.model.constraint.ReasoningPrefix;
import dev.radixserve.server.config.ReasoningParserSetting;
import dev.radixserve.server.config.ToolCallParserSetting;
import dev.radixserve.model.sampling.SamplingParams;
import com.fasterxml.jackson.databind.node.IntNode;
import dev.radixserve.model.sampling.LogitRules;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Parses and validates completions and chat bodies. Unknown top-level fields are ignored (as
 * OpenAI does); unknown keys inside {@code stream_options} and message objects are rejected.
 * Sizes are checked before anything is allocated for them ({@link RequestLimits}): counts and
 * shapes first, then the prompts are tokenized up to what the model could take.
 */
public final class RequestParser {

  private final String modelName;
  private final RequestLimits limits;
  private final PromptReader prompts;
  private final ChatTemplate chatTemplate;
  private final ConstraintReader constraints;
  private final ToolCallSyntax toolCallSyntax;
  private final ReasoningSyntax reasoningSyntax;
  private final Tokenizer tokenizer;

  public RequestParser(Tokenizer tokenizer, ChatTemplate chatTemplate, String modelName,
      RequestLimits limits) {
    this(tokenizer, chatTemplate, modelName, limits,
        ToolCallSyntax.of(ToolCallParserSetting.AUTO, chatTemplate));
  }

  /** Reasoning as the template's family writes it ({@code --reasoning-parser auto}). */
  public RequestParser(Tokenizer tokenizer, ChatTemplate chatTemplate, String modelName,
      RequestLimits limits, ToolCallSyntax toolCallSyntax) {
    this(tokenizer, chatTemplate, modelName, limits, toolCallSyntax,
        ReasoningSyntax.of(ReasoningParserSetting.AUTO, chatTemplate));
  }

  /**
   * @param toolCallSyntax how the model writes tool calls ({@code --tool-call-parser})
   * @param reasoningSyntax how it marks its reasoning ({@code --reasoning-parser}); null: it
   *     does not (the reply is all content)
   */
  public RequestParser(Tokenizer tokenizer, ChatTemplate chatTemplate, String modelName,
      RequestLimits limits, ToolCallSyntax toolCallSyntax, ReasoningSyntax reasoningSyntax) {
    this.reasoningSyntax = reasoningSyntax;
    this.toolCallSyntax = toolCallSyntax;
    this.tokenizer = tokenizer;
    this.modelName = modelName;
    this.limits = limits;
    this.chatTemplate = chatTemplate;
    this.prompts = new PromptReader(tokenizer, chatTemplate, limits);
    this.constraints = new ConstraintReader(tokenizer, toolCallSyntax.markers());
  }

  public GenerationRequest parse(JsonNode body, boolean chat) {
    checkModel(body);
    RequestFields.check(body, chat);
    int n = intField(body, "n", 1, 1, 128);
    limits.checkChoices(chat ? 1 : PromptReader.count(body), n);
    boolean echo = !chat && boolField(body, "echo", false);
    List<String> stop = stops(body);
    if (chat) {
      stop = new ArrayList<>(stop);
      stop.addAll(chatTemplate.stops());
    }
    String maxTokensParam = chat && body.has("max_completion_tokens")
        ? "max_completion_tokens" : "max_tokens";
    // echo with max_tokens 0 returns the prompt (scored, with logprobs) and generates nothing
    Integer maxTokens = optInt(body, maxTokensParam, echo ? 0 : 1);
    limits.checkMaxTokens(maxTokens, maxTokensParam);
    Tools tools = chat ? Tools.read(body, toolCallSyntax) : null;
    PromptReader.ChatPrompt chatPrompt = chat ? prompts.chat(body, maxTokens, tools) : null;
    List<int[]> ids = chat ? List.of(chatPrompt.tokens()) : prompts.completion(body, maxTokens);
    ReasoningSyntax.Start reasoning = chat && reasoningSyntax != null
        ? reasoningSyntax.start(chatPrompt.text()) : null;
    boolean includeReasoning = boolField(body, "include_reasoning", true);
    for (int[] prompt : ids) {
      limits.maxTokensFor(prompt.length, maxTokens, chat ? "messages" : "prompt");
    }
    Integer logprobs;
    int top;
    if (chat) {
      boolean want = boolField(body, "logprobs", false);
      top = intField(body, "top_logprobs", 0, 0, SamplingParams.MAX_TOP_LOGPROBS);
      logprobs = want ? top : null;
    } else {
      logprobs = optInt(body, "logprobs", 0);
      if (logprobs != null && logprobs > SamplingParams.MAX_TOP_LOGPROBS) {
        throw ApiException.badRequest("logprobs", "logprobs must be in [0, 20]");
      }
      top = logprobs == null ? 0 : logprobs;
    }
    boolean stream = boolField(body, "stream", false);
    boolean includeUsage = streamOptions(body);
    Set<Integer> stopIds = new HashSet<>();
    JsonNode stopTokens = body.get("stop_token_ids");
    if (stopTokens != null && !stopTokens.isNull()) {
      if (!stopTokens.isArray()) {
        throw ApiException.badRequest("stop_token_ids", "stop_token_ids must be a list of token ids");
      }
      stopTokens.forEach(i -> stopIds.add(prompts.tokenId(i, "stop_token_ids")));
    }
    SamplingParams params;
    try {
      params = new SamplingParams(
          dbl(body, "temperature", 1.0), intField(body, "top_k", 0, -1, Integer.MAX_VALUE) < 0 ? 0
              : intField(body, "top_k", 0, -1, Integer.MAX_VALUE),
          dbl(body, "top_p", 1.0), dbl(body, "min_p", 0.0), optLong(body, "seed"),
          dbl(body, "repetition_penalty", 1.0), dbl(body, "presence_penalty", 0.0),
          dbl(body, "frequency_penalty", 0.0), stopIds, logprobs != null, top,
          logitRules(body, maxTokens));
    } catch (IllegalArgumentException e) {
      String msg = e.getMessage();
      throw ApiException.badRequest(msg.substring(0, Math.max(0, msg.indexOf(' '))), msg);
    }
    return new GenerationRequest(chat, ids, params, n, maxTokens, stop,
        boolField(body, "ignore_eos", false), stream, includeUsage, echo, logprobs,
        CacheNamespace.ofSalt(str(body, "cache_salt")), str(body, "user"), priority(body),
        // vLLM: without include_reasoning a constraint holds from the first token
        constraints.read(body, tools, includeReasoning ? reasoningPrefix(reasoning)
            : ReasoningPrefix.NONE), tools, reasoning, includeReasoning);
  }

  /** Where a constraint starts in a reply that may reason first. */
  private static ReasoningPrefix reasoningPrefix(ReasoningSyntax.Start start) {
    if (start == null) {
      return ReasoningPrefix.NONE;
    }
    return switch (start) {
      case REASONING -> ReasoningPrefix.REQUIRED;
      case OPENS_WITH_TAG -> ReasoningPrefix.OPTIONAL;
      case CONTENT -> ReasoningPrefix.NONE;
    };
  }

  /**
   * {@code logit_bias} (OpenAI: token id as a string → bias in [-100, 100]), and vLLM's {@code
   * min_tokens}, {@code allowed_token_ids} and {@code bad_words}.
   */
  private LogitRules logitRules(JsonNode body, Integer maxTokens) {
    Map<Integer, Float> bias = new HashMap<>();
    JsonNode b = body.get("logit_bias");
    if (b != null && !b.isNull()) {
      if (!b.isObject()) {
        throw ApiException.badRequest("logit_bias",
            "logit_bias must be an object mapping token ids to biases in [-100, 100]");
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = b.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        int id;
        try {
          id = Integer.parseInt(e.getKey());
        } catch (NumberFormatException ex) {
          throw ApiException.badRequest("logit_bias", "logit_bias keys must be token ids, got `"
              + e.getKey() + "`");
        }
        prompts.tokenId(IntNode.valueOf(id), "logit_bias");
        JsonNode v = e.getValue();
        if (!v.isNumber() || !(v.asDouble() >= -100 && v.asDouble() <= 100)) {
          throw ApiException.badRequest("logit_bias", "logit_bias values must be numbers in "
              + "[-100, 100], got " + v + " for token " + id);
        }
        bias.put(id, (float) v.asDouble());
      }
    }
    int minTokens = intField(body, "min_tokens", 0, 0, Integer.MAX_VALUE);
    if (maxTokens != null && minTokens > maxTokens) {
      throw ApiException.badRequest("min_tokens", "min_tokens (" + minTokens
          + ") must be at most max_tokens (" + maxTokens + ")");
    }
    Set<Integer> allowed = null;
    JsonNode a = body.get("allowed_token_ids");
    if (a != null && !a.isNull()) {
      if (!a.isArray() || a.isEmpty()) {
        throw ApiException.badRequest("allowed_token_ids",
            "allowed_token_ids must be a non-empty list of token ids");
      }
      allowed = new HashSet<>();
      for (JsonNode id : a) {
        allowed.add(prompts.tokenId(id, "allowed_token_ids"));
      }
    }
    return new LogitRules(bias, minTokens, Set.of(), allowed, badWords(body));
  }

  /**
   * vLLM's {@code bad_words}: each word is tokenized as it is and with a leading space (the
   * latter kept when it is as many tokens and starts with another one, as vLLM does).
   */
  private List<int[]> badWords(JsonNode body) {
    JsonNode w = body.get("bad_words");
    List<int[]> out = new ArrayList<>();
    if (w == null || w.isNull()) {
      return out;
    }
    if (!w.isArray() || w.size() > limits.maxStops() * 4) {
      throw ApiException.badRequest("bad_words", "bad_words must be a list of at most "
          + limits.maxStops() * 4 + " strings");
    }
    for (JsonNode word : w) {
      if (!word.isTextual() || word.asText().strip().isEmpty()
          || word.asText().length() > limits.maxStopLength()) {
        throw ApiException.badRequest("bad_words", "bad_words must hold non-blank strings of at"
            + " most " + limits.maxStopLength() + " characters");
      }
      String text = PromptReader.text(word, "bad_words").stripLeading();
      int[] plain = tokenizer.encodeTemplated(text);
      out.add(plain);
      int[] spaced = tokenizer.encodeTemplated(" " + text);
      if (spaced.length == plain.length && spaced[0] != plain[0]) {
        out.add(spaced);
      }
    }
    return out;
  }

  /** {@code model} is required, as OpenAI requires it; another model is 404. */
  private void checkModel(JsonNode body) {
    String model = str(body, "model");
    if (model == null) {
      throw ApiException.badRequest("model", "model is required (this server serves `"
          + modelName + "`)");
    }
    if (!model.equals(modelName)) {
      throw new ApiException(404, "invalid_request_error", "model", "model_not_found",
          "The model `" + model + "` does not exist.");
    }
  }

  private List<String> stops(JsonNode body) {
    JsonNode s = body.get("stop");
    List<String> out = new ArrayList<>();
    if (s == null || s.isNull()) {
      return out;
    }
    if (s.isTextual()) {
      out.add(PromptReader.text(s, "stop"));
    } else if (s.isArray()) {
      for (JsonNode e : s) {
        if (!e.isTextual()) {
          throw ApiException.badRequest("stop", "stop must be a string or a list of strings");
        }
        out.add(PromptReader.text(e, "stop"));
      }
    } else {
      throw ApiException.badRequest("stop", "stop must be a string or a list of up to "
          + limits.maxStops() + " strings");
    }
    limits.checkStops(out);
    return out;
  }

  private static boolean streamOptions(JsonNode body) {
    JsonNode o = body.get("stream_options");
    if (o == null || o.isNull()) {
      return false;
    }
    if (!o.isObject()) {
      throw ApiException.badRequest("stream_options", "stream_options must be an object");
    }
    for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!k.equals("include_usage")) {
        throw ApiException.badRequest("stream_options", "unknown stream_options field: " + k);
      }
    }
    return boolField(o, "include_usage", false);
  }

  /** vLLM's {@code priority}: any 32-bit integer, 0 by default; lower runs first. */
  private static int priority(JsonNode body) {
    JsonNode v = body.get("priority");
    if (v == null || v.isNull()) {
      return 0;
    }
    if (!v.isIntegralNumber() || !v.canConvertToInt()) {
      throw ApiException.badRequest("priority", "priority must be an integer in ["
          + Integer.MIN_VALUE + ", " + Integer.MAX_VALUE + "] (lower runs first)");
    }
    return v.asInt();
  }

  private static String str(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest(field, field + " must be a string");
    }
    return PromptReader.text(v, field);
  }

  private static boolean boolField(JsonNode body, String field, boolean dflt) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isBoolean()) {
      throw ApiException.badRequest(field, field + " must be a boolean");
    }
    return v.asBoolean();
  }

  private static double dbl(JsonNode body, String field, double dflt) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return dflt;
    }
    if (!v.isNumber()) {
      throw ApiException.badRequest(field, field + " must be a number");
    }
    return v.asDouble();
  }

  private static Long optLong(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      throw ApiException.badRequest(field, field + " must be an integer");
    }
    return v.asLong();
  }

  private static Integer optInt(JsonNode body, String field, int min) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isIntegralNumber() || !v.canConvertToInt() || v.asInt() < min) {
      throw ApiException.badRequest(field, field + " must be an integer >= " + min);
    }
    return v.asInt();
  }

  private static int intField(JsonNode body, String field, int dflt, int min, int max) {
    Integer v = optInt(body, field, min);
    if (v != null && v > max) {
      throw ApiException.badRequest(field, field + " must be <= " + max);
    }
    return v == null ? dflt : v;
  }
}
