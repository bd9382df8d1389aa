package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SampledToken.TokenLogprob;
import dev.radixserve.server.engine.GeneratedToken;

/** OpenAI's logprobs objects: one neutral entry per token, then the chat or completions form. */
final class LogprobsJson {

  private final Tokenizer tokenizer;

  LogprobsJson(Tokenizer tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** {token, logprob, bytes, text_offset, top_logprobs: [{token, logprob}]}. */
  ObjectNode entry(GeneratedToken t, int textOffset) {
    ObjectNode n = Responses.JSON.createObjectNode();
    n.put("token", tokenizer.decode(new int[] {t.tokenId()}));
    n.put("logprob", t.logprob());
    ArrayNode bytes = n.putArray("bytes");
    for (byte b : tokenizer.tokenBytes(t.tokenId())) {
      bytes.add(b & 0xFF);
    }
    n.put("text_offset", textOffset);
    ArrayNode top = n.putArray("top_logprobs");
    for (TokenLogprob a : t.top()) {
      ObjectNode e = top.addObject();
      e.put("token", tokenizer.decode(new int[] {a.tokenId()}));
      e.put("logprob", a.logprob());
    }
    return n;
  }

  /** Chat: {content: [...]}; completions: {tokens, token_logprobs, top_logprobs, text_offset}. */
  static ObjectNode format(boolean chat, ArrayNode lp) {
    ObjectNode out = Responses.JSON.createObjectNode();
    if (chat) {
      ArrayNode content = out.putArray("content");
      lp.forEach(t -> {
        ObjectNode e = ((ObjectNode) t).deepCopy();
        e.remove("text_offset");
        e.get("top_logprobs").forEach(a -> ((ObjectNode) a).putArray("bytes"));
        content.add(e);
      });
      return out;
    }
    ArrayNode tokens = out.putArray("tokens");
    ArrayNode lps = out.putArray("token_logprobs");
    ArrayNode tops = out.putArray("top_logprobs");
    ArrayNode offsets = out.putArray("text_offset");
    lp.forEach(t -> {
      tokens.add(t.get("token"));
      lps.add(t.get("logprob"));
      ObjectNode top = Responses.JSON.createObjectNode();
      t.get("top_logprobs").forEach(a -> top.set(a.get("token").asText(), a.get("logprob")));
      tops.add(top);
      offsets.add(t.get("text_offset").asInt());
    });
    return out;
  }
}
