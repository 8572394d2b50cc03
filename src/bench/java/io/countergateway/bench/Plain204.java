package io.countergateway.bench;

import io.vertx.core.Future;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;

/** The HTTP baseline row: the same requests as gateway-http against a {@link PlainHttpServer}; nothing is stored. */
final class Plain204 implements Strategy {
  private final BenchContext ctx;
  private String deployment;
  private HttpLoad http;

  Plain204(BenchContext ctx) {
    this.ctx = ctx;
  }

  @Override
  public String name() {
    return "plain-204";
  }

  @Override
  public String title() {
    return "plain Vert.x HTTP 204 (baseline, no database)";
  }

  @Override
  public boolean durable() {
    return false;
  }

  @Override
  public boolean checkable() {
    return false;
  }

  @Override
  public Future<Void> setup() {
    int port = freePort();
    return PlainHttpServer.deploy(ctx.vertx(), "127.0.0.1", port, PlainHttpServer.gatewayShares())
      .onSuccess(id -> {
        deployment = id;
        http = new HttpLoad(ctx.vertx(), port, ctx.options().concurrency() + ctx.options().readers());
      })
      .mapEmpty();
  }

  @Override
  public Future<Writer> writer() {
    return http.connect().map(conn -> new Writer() {
      @Override
      public Future<Void> increment(int[] counters) {
        return HttpLoad.outcome(HttpLoad.post(conn, "/v1/counters/bench/" + GatewayStrategy.id(counters[0])
          + "/increments", "{\"delta\":1}"), 204);
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  @Override
  public Future<Reader> reader() {
    return Future.failedFuture(new UnsupportedOperationException("the plain server stores nothing to read"));
  }

  @Override
  public Future<Map<Integer, Long>> values(List<Integer> counters) {
    return Future.succeededFuture(Map.of());
  }

  @Override
  public Future<Long> total() {
    return Future.succeededFuture(0L);
  }

  @Override
  public Future<Void> close() {
    Future<Void> closed = http == null ? Future.succeededFuture() : http.close();
    return closed.transform(c -> deployment == null ? Future.succeededFuture() : ctx.vertx().undeploy(deployment));
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
