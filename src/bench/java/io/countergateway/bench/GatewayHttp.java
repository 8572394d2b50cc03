package io.countergateway.bench;

import io.vertx.core.Future;

/**
 * The gateway over HTTP: each writer has its own keep-alive connection and POSTs {@code {"delta":1}} to
 * {@code /v1/counters/bench/{id}/increments}, answered 200 once committed (ack=commit). With {@code batch > 1}
 * each request is a {@code POST /v1/increments} of that many increments.
 */
final class GatewayHttp extends GatewayStrategy {
  private final int batch;
  private HttpLoad http;

  GatewayHttp(BenchContext ctx, int batch) {
    super(ctx, batch > 1 ? "bench_gw_http_batch" : "bench_gw_http");
    this.batch = batch;
  }

  @Override
  public String name() {
    return batch > 1 ? "gateway-http-batch" : "gateway-http";
  }

  @Override
  public String title() {
    return batch > 1 ? "gateway, HTTP batch of " + batch + " (ack=commit)" : "gateway, HTTP (ack=commit)";
  }

  @Override
  public int incrementsPerOperation() {
    return batch;
  }

  @Override
  public Future<Void> setup() {
    return super.setup().onSuccess(started ->
      http = new HttpLoad(ctx.vertx(), gateway.port(), ctx.options().concurrency() + ctx.options().readers()));
  }

  @Override
  public Future<Writer> writer() {
    return http.connect().map(conn -> new Writer() {
      @Override
      public Future<Void> increment(int[] counters) {
        if (batch == 1) {
          return HttpLoad.outcome(HttpLoad.post(conn, "/v1/counters/" + NAMESPACE + "/" + id(counters[0]) + "/increments",
            "{\"delta\":1}"), 200);
        }
        StringBuilder body = new StringBuilder(counters.length * 40).append('[');
        for (int i = 0; i < counters.length; i++) {
          body.append(i == 0 ? "" : ",").append("{\"type\":\"").append(NAMESPACE).append("\",\"id\":\"")
            .append(id(counters[i])).append("\",\"delta\":1}");
        }
        return HttpLoad.outcome(HttpLoad.post(conn, "/v1/increments", body.append(']').toString()), 200);
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  @Override
  public Future<Reader> reader() {
    String uri = "/v1/counters/" + NAMESPACE + "/" + id(0);
    return http.connect().map(conn -> new Reader() {
      @Override
      public Future<Long> read() {
        return HttpLoad.get(conn, uri).compose(reply -> reply.status() == 200
          ? Future.succeededFuture(reply.body().toJsonObject().getLong("value"))
          : Future.failedFuture("HTTP " + reply.status() + " " + reply.body()));
      }

      @Override
      public Future<Void> close() {
        return conn.close();
      }
    });
  }

  @Override
  public Future<Void> close() {
    Future<Void> closed = http == null ? Future.succeededFuture() : http.close();
    return closed.transform(c -> super.close());
  }
}
