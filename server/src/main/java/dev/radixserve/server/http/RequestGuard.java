package dev.radixserve.server.http;

import dev.radixserve.server.api.ApiException;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.util.ReferenceCountUtil;
import java.net.URI;

/**
 * Lets only well-formed requests through to the handler: a request the decoder could not read
 * gets 414 (request line over 4 KB), 431 (headers over 8 KB) or 400 (anything else: a NUL or a
 * bare CR in a header, a bad chunk), an HTTP/1.1 request without exactly one {@code Host}
 * (RFC 9112 §3.2) or with a target that is not a valid path (bad percent-encoding) gets 400,
 * and an expectation other than {@code 100-continue} 417; each in OpenAI's error shape, after
 * which the connection closes, since what follows on it cannot be trusted.
 */
@ChannelHandler.Sharable
final class RequestGuard extends ChannelInboundHandlerAdapter {

  private final Responses responses;

  RequestGuard(Responses responses) {
    this.responses = responses;
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    if (!(msg instanceof FullHttpRequest req)) {
      ctx.fireChannelRead(msg);
      return;
    }
    DecoderResult result = req.decoderResult();
    ApiException refusal = result.isFailure() ? malformed(result.cause()) : check(req);
    if (refusal != null) {
      ReferenceCountUtil.release(req);
      responses.errorAndClose(ctx, refusal);
      return;
    }
    ctx.fireChannelRead(req);
  }

  private static ApiException malformed(Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return new ApiException(414, "invalid_request_error", null, "uri_too_long",
          "the request line is longer than 4096 bytes");
    }
    if (cause instanceof TooLongHttpHeaderException) {
      return new ApiException(431, "invalid_request_error", null, "headers_too_large",
          "the request headers are larger than 8192 bytes");
    }
    return new ApiException(400, "invalid_request_error", null, "malformed_request",
        "malformed HTTP request: " + cause.getMessage());
  }

  private static ApiException check(FullHttpRequest req) {
    if (req.protocolVersion().equals(HttpVersion.HTTP_1_1)
        && req.headers().getAll(HttpHeaderNames.HOST).size() != 1) {
      return ApiException.badRequest(null, "an HTTP/1.1 request needs exactly one Host header");
    }
    String expect = req.headers().get(HttpHeaderNames.EXPECT);
    if (expect != null && !expect.strip().equalsIgnoreCase("100-continue")) {
      return new ApiException(417, "invalid_request_error", null, "expectation_failed",
          "unsupported expectation: Expect: " + expect);
    }
    try {
      path(req.uri());
    } catch (IllegalArgumentException e) {
      return ApiException.badRequest(null, "invalid request target: " + e.getMessage());
    }
    return null;
  }

  /**
   * The decoded path of a request target in origin form ({@code /v1/models?x}) or absolute form
   * ({@code http://host/v1/models}).
   *
   * @throws IllegalArgumentException for any other form or a bad percent-encoding
   */
  static String path(String uri) {
    if (uri.startsWith("/")) {
      return new QueryStringDecoder(uri).path();
    }
    if (uri.regionMatches(true, 0, "http://", 0, 7) || uri.regionMatches(true, 0, "https://", 0, 8)) {
      String raw = URI.create(uri).getRawPath();
      return new QueryStringDecoder(raw == null || raw.isEmpty() ? "/" : raw).path();
    }
    throw new IllegalArgumentException("not a path: " + uri);
  }
}
