package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Pipelined requests reach the handler one at a time and are answered in request order. */
class RequestOrderTest {

  private final List<ChannelHandlerContext> pending = new ArrayList<>();
  private final List<String> seen = new ArrayList<>();

  private EmbeddedChannel channel() {
    return new EmbeddedChannel(new HttpServerCodec(), new RequestOrder(),
        new HttpObjectAggregator(1024), new SimpleChannelInboundHandler<FullHttpRequest>() {
          @Override
          protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest r) {
            seen.add(r.uri() + " " + r.content().toString(StandardCharsets.UTF_8));
            pending.add(ctx); // answered later, as a generation would be
          }
        });
  }

  private static void answer(ChannelHandlerContext ctx, String body) {
    DefaultFullHttpResponse r = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1,
        HttpResponseStatus.OK, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
    r.headers().setInt(HttpHeaderNames.CONTENT_LENGTH, body.length());
    ctx.writeAndFlush(r);
  }

  @Test
  void laterRequestsWaitWithTheirBodiesUntilTheEarlierOneIsAnswered() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(Unpooled.copiedBuffer("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n"
        + "aPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nbbGET /c HTTP/1.1\r\nHost: x\r\n\r\n",
        StandardCharsets.ISO_8859_1));
    assertEquals(List.of("/slow a"), seen);
    assertFalse(ch.config().isAutoRead()); // reading pauses while requests wait
    answer(pending.get(0), "1");
    ch.runPendingTasks();
    assertEquals(List.of("/slow a", "/b bb"), seen);
    answer(pending.get(1), "2");
    ch.runPendingTasks();
    assertEquals(List.of("/slow a", "/b bb", "/c "), seen);
    assertTrue(ch.config().isAutoRead());
    answer(pending.get(2), "3");
    String out = ReadTimeoutsTest.written(ch);
    assertTrue(out.indexOf("\r\n\r\n1") < out.indexOf("\r\n\r\n2")
        && out.indexOf("\r\n\r\n2") < out.indexOf("\r\n\r\n3"), out);
  }

  @Test
  void answersWrittenOutOfOrderCannotHappenBecauseOneRequestIsOpenAtATime() {
    EmbeddedChannel ch = channel();
    ch.writeInbound(Unpooled.copiedBuffer("GET /1 HTTP/1.1\r\nHost: x\r\n\r\n"
        + "GET /2 HTTP/1.1\r\nHost: x\r\n\r\n", StandardCharsets.ISO_8859_1));
    assertEquals(1, pending.size()); // /2 is not dispatched, so nothing can answer it early
    answer(pending.get(0), "1");
    ch.runPendingTasks();
    answer(pending.get(1), "2");
    String out = ReadTimeoutsTest.written(ch);
    assertTrue(out.indexOf("\r\n\r\n1") < out.indexOf("\r\n\r\n2"), out);
  }
}
