package io.countergateway.bench;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientConnection;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpConnectOptions;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;

/**
 * Vert.x HTTP/1.1 clients over loopback, one keep-alive connection per writer (like {@code wrk -c N}): the
 * connection is opened on the writer's event loop and carries one request at a time.
 */
final class HttpLoad {
  /** A response: its status and body. */
  record Reply(int status, Buffer body) {
  }

  private final HttpClientAgent client;
  private final int port;

  HttpLoad(Vertx vertx, int port, int maxConnections) {
    this.port = port;
    this.client = vertx.createHttpClient(new HttpClientOptions().setKeepAlive(true).setTcpNoDelay(true)
      .setDefaultHost("127.0.0.1").setDefaultPort(port), new PoolOptions().setHttp1MaxSize(maxConnections));
  }

  Future<HttpClientConnection> connect() {
    return client.connect(new HttpConnectOptions().setHost("127.0.0.1").setPort(port));
  }

  static Future<Reply> post(HttpClientConnection conn, String uri, String json) {
    return conn.request(HttpMethod.POST, uri)
      .compose(request -> request.putHeader(HttpHeaders.CONTENT_TYPE, "application/json").send(json))
      .compose(response -> response.body().map(body -> new Reply(response.statusCode(), body)));
  }

  static Future<Reply> get(HttpClientConnection conn, String uri) {
    return conn.request(HttpMethod.GET, uri)
      .compose(request -> request.send())
      .compose(response -> response.body().map(body -> new Reply(response.statusCode(), body)));
  }

  /**
   * What a reply means for the increments it carried: {@code ok} succeeds, 504 (and a lost connection) is an
   * unknown outcome, anything else failed and counted nothing (503 withdrawn, 4xx refused, 500 not written).
   */
  static Future<Void> outcome(Future<Reply> reply, int ok) {
    return reply.transform(result -> {
      if (result.failed()) {
        return Future.failedFuture(new Strategy.UnknownOutcome("no reply: " + result.cause(), result.cause()));
      }
      Reply r = result.result();
      if (r.status() == ok) {
        return Future.succeededFuture();
      }
      String message = "HTTP " + r.status() + " " + r.body();
      return Future.failedFuture(r.status() == 504
        ? new Strategy.UnknownOutcome(message, null) : new IllegalStateException(message));
    });
  }

  Future<Void> close() {
    return client.close();
  }
}
