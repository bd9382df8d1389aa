package dev.radixserve.server.http;

import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.cookie.Cookie;
import io.netty.handler.codec.http.cookie.ServerCookieDecoder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The API key on the cache view's routes. Programs send {@code Authorization: Bearer KEY} as for
 * the API. A browser cannot add that header to a page load or to an {@code EventSource}, so the
 * page's login form posts the key once to {@code /cache/login}, which sets a session cookie
 * holding a token derived from the key (SHA-256 of a fixed label and the key), not the key: the
 * cookie opens the read-only {@code /cache} routes and nothing else. It is {@code HttpOnly}
 * (scripts cannot read it), {@code SameSite=Strict} (other sites cannot send it) and limited to
 * {@code Path=/cache}. With no key configured every route is open.
 */
final class CacheViewAuth {

  static final String COOKIE = "radixserve_cache_view";
  /** The login page has no script and one inline style sheet. */
  static final String LOGIN_CSP = "default-src 'none'; style-src 'unsafe-inline';"
      + " form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

  private final byte[] key;
  private final String token;

  /** @param apiKey null when the server has none */
  CacheViewAuth(String apiKey) {
    this.key = apiKey == null ? null : apiKey.getBytes(StandardCharsets.UTF_8);
    this.token = apiKey == null ? null : HexFormat.of().formatHex(sha256(
        "radixserve cache view\n" + apiKey));
  }

  boolean required() {
    return key != null;
  }

  boolean allows(FullHttpRequest req) {
    if (key == null) {
      return true;
    }
    String authorization = req.headers().get(HttpHeaderNames.AUTHORIZATION);
    if (authorization != null && authorization.startsWith("Bearer ")
        && keyMatches(authorization.substring(7))) {
      return true;
    }
    String cookies = req.headers().get(HttpHeaderNames.COOKIE);
    if (cookies != null) {
      for (Cookie c : ServerCookieDecoder.LAX.decode(cookies)) {
        if (COOKIE.equals(c.name()) && MessageDigest.isEqual(
            token.getBytes(StandardCharsets.US_ASCII), c.value().getBytes(StandardCharsets.UTF_8))) {
          return true;
        }
      }
    }
    return false;
  }

  /** Constant-time comparison with the configured key (true when none is configured). */
  boolean keyMatches(String candidate) {
    return key == null
        || MessageDigest.isEqual(key, candidate.getBytes(StandardCharsets.UTF_8));
  }

  /** The {@code Set-Cookie} value after a successful login: a session cookie. */
  String cookie() {
    return COOKIE + "=" + token + "; Path=/cache; HttpOnly; SameSite=Strict";
  }

  static byte[] loginPage(boolean wrongKey) {
    String page = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>radixserve · cache view</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>
          body { font: 15px system-ui, sans-serif; background: #0f172a; color: #e2e8f0;
                 display: grid; place-items: center; height: 100vh; margin: 0 }
          form { background: #1e293b; padding: 24px 28px; border-radius: 8px; width: 340px }
          h1 { font-size: 18px; margin: 0 0 12px }
          p { color: #94a3b8; font-size: 13px }
          input { width: 100%%; box-sizing: border-box; padding: 8px; margin: 8px 0;
                  background: #0f172a; color: #e2e8f0; border: 1px solid #475569;
                  border-radius: 4px }
          button { padding: 8px 16px; background: #6366f1; color: white; border: 0;
                   border-radius: 4px; cursor: pointer }
          .error { color: #f87171 }
        </style></head>
        <body><form id="login" method="post" action="/cache/login">
          <h1>radix cache view</h1>
          <p>This server requires its API key. It is sent once; the browser keeps a session
             cookie that opens only the read-only cache view.</p>
          %s
          <input id="key" name="key" type="password" autocomplete="current-password"
                 placeholder="API key" autofocus required>
          <button id="login-button" type="submit">Open the cache view</button>
        </form></body></html>
        """.formatted(wrongKey ? "<p class=\"error\" id=\"login-error\">Wrong API key.</p>" : "");
    return page.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] sha256(String s) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 missing from the JDK", e);
    }
  }
}
