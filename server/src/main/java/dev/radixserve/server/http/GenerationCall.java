package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.model.sampling.SampledToken.TokenLogprob;
import dev.radixserve.model.tokenizer.StreamDecoder;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.GenerationRequest;
import dev.radixserve.server.engine.ChoiceOutput;
import dev.radixserve.server.engine.GeneratedToken;
import dev.radixserve.server.engine.RequestUsage;
import dev.radixserve.server.engine.TokenSink;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One HTTP generation request (several engine requests when it has several prompts): gathers
 * the engine's outputs on the channel's event loop and writes a JSON response or SSE chunks.
 */
final class GenerationCall {

  private final ChannelHandlerContext ctx;
  private final GenerationRequest req;
  private final Tokenizer tokenizer;
  private final Responses responses;
  private final String id;
  private final String model;
  private final long created = System.currentTimeMillis() / 1000;
  private final StringBuilder[] texts;
  private final ArrayNode[] logprobs;
  private final String[] finish;
  private final boolean[] started;
  private final String[] echo;
  /** Per prompt: its tokens' logprob entries (echo with logprobs), set before its first output. */
  private final ArrayNode[] promptLogprobs;
  private int pending;
  private int promptTokens;
  private int completionTokens;
  private int cachedTokens;
  private boolean done;

  GenerationCall(ChannelHandlerContext ctx, GenerationRequest req, Tokenizer tokenizer,
      Responses responses, String id, String model) {
    this.ctx = ctx;
    this.req = req;
    this.tokenizer = tokenizer;
    this.responses = responses;
    this.id = id;
    this.model = model;
    int choices = req.prompts().size() * req.n();
    texts = new StringBuilder[choices];
    logprobs = new ArrayNode[choices];
    finish = new String[choices];
    started = new boolean[choices];
    echo = new String[choices];
    for (int i = 0; i < choices; i++) {
      texts[i] = new StringBuilder();
      logprobs[i] = Responses.JSON.createArrayNode();
      echo[i] = req.echo() ? tokenizer.decode(req.prompts().get(i / req.n())) : "";
    }
    pending = req.prompts().size();
    promptLogprobs = new ArrayNode[req.prompts().size()];
  }

  boolean isDone() {
    return done;
  }

  /** The sink for prompt {@code promptIndex}; hops every call onto the event loop. */
  TokenSink sink(int promptIndex) {
    int base = promptIndex * req.n();
    return new TokenSink() {
      @Override
      public void onPromptLogprobs(List<SampledToken> scored) {
        ctx.executor().execute(() -> promptLogprobs[promptIndex] = promptLogprobs(promptIndex, scored));
      }

      @Override
      public void onOutput(ChoiceOutput o) {
        ctx.executor().execute(() -> output(base + o.choice(), o));
      }

      @Override
      public void onComplete(RequestUsage u) {
        ctx.executor().execute(() -> complete(u));
      }

      @Override
      public void onError(int status, String message) {
        ctx.executor().execute(() -> error(status, message));
      }
    };
  }

