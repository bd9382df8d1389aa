package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.model.Tokenizer;
import dev.radixserve.model.sampling.SampledToken;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.api.GenerationRequest;
import dev.radixserve.server.engine.ChoiceOutput;
import dev.radixserve.server.engine.Engine;
import dev.radixserve.server.engine.RequestUsage;
import dev.radixserve.server.engine.TokenSink;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * One HTTP generation request (several engine requests when it has several prompts): gathers
 * the engine's token ids on the channel's event loop, turns them into text and applies the stop
 * strings there (never on the engine thread), and writes a JSON response or SSE events. A stop
 * string ends its choice in the engine through {@link Engine#finishChoice}.
 */
final class GenerationCall {

  private static final String DONE = "data: [DONE]\n\n";

  private final ChannelHandlerContext ctx;
  private final GenerationRequest req;
  private final Engine engine;
  private final Responses responses;
  private final String id;
  /** The response's and the stream's JSON objects. */
  private final StreamChunks chunks;
  private final ChoiceState[] choices;
  /** Per choice of a chat stream with tools: what its text says (content or a call); else null. */
  private final ToolCallParser[] toolCalls;
  private final LogprobsJson logprobsJson;
  /** Per prompt: its tokens' logprob entries (echo with logprobs), set before its first output. */
  private final ArrayNode[] promptLogprobs;
  private int pending;
  private int promptTokens;
  private int cachedTokens;
  private boolean done;

  GenerationCall(ChannelHandlerContext ctx, GenerationRequest req, Tokenizer tokenizer,
      Engine engine, Responses responses, String id, String model) {
    this.ctx = ctx;
    this.req = req;
    this.engine = engine;
    this.responses = responses;
    this.id = id;
    this.chunks = new StreamChunks(req.chat(), id, System.currentTimeMillis() / 1000, model);
    StopStrings stops = new StopStrings(req.stop());
    logprobsJson = new LogprobsJson(tokenizer);
    promptLogprobs = new ArrayNode[req.prompts().size()];
    choices = new ChoiceState[req.prompts().size() * req.n()];
    for (int p = 0; p < req.prompts().size(); p++) {
      String echo = req.echo() ? tokenizer.decode(req.prompts().get(p)) : "";
      for (int c = 0; c < req.n(); c++) {
        choices[p * req.n() + c] = new ChoiceState(tokenizer, stops, logprobsJson, echo,
            req.reasoning() == null ? null : new ReasoningParser(req.reasoning()),
            req.params().rules().minTokens());
      }
    }
    pending = req.prompts().size();
    toolCalls = new ToolCallParser[choices.length];
    if (req.stream() && req.tools() != null) {
      for (int i = 0; i < choices.length; i++) {
        toolCalls[i] = new ToolCallParser(req.tools());
      }
    }
  }

  boolean isDone() {
    return done;
  }

  /** The engine request id of prompt {@code promptIndex}. */
  String engineId(int promptIndex) {
    return id + "-" + promptIndex;
  }

  /** The sink for prompt {@code promptIndex}; hops every call onto the event loop. */
  TokenSink sink(int promptIndex) {
    return new TokenSink() {
      @Override
      public void onPromptLogprobs(List<SampledToken> scored) {
        ctx.executor().execute(() -> promptLogprobs[promptIndex] =
            logprobsJson.promptEntries(req.prompts().get(promptIndex), scored));
      }

      @Override
      public void onOutput(ChoiceOutput o) {
        ctx.executor().execute(() -> output(promptIndex, o));
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

  /**
   * SSE response head. HTTP/1.1: chunked; HTTP/1.0 has no chunked encoding, so the events go
   * unframed and the end of the stream is the end of the connection.
   */
  void startStream() {
    HttpVersion version = Responses.version(ctx);
    HttpResponse r = new DefaultHttpResponse(version, HttpResponseStatus.OK);
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream");
    r.headers().set(HttpHeaderNames.CACHE_CONTROL, "no-cache");
    if (version.equals(HttpVersion.HTTP_1_0)) {
      r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    } else {
      r.headers().set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    }
    responses.count(200);
    ctx.writeAndFlush(r);
  }

  private void output(int promptIndex, ChoiceOutput o) {
    int index = promptIndex * req.n() + o.choice();
    ChoiceState choice = choices[index];
    if (done || choice.finished()) {
      return;
    }
    ChoiceState.Delta d = choice.accept(o, req.logprobs() != null, promptLogprobs[promptIndex]);
    if (d.stoppedByText()) {
      engine.finishChoice(engineId(promptIndex), o.choice());
    }
    if (req.stream()) {
      if (req.chat() && choice.takeRole()) {
        sse(chunks.chunk(index, null, null, null, "assistant"));
      }
      if (!d.reasoning().isEmpty() && req.includeReasoning()) {
        ObjectNode root = chunks.chunk(index, null, null, null, null);
        ((ObjectNode) root.get("choices").get(0).get("delta"))
            .put("reasoning_content", d.reasoning());
        sse(root);
      }
      if (toolCalls[index] != null) {
        streamToolCalls(index, d);
      } else if (!d.text().isEmpty() || !d.logprobs().isEmpty() || d.finishReason() != null) {
        ctx.writeAndFlush(new DefaultHttpContent(chunks.event(ctx.alloc(), index, d.text(),
            req.logprobs() != null ? d.logprobs() : null, d.finishReason())));
      }
    }
  }

  /** A chat stream with tools: content and tool-call deltas as the choice's parser reads them. */
  private void streamToolCalls(int index, ChoiceState.Delta d) {
    ToolCallParser parser = toolCalls[index];
    List<ToolCallParser.Event> events = new ArrayList<>(parser.feed(d.text()));
    if (d.finishReason() != null) {
      events.addAll(parser.finish(d.finishReason().equals("stop")));
    }
    for (ToolCallParser.Event e : events) {
      ObjectNode root = chunks.chunk(index, null, null, null, null);
      ObjectNode delta = (ObjectNode) root.get("choices").get(0).get("delta");
      switch (e) {
        case ToolCallParser.Content c -> delta.put("content", c.text());
        case ToolCallParser.Start st -> {
          ObjectNode call = delta.putArray("tool_calls").addObject();
          call.put("index", st.index()).put("id", st.id()).put("type", "function");
          call.putObject("function").put("name", st.name()).put("arguments", "");
        }
        case ToolCallParser.Arguments a -> delta.putArray("tool_calls").addObject()
            .put("index", a.index()).putObject("function").put("arguments", a.fragment());
      }
      sse(root);
    }
    boolean withLogprobs = req.logprobs() != null && !d.logprobs().isEmpty();
    if (d.finishReason() != null || withLogprobs) {
      sse(chunks.chunk(index, null, withLogprobs ? d.logprobs() : null,
          finishReason(d.finishReason(), parser.isCall()), null));
    }
  }

  /** A choice that ended in a complete tool call finishes with {@code tool_calls}. */
  private static String finishReason(String fin, boolean call) {
    return call && "stop".equals(fin) ? "tool_calls" : fin;
  }

  /** The non-streamed message of choice {@code i}: content, or tool_calls. */
  private void message(ObjectNode c, int i) {
    ObjectNode m = c.putObject("message");
    m.put("role", "assistant");
    ChoiceState choice = choices[i];
    if (req.reasoning() != null && req.includeReasoning()) {
      m.put("reasoning_content", choice.reasoning());
    }
    if (req.tools() == null) {
      m.put("content", choice.content());
      c.put("finish_reason", choice.finishReason());
      return;
    }
    ToolCallParser parser = new ToolCallParser(req.tools());
    List<ToolCallParser.Event> events = new ArrayList<>(parser.feed(choice.text()));
    events.addAll(parser.finish("stop".equals(choice.finishReason())));
    StringBuilder content = new StringBuilder();
    List<ObjectNode> calls = new ArrayList<>();
    List<StringBuilder> args = new ArrayList<>();
    for (ToolCallParser.Event e : events) {
      switch (e) {
        case ToolCallParser.Content t -> content.append(t.text());
        case ToolCallParser.Start st -> {
          ObjectNode call = Responses.JSON.createObjectNode();
          call.put("id", st.id()).put("type", "function");
          call.putObject("function").put("name", st.name());
          calls.add(call);
          args.add(new StringBuilder());
        }
        case ToolCallParser.Arguments a -> args.get(a.index()).append(a.fragment());
      }
    }
    if (calls.isEmpty()) {
      m.put("content", choice.content() == null ? null : content.toString());
    } else {
      // text the model wrote before its calls is content, as vLLM's parsers keep it
      if (content.isEmpty()) {
        m.putNull("content");
      } else {
        m.put("content", content.toString());
      }
      ArrayNode out = m.putArray("tool_calls");
      for (int k = 0; k < calls.size(); k++) {
        ((ObjectNode) calls.get(k).get("function")).put("arguments", args.get(k).toString());
        out.add(calls.get(k));
      }
    }
    c.put("finish_reason", finishReason(choice.finishReason(), parser.isCall()));
  }

  private void complete(RequestUsage u) {
    if (done) {
      return;
    }
    promptTokens += u.promptTokens();
    cachedTokens += u.cachedTokens();
    if (--pending > 0) {
      return;
    }
    done = true;
    if (req.stream()) {
      if (req.includeUsage()) {
        ObjectNode last = chunks.header(chunks.chunkObject());
        last.putArray("choices");
        last.set("usage", usage());
        sse(last);
      }
      endStream();
      return;
    }
    ObjectNode root = chunks.header(chunks.responseObject());
    ArrayNode out = root.putArray("choices");
    for (int i = 0; i < choices.length; i++) {
      ObjectNode c = out.addObject();
      c.put("index", i);
      if (req.chat()) {
        message(c, i);
      } else {
        c.put("text", choices[i].text());
        c.put("finish_reason", choices[i].finishReason());
      }
      c.set("logprobs", req.logprobs() == null ? null
          : LogprobsJson.format(req.chat(), choices[i].logprobs()));
    }
    root.set("usage", usage());
    responses.json(ctx, 200, root);
  }

  /** Completion tokens are those the client got: none after a stop string. */
  private ObjectNode usage() {
    int completionTokens = 0;
    for (ChoiceState c : choices) {
      completionTokens += c.tokens();
    }
    ObjectNode u = Responses.JSON.createObjectNode();
    u.put("prompt_tokens", promptTokens);
    u.put("completion_tokens", completionTokens);
    u.put("total_tokens", promptTokens + completionTokens);
    u.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
    if (req.reasoning() != null) {
      int reasoningTokens = 0;
      for (ChoiceState c : choices) {
        reasoningTokens += c.reasoningTokens();
      }
      u.putObject("completion_tokens_details").put("reasoning_tokens", reasoningTokens);
    }
    return u;
  }

  /**
   * Fails the whole call. Before the stream started: a plain error response; inside a stream: an
   * error event in the same shape, then {@code data: [DONE]}.
   */
  void error(int status, String message) {
    if (done) {
      return;
    }
    done = true;
    ApiException e = new ApiException(status, status >= 500 ? "server_error"
        : status == 429 ? "rate_limit_error" : "invalid_request_error", null, null, message);
    if (req.stream()) {
      sse(Responses.errorBody(e));
      endStream();
      return;
    }
    responses.error(ctx, e);
  }

  private void endStream() {
    ctx.write(new DefaultHttpContent(Unpooled.copiedBuffer(DONE, StandardCharsets.UTF_8)));
    ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT);
  }

  private void sse(ObjectNode event) {
    ctx.writeAndFlush(new DefaultHttpContent(StreamChunks.frame(event)));
  }
}
