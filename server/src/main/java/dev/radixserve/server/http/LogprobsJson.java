package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.sampling.SampledToken.TokenLogprob;
import dev.radixserve.model.tokenizer.StreamDecoder;
import dev.radixserve.server.engine.GeneratedToken;
import java.util.List;

/** OpenAI's logprobs objects: one neutral entry per token, then the chat or completions form. */
final class LogprobsJson {

  private final Tokenizer tokenizer;

  LogprobsJson(Tokenizer tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** {token, logprob, bytes, text_offset, top_logprobs: [{token, logprob, bytes}]}. */
  ObjectNode entry(GeneratedToken t, int textOffset) {
    return entry(t.tokenId(), t.logprob(), t.top(), textOffset);
  }

  /**
   * A prompt's tokens as entries (echo with logprobs): the first has no context, so its logprob
   * and alternatives are null; each offset counts the prompt text's chars before the token.
   */
  ArrayNode promptEntries(int[] prompt, List<SampledToken> scored) {
    if (scored.size() != prompt.length - 1) {
      throw new IllegalStateException(scored.size() + " prompt logprobs for " + prompt.length
          + " tokens");
    }
    ArrayNode out = Responses.JSON.createArrayNode();
    StreamDecoder text = new StreamDecoder(tokenizer);
    int offset = text.push(prompt[0]).length();
    ObjectNode first = entry(prompt[0], 0, List.of(), 0);
    first.putNull("logprob");
    first.putNull("top_logprobs");
    out.add(first);
    for (int i = 1; i < prompt.length; i++) {
      SampledToken t = scored.get(i - 1);
      out.add(entry(prompt[i], t.logprob(), t.top(), offset));
      offset += text.push(prompt[i]).length();
    }
    return out;
  }

  private ObjectNode entry(int tokenId, float logprob, List<TokenLogprob> alternatives,
      int offset) {
    ObjectNode n = Responses.JSON.createObjectNode();
    n.put("token", tokenizer.decode(new int[] {tokenId}));
    n.put("logprob", logprob);
    putBytes(n, tokenId);
    n.put("text_offset", offset);
    ArrayNode top = n.putArray("top_logprobs");
    for (TokenLogprob a : alternatives) {
      ObjectNode e = top.addObject();
      e.put("token", tokenizer.decode(new int[] {a.tokenId()}));
      e.put("logprob", a.logprob());
      putBytes(e, a.tokenId());
    }
    return n;
  }

  /** The token's raw bytes: a byte-level token may be part of a UTF-8 character. */
  private void putBytes(ObjectNode n, int tokenId) {
    ArrayNode bytes = n.putArray("bytes");
    for (byte b : tokenizer.tokenBytes(tokenId)) {
      bytes.add(b & 0xFF);
    }
  }

  /** Chat: {content: [...]}; completions: {tokens, token_logprobs, top_logprobs, text_offset}. */
  static ObjectNode format(boolean chat, ArrayNode lp) {
    ObjectNode out = Responses.JSON.createObjectNode();
    if (chat) {
      ArrayNode content = out.putArray("content");
      lp.forEach(t -> {
        ObjectNode e = ((ObjectNode) t).deepCopy();
        e.remove("text_offset");
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
      if (t.get("top_logprobs").isNull()) {
        tops.addNull(); // the prompt's first token
      } else {
        ObjectNode top = Responses.JSON.createObjectNode();
        t.get("top_logprobs").forEach(a -> top.set(a.get("token").asText(), a.get("logprob")));
        tops.add(top);
      }
      offsets.add(t.get("text_offset").asInt());
    });
    return out;
  }
}