  void startStream() {
    HttpResponse r = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
    r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, "chunked");
    responses.count(200);
    ctx.writeAndFlush(r);
  }

  private void output(int choice, ChoiceOutput o) {
    if (done) {
      return;
    }
    String delta = o.textDelta();
    ArrayNode lp = Responses.JSON.createArrayNode();
    if (!started[choice]) {
      started[choice] = true;
      delta = echo[choice] + delta;
      if (req.echo() && req.logprobs() != null) {
        lp.addAll(promptLogprobs[choice / req.n()]);
      }
    }
    if (req.logprobs() != null) {
      for (GeneratedToken t : o.tokens()) {
        // with echo, offsets count from the start of the prompt's text (OpenAI's legacy API)
        lp.add(tokenLogprob(t.tokenId(), t.logprob(), t.top(), echo[choice].length() + t.textOffset()));
      }
    }
    texts[choice].append(delta);
    logprobs[choice].addAll(lp);
    if (o.finishReason() != null) {
      finish[choice] = o.finishReason().wireName();
    }
    if (req.stream()) {
      if (req.chat() && !sentRole(choice)) {
        sse(chunk(choice, null, null, null, "assistant"));
      }
      if (!delta.isEmpty() || !lp.isEmpty() || o.finishReason() != null) {
        sse(chunk(choice, delta, req.logprobs() != null ? lp : null, finish[choice], null));
      }
    }
  }

  private final java.util.BitSet roleSent = new java.util.BitSet();

  private boolean sentRole(int choice) {
    boolean s = roleSent.get(choice);
    roleSent.set(choice);
    return s;
  }

  /**
   * The prompt's tokens as logprob entries: the first has no context, so its logprob and
   * alternatives are null; each offset counts the prompt text's chars before the token.
   */
  private ArrayNode promptLogprobs(int promptIndex, List<SampledToken> scored) {
    int[] prompt = req.prompts().get(promptIndex);
    if (scored.size() != prompt.length - 1) {
      throw new IllegalStateException(scored.size() + " prompt logprobs for " + prompt.length + " tokens");
    }
    ArrayNode out = Responses.JSON.createArrayNode();
    StreamDecoder text = new StreamDecoder(tokenizer);
    int offset = text.push(prompt[0]).length();
    ObjectNode first = tokenLogprob(prompt[0], 0, List.of(), 0);
    first.putNull("logprob");
    first.putNull("top_logprobs");
    out.add(first);
    for (int i = 1; i < prompt.length; i++) {
      SampledToken t = scored.get(i - 1);
      out.add(tokenLogprob(prompt[i], t.logprob(), t.top(), offset));
      offset += text.push(prompt[i]).length();
    }
    return out;
  }

  private ObjectNode tokenLogprob(int tokenId, float logprob, List<TokenLogprob> alternatives, int offset) {
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

  private ObjectNode chunk(int choice, String delta, ArrayNode lp, String fin, String role) {
    ObjectNode root = header(req.chat() ? "chat.completion.chunk" : "text_completion");
    ObjectNode c = root.putArray("choices").addObject();
    c.put("index", choice);
    if (req.chat()) {
      ObjectNode d = c.putObject("delta");
      if (role != null) {
        d.put("role", role);
        d.put("content", "");
      } else if (delta != null && !delta.isEmpty()) {
        d.put("content", delta);
      }
    } else {
      c.put("text", delta == null ? "" : delta);
    }
    c.set("logprobs", lp == null ? null : logprobsJson(lp));
    c.put("finish_reason", fin);
    return root;
  }

  private ObjectNode header(String object) {
    ObjectNode root = Responses.JSON.createObjectNode();
    root.put("id", id);
    root.put("object", object);
    root.put("created", created);
    root.put("model", model);
    return root;
  }

  /** Chat: {content: [...]}; completions: {tokens, token_logprobs, top_logprobs, text_offset}. */
  private ObjectNode logprobsJson(ArrayNode lp) {
    ObjectNode out = Responses.JSON.createObjectNode();
    if (req.chat()) {
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

  private void complete(RequestUsage u) {
    if (done) {
      return;
    }
    promptTokens += u.promptTokens();
    completionTokens += u.completionTokens();
    cachedTokens += u.cachedTokens();
    if (--pending > 0) {
      return;
    }
    done = true;
    if (req.stream()) {
      if (req.includeUsage()) {
        ObjectNode last = header(req.chat() ? "chat.completion.chunk" : "text_completion");
        last.putArray("choices");
        last.set("usage", usage());
        sse(last);
      }
      ctx.write(new DefaultHttpContent(Unpooled.copiedBuffer("data: [DONE]\n\n",
          StandardCharsets.UTF_8)));
      ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
      return;
    }
    ObjectNode root = header(req.chat() ? "chat.completion" : "text_completion");
    ArrayNode choices = root.putArray("choices");
    for (int i = 0; i < texts.length; i++) {
      ObjectNode c = choices.addObject();
      c.put("index", i);
      if (req.chat()) {
        ObjectNode m = c.putObject("message");
        m.put("role", "assistant");
        m.put("content", texts[i].toString());
      } else {
        c.put("text", texts[i].toString());
      }
      c.set("logprobs", req.logprobs() == null ? null : logprobsJson(logprobs[i]));
      c.put("finish_reason", finish[i]);
    }
    root.set("usage", usage());
    responses.json(ctx, 200, root);
  }

  private ObjectNode usage() {
    ObjectNode u = Responses.JSON.createObjectNode();
    u.put("prompt_tokens", promptTokens);
    u.put("completion_tokens", completionTokens);
    u.put("total_tokens", promptTokens + completionTokens);
    u.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
    return u;
  }

  void error(int status, String message) {
    if (done) {
      return;
    }
    done = true;
    if (req.stream()) {
      ObjectNode err = Responses.JSON.createObjectNode();
      err.putObject("error").put("message", message).put("code", status);
      sse(err);
      ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
      return;
    }
    responses.error(ctx, new ApiException(status, status >= 500 ? "server_error"
        : "invalid_request_error", null, null, message));
  }

  private void sse(ObjectNode event) {
    ctx.writeAndFlush(new DefaultHttpContent(Unpooled.copiedBuffer("data: " + event + "\n\n",
        StandardCharsets.UTF_8)));
  }
}
