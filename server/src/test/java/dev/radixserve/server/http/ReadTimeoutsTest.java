package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.radixserve.server.metrics.ServerMetrics;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The connection deadlines on an embedded channel with frozen time: no test waits. */
class ReadTimeoutsTest {

  private static final long IDLE = 5000;
  private static final long HEAD = 1000;
  private static final long BODY = 2000;

  private final ServerMetrics metrics = new ServerMetrics();
  private final List<HttpRequest> requests = new ArrayList<>();

  @AfterEach
  void close() {
    metrics.close();
  }

  private EmbeddedChannel channel() {
    ReadTimeouts t = new ReadTimeouts(Duration.ofMillis(IDLE), Duration.ofMillis(HEAD),
        Duration.ofMillis(BODY), new Responses(metrics), new ConnectionLimit.State());
    EmbeddedChannel ch = new EmbeddedChannel();
    ch.freezeTime();
    ch.pipeline().addLast(t.bytesWatcher(), new HttpServerCodec(), t,
        new ChannelInboundHandlerAdapter() {
          @Override
          public void channelRead(ChannelHandlerContext ctx, Object msg) {
            if (msg instanceof HttpRequest r) {
              requests.add(r);
            }
            ReferenceCountUtil.release(msg);
          }
        });
    return ch;
  }

  private static void send(EmbeddedChannel ch, String s) {
    ch.writeInbound(Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1));
  }

  private static void advance(EmbeddedChannel ch, long ms) {
    ch.advanceTimeBy(ms, TimeUnit.MILLISECONDS);
    ch.runScheduledPendingTasks();
  }

  private static void answer(EmbeddedChannel ch) {
    ch.writeOutbound(new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK));
    assertTrue(written(ch).startsWith("HTTP/1.1 200 "));
  }

  /** Everything the channel wrote, as text. */
  static String written(EmbeddedChannel ch) {
    StringBuilder out = new StringBuilder();
    for (ByteBuf b = ch.readOutbound(); b != null; b = ch.readOutbound()) {
      out.append(b.toString(StandardCharsets.UTF_8));
      b.release();
    }
    return out.toString();
  }

  @Test
  void anIdleConnectionIsClosedWithoutAResponse() {
    EmbeddedChannel ch = channel();
    advance(ch, IDLE - 1);
    assertTrue(ch.isOpen());
    advance(ch, 1);
    assertFalse(ch.isOpen());
    assertEquals("", written(ch));
  }

  @Test
  void aHeadThatTricklesInGets408AtItsDeadline() {
    EmbeddedChannel ch = channel();
    send(ch, "GET /health HTTP/1.1\r\n");
    advance(ch, HEAD / 2);
    send(ch, "Host: x\r\n"); // more bytes do not move the deadline
    advance(ch, HEAD / 2 - 1);
    assertTrue(ch.isOpen());
    advance(ch, 1);
    assertFalse(ch.isOpen());
    String out = written(ch);
    assertTrue(out.startsWith("HTTP/1.1 408 "), out);
    assertTrue(out.contains("\"code\":\"request_timeout\""), out);
  }

  @Test
  void aBodyThatStallsGets408() {
    EmbeddedChannel ch = channel();
    send(ch, "POST /tokenize HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n{\"p");
    assertEquals(1, requests.size());
    advance(ch, BODY - 1);
    assertTrue(ch.isOpen());
    advance(ch, 1);
    assertTrue(written(ch).startsWith("HTTP/1.1 408 "));
    assertFalse(ch.isOpen());
  }

  @Test
  void aRequestBeingAnsweredHasNoDeadlineThenTheIdleOneStarts() {
    EmbeddedChannel ch = channel();
    send(ch, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    advance(ch, 100 * IDLE); // a long generation
    assertTrue(ch.isOpen());
    assertEquals("", written(ch));
    answer(ch);
    advance(ch, IDLE - 1);
    assertTrue(ch.isOpen());
    advance(ch, 1);
    assertFalse(ch.isOpen());
  }

  @Test
  void aPipelinedRequestIsTimedOnlyOnceTheOnesBeforeItAreAnswered() {
    EmbeddedChannel ch = channel();
    send(ch, "GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    send(ch, "GET /b HTTP/1.1\r\n");
    advance(ch, 10 * HEAD);
    assertTrue(ch.isOpen()); // /a is not answered yet: /b's head is not late
    answer(ch);
    send(ch, "Host: x\r\n"); // /b's head goes on arriving: now its deadline runs
    advance(ch, HEAD - 1);
    assertTrue(ch.isOpen());
    advance(ch, 1);
    assertTrue(written(ch).startsWith("HTTP/1.1 408 "));
    assertFalse(ch.isOpen());
    assertNull(ch.readInbound());
  }
}
