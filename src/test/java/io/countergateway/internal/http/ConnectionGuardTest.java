package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.VirtualTimers;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.SocketAddress;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The connection guard's deadlines on virtual time, with {@code limits.headerTimeout} 10 s: the gateway announces
 * {@code Keep-Alive: timeout=5} and closes a used connection only once idle 10 s, looking every 10 s.
 */
@DisplayName("The connection guard's deadlines")
class ConnectionGuardTest {
  private final VirtualTimers timers = new VirtualTimers();
  private final GatewayConfig config = GatewayConfig.fromJson(new JsonObject()
    .put("limits", new JsonObject().put("headerTimeout", "10s"))
    .put("namespaces", new JsonObject().put("likes", new JsonObject())));
  private final ConnectionGuard guard = new ConnectionGuard(timers, new EdgeLimits(config.getLimits(),
    config.getMemoryBounds(), new SimpleMeterRegistry()), config.getHttp().getTrustedProxies(), config.getLimits());

  /** A connection from one address that records whether the guard closed it. */
  private static final class Connection {
    boolean closed;
    final HttpConnection http = (HttpConnection) Proxy.newProxyInstance(HttpConnection.class.getClassLoader(),
      new Class<?>[] {HttpConnection.class}, (proxy, method, args) -> switch (method.getName()) {
        case "remoteAddress" -> SocketAddress.inetSocketAddress(40_000, "192.0.2.7");
        case "closeHandler" -> proxy;
        case "close" -> {
          closed = true;
          yield null;
        }
        case "hashCode" -> System.identityHashCode(proxy);
        case "equals" -> proxy == args[0];
        default -> throw new UnsupportedOperationException(method.getName());
      });
  }

  /** A request on {@code connection} whose answer has ended once {@code ended[0]} is true; its headers go to {@code headers}. */
  private static HttpServerRequest request(Connection connection, HttpVersion version, boolean[] ended,
                                           MultiMap headers) {
    HttpServerResponse response = (HttpServerResponse) Proxy.newProxyInstance(HttpServerResponse.class.getClassLoader(),
      new Class<?>[] {HttpServerResponse.class}, (proxy, method, args) -> switch (method.getName()) {
        case "putHeader" -> {
          headers.set(args[0].toString(), args[1].toString());
          yield proxy;
        }
        case "ended" -> ended[0];
        case "closed" -> false;
        default -> throw new UnsupportedOperationException(method.getName());
      });
    return (HttpServerRequest) Proxy.newProxyInstance(HttpServerRequest.class.getClassLoader(),
      new Class<?>[] {HttpServerRequest.class}, (proxy, method, args) -> switch (method.getName()) {
        case "connection" -> connection.http;
        case "version" -> version;
        case "response" -> response;
        default -> throw new UnsupportedOperationException(method.getName());
      });
  }

  /** A request answered at once. */
  private void answered(Connection connection) {
    guard.watching(request -> { }).handle(request(connection, HttpVersion.HTTP_1_1, new boolean[] {true},
      MultiMap.caseInsensitiveMultiMap()));
  }

  @Test
  @DisplayName("an HTTP/1.1 answer says Keep-Alive: timeout=5; an HTTP/2 one says nothing (HTTP/2 forbids the header)")
  void announced() {
    Connection connection = new Connection();
    guard.opened(connection.http);
    MultiMap http1 = MultiMap.caseInsensitiveMultiMap();
    MultiMap http2 = MultiMap.caseInsensitiveMultiMap();
    guard.watching(request -> { }).handle(request(connection, HttpVersion.HTTP_1_1, new boolean[] {true}, http1));
    guard.watching(request -> { }).handle(request(connection, HttpVersion.HTTP_2, new boolean[] {true}, http2));
    assertThat(http1.get("Keep-Alive")).isEqualTo("timeout=5");
    assertThat(http2.contains("Keep-Alive")).isFalse();
  }

  @Test
  @DisplayName("a connection that sends no whole request headers within limits.headerTimeout is closed then")
  void slowHeaders() {
    Connection connection = new Connection();
    guard.opened(connection.http);
    timers.advance(Duration.ofSeconds(10).minusMillis(1));
    assertThat(connection.closed).isFalse();
    timers.advance(Duration.ofMillis(1));
    assertThat(connection.closed).isTrue();
  }

  @Test
  @DisplayName("a used connection is never closed idle less than the deadline after its last answer, and is closed within two looks after")
  void usedConnectionClosedOnlyPastTheDeadline() {
    Connection connection = new Connection();
    guard.opened(connection.http);
    timers.advance(Duration.ofMillis(9_999));
    answered(connection); // just before the first look: that look sees it active
    timers.advance(Duration.ofMillis(1));
    timers.advance(Duration.ofSeconds(9).plusMillis(999));
    assertThat(connection.closed).as("idle 10 s less a millisecond after its answer").isFalse();
    timers.advance(Duration.ofSeconds(10));
    assertThat(connection.closed).as("at the second look after its answer").isTrue();
  }

  @Test
  @DisplayName("a request that was in progress at a look and ended just before the next keeps its connection open for another deadline")
  void longRequestThenIdle() {
    Connection connection = new Connection();
    guard.opened(connection.http);
    boolean[] ended = {false};
    guard.watching(request -> { }).handle(request(connection, HttpVersion.HTTP_1_1, ended,
      MultiMap.caseInsensitiveMultiMap()));
    timers.advance(Duration.ofSeconds(10)); // in progress at this look
    timers.advance(Duration.ofSeconds(9).plusMillis(999));
    ended[0] = true; // answered a millisecond before the next look
    timers.advance(Duration.ofMillis(1));
    assertThat(connection.closed).as("a millisecond after its answer").isFalse();
    timers.advance(Duration.ofSeconds(9).plusMillis(999));
    assertThat(connection.closed).as("idle less than the deadline").isFalse();
    timers.advance(Duration.ofMillis(1));
    assertThat(connection.closed).as("idle the deadline, at a look").isTrue();
  }
}
