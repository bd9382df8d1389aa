package dev.radixserve.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.Test;

class ClientIdTest {

  private static HttpRequest request(String user) {
    // unvalidated: a blank value is what a sloppy gateway may send
    HttpRequest r = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.POST, "/v1/completions",
        false);
    if (user != null) {
      r.headers().set("X-User", user);
    }
    return r;
  }

  @Test
  void theNamedHeaderElseTheConnection() {
    EmbeddedChannel ch = new EmbeddedChannel();
    String connection = "connection-" + ch.id().asShortText();
    ClientId byHeader = new ClientId("X-User");
    assertEquals("alice", byHeader.of(ch, request("alice")));
    assertEquals(connection, byHeader.of(ch, request(null)));
    assertEquals(connection, byHeader.of(ch, request("  ")));
    assertEquals("b".repeat(ClientId.MAX_LENGTH), byHeader.of(ch, request("b".repeat(300))));
    assertEquals(connection, new ClientId(null).of(ch, request("alice")));
    assertEquals(connection, new ClientId(null).of(ch, request(null)));
  }
}
