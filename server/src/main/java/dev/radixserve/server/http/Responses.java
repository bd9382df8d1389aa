package dev.radixserve.server.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.radixserve.server.api.ApiException;
import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AttributeKey;
import java.nio.charset.StandardCharsets;

/**
 * Writes whole responses (JSON, text, errors) in the protocol version of the request they answer,
 * and counts them. Every error has OpenAI's shape {@code {"error": {message, type, param, code}}}.
 * Event loop only.
 */
final class Responses {

  static final ObjectMapper JSON = new ObjectMapper();

  /** The HTTP version of the request being answered on a channel (one at a time). */
  static final AttributeKey<HttpVersion> VERSION = AttributeKey.valueOf("radixserve.version");

  private final ServerMetrics metrics;

  Responses(ServerMetrics metrics) {
    this.metrics = metrics;
  }

  /** HTTP/1.0 for a 1.0 request, else 1.1 (also before any request was read). */
  static HttpVersion version(ChannelHandlerContext ctx) {
    HttpVersion v = ctx.channel().attr(VERSION).get();
    return v == null ? HttpVersion.HTTP_1_1 : v;
  }

  void json(ChannelHandlerContext ctx, int status, Object body) {
    ctx.writeAndFlush(response(version(ctx), status, bytes(body), "application/json"));
  }

  void text(ChannelHandlerContext ctx, int status, String body, String contentType) {
    ctx.writeAndFlush(response(version(ctx), status, body.getBytes(StandardCharsets.UTF_8),
        contentType));
  }

  void error(ChannelHandlerContext ctx, ApiException e) {
    ctx.writeAndFlush(errorResponse(version(ctx), e));
  }

  /**
   * The error, then the connection closes ({@link Lingering}): what the client sent after the
   * request is not read as requests. Written past the keep-alive handler, whose plain close
   * could turn unread input into a reset that destroys the response.
   */
  void errorAndClose(ChannelHandlerContext ctx, ApiException e) {
    FullHttpResponse r = errorResponse(version(ctx), e);
    r.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    if (ctx.pipeline().get(HttpServerKeepAliveHandler.class) != null) {
      ctx.pipeline().remove(HttpServerKeepAliveHandler.class);
    }
    ctx.writeAndFlush(r).addListener(f -> Lingering.close(ctx.channel()));
  }

  /** A counted error response, for handlers that write it themselves. */
  FullHttpResponse errorResponse(HttpVersion version, ApiException e) {
    FullHttpResponse r = response(version, e.status(), bytes(errorBody(e)), "application/json");
    if (e.status() == 401) {
      r.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
    }
    return r;
  }

  static ObjectNode errorBody(ApiException e) {
    ObjectNode err = JSON.createObjectNode();
    ObjectNode inner = err.putObject("error");
    inner.put("message", e.getMessage());
    inner.put("type", e.type());
    inner.put("param", e.param());
    inner.put("code", e.code() != null ? e.code() : Integer.toString(e.status()));
    return err;
  }

  void count(int status) {
    metrics.httpResponse(status);
  }

  private FullHttpResponse response(HttpVersion version, int status, byte[] body,
      String contentType) {
    FullHttpResponse r = new DefaultFullHttpResponse(version, HttpResponseStatus.valueOf(status),
        Unpooled.wrappedBuffer(body));
    r.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length);
    count(status);
    return r;
  }

  private static byte[] bytes(Object body) {
    try {
      return JSON.writeValueAsBytes(body);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
