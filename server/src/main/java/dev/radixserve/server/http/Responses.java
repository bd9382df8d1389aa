package dev.radixserve.server.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;

/** Writes whole responses (JSON, text, errors) and counts them. Event loop only. */
final class Responses {

  static final ObjectMapper JSON = new ObjectMapper();

  private final ServerMetrics metrics;

  Responses(ServerMetrics metrics) {
    this.metrics = metrics;
  }

  void json(ChannelHandlerContext ctx, int status, Object body) {
    try {
      send(ctx, status, JSON.writeValueAsBytes(body), "application/json");
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  void text(ChannelHandlerContext ctx, int status, String body, String contentType) {
    send(ctx, status, body.getBytes(StandardCharsets.UTF_8), contentType);
  }

  void error(ChannelHandlerContext ctx, ApiException e) {
    ObjectNode err = JSON.createObjectNode();
    ObjectNode inner = err.putObject("error");
    inner.put("message", e.getMessage());
    inner.put("type", e.type());
    inner.put("param", e.param());
    inner.put("code", e.code() != null ? e.code() : Integer.toString(e.status()));
    json(ctx, e.status(), err);
  }

  void count(int status) {
    metrics.httpResponse(status);
  }

  private void send(ChannelHandlerContext ctx, int status, byte[] body, String contentType) {
    FullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.valueOf(status), Unpooled.wrappedBuffer(body));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    count(status);
    ctx.writeAndFlush(r);
  }
}
