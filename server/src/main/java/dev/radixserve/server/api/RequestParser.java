package dev.radixserve.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SamplingParams;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Parses and validates completions and chat bodies. Unknown top-level fields are ignored (as
 * OpenAI does); unknown keys inside {@code stream_options} and message objects are rejected.
 */
public final class RequestParser {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");

  private final Tokenizer tokenizer;
  private final String modelName;

  public RequestParser(Tokenizer tokenizer, String modelName) {
    this.tokenizer = tokenizer;
    this.modelName = modelName;
  }

  public static JsonNode readObject(byte[] body) {
    JsonNode node;
    try {
      node = JSON.readTree(body);
    } catch (IOException e) {
      throw ApiException.badRequest(null, "malformed JSON: " + e.getMessage());
    }
    if (node == null || !node.isObject()) {
      throw ApiException.badRequest(null, "the body must be a JSON object");
    }
    return node;
  }

  public GenerationRequest parse(JsonNode body, boolean chat) {
    checkModel(body);
    List<int[]> prompts = chat ? List.of(tokenizer.encode(chatPrompt(body))) : prompts(body);
    int n = intField(body, "n", 1, 1, 128);
    boolean echo = !chat && boolField(body, "echo", false);
    // echo with max_tokens 0 returns the prompt (scored, with logprobs) and generates nothing
    Integer maxTokens = optInt(body, chat && body.has("max_completion_tokens")
        ? "max_completion_tokens" : "max_tokens", echo ? 0 : 1);
    List<String> stop = stops(body);
    if (chat) {
      stop = new ArrayList<>(stop);
      stop.add(ChatTemplate.END);
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
    JsonNode ids = body.get("stop_token_ids");
    if (ids != null && !ids.isNull()) {
      if (!ids.isArray()) {
        throw ApiException.badRequest("stop_token_ids", "stop_token_ids must be a list of token ids");
      }
      ids.forEach(i -> stopIds.add(tokenId(i, "stop_token_ids")));
    }
    SamplingParams params;
    try {
      params = new SamplingParams(
          dbl(body, "temperature", 1.0), intField(body, "top_k", 0, -1, Integer.MAX_VALUE) < 0 ? 0
              : intField(body, "top_k", 0, -1, Integer.MAX_VALUE),
          dbl(body, "top_p", 1.0), dbl(body, "min_p", 0.0), optLong(body, "seed"),
          dbl(body, "repetition_penalty", 1.0), dbl(body, "presence_penalty", 0.0),
          dbl(body, "frequency_penalty", 0.0), stopIds, logprobs != null, top);
    } catch (IllegalArgumentException e) {
      String msg = e.getMessage();
      throw ApiException.badRequest(msg.substring(0, Math.max(0, msg.indexOf(' '))), msg);
    }
    String salt = str(body, "cache_salt");
    return new GenerationRequest(chat, prompts, params, n, maxTokens, stop,
        boolField(body, "ignore_eos", false), stream, includeUsage, echo, logprobs,
        salt == null ? "" : salt, str(body, "user"));
  }

  private void checkModel(JsonNode body) {
    String model = str(body, "model");
    if (model != null && !model.equals(modelName)) {
      throw new ApiException(404, "invalid_request_error", "model", "model_not_found",
          "The model `" + model + "` does not exist.");
    }
  }

  private List<int[]> prompts(JsonNode body) {
    JsonNode p = body.get("prompt");
    if (p == null || p.isNull()) {
      throw ApiException.badRequest("prompt", "prompt is required");
    }
    List<int[]> out = new ArrayList<>();
    if (p.isTextual()) {
      out.add(tokenizer.encode(p.asText()));
    } else if (p.isArray() && !p.isEmpty() && p.get(0).isIntegralNumber()) {
      out.add(tokenList(p));
    } else if (p.isArray() && !p.isEmpty()) {
      for (JsonNode e : p) {
        if (e.isTextual()) {
          out.add(tokenizer.encode(e.asText()));
        } else if (e.isArray()) {
          out.add(tokenList(e));
        } else {
          throw ApiException.badRequest("prompt", "prompt list items must be strings or token lists");
        }
      }
    } else {
      throw ApiException.badRequest("prompt",
          "prompt must be a string, a list of strings, a token list or a list of token lists");
    }
    for (int[] tokens : out) {
      if (tokens.length == 0) {
        throw ApiException.badRequest("prompt", "prompt must not be empty");
      }
    }
    return out;
  }

  private int[] tokenList(JsonNode arr) {
    int[] t = new int[arr.size()];
    for (int i = 0; i < t.length; i++) {
      t[i] = tokenId(arr.get(i), "prompt");
    }
    return t;
  }

  private int tokenId(JsonNode n, String param) {
    if (!n.isIntegralNumber() || n.asLong() < 0 || n.asLong() >= tokenizer.vocabSize()) {
      throw ApiException.badRequest(param, "token ids must be integers in [0, "
          + tokenizer.vocabSize() + "), got " + n);
    }
    return n.asInt();
  }

  private String chatPrompt(JsonNode body) {
    JsonNode msgs = body.get("messages");
    if (msgs == null || !msgs.isArray() || msgs.isEmpty()) {
      throw ApiException.badRequest("messages", "messages must be a non-empty list");
    }
    List<ChatTemplate.Message> out = new ArrayList<>();
    for (JsonNode m : msgs) {
      if (!m.isObject()) {
        throw ApiException.badRequest("messages", "each message must be an object");
      }
      for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!Set.of("role", "content", "name").contains(k)) {
          throw ApiException.badRequest("messages", "unknown message field: " + k);
        }
      }
      String role = m.path("role").isTextual() ? m.get("role").asText() : null;
      if (role == null || !ROLES.contains(role)) {
        throw ApiException.badRequest("messages", "message role must be one of " + ROLES);
      }
      out.add(new ChatTemplate.Message(role, content(m.get("content"))));
    }
    return ChatTemplate.render(out);
  }

  private static String content(JsonNode c) {
    if (c != null && c.isTextual()) {
      return c.asText();
    }
    if (c != null && c.isArray()) {
      StringBuilder sb = new StringBuilder();
      for (JsonNode part : c) {
        if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) {
          throw ApiException.badRequest("messages", "only text content parts are supported");
        }
        sb.append(part.get("text").asText());
      }
      return sb.toString();
    }
    throw ApiException.badRequest("messages", "message content must be a string or text parts");
  }

  private static List<String> stops(JsonNode body) {
    JsonNode s = body.get("stop");
    if (s == null || s.isNull()) {
      return List.of();
    }
    if (s.isTextual()) {
      return List.of(s.asText());
    }
    if (s.isArray() && s.size() <= 4) {
      List<String> out = new ArrayList<>();
      for (JsonNode e : s) {
        if (!e.isTextual()) {
          throw ApiException.badRequest("stop", "stop must be a string or a list of strings");
        }
        out.add(e.asText());
      }
      return out;
    }
    throw ApiException.badRequest("stop", "stop must be a string or a list of up to 4 strings");
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

  private static String str(JsonNode body, String field) {
    JsonNode v = body.get(field);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isTextual()) {
      throw ApiException.badRequest(field, field + " must be a string");
    }
    return v.asText();
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
