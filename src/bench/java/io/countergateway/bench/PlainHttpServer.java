package io.countergateway.bench;

import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerOptions;

/**
 * The baseline of src/DESIGN.md §7: a plain Vert.x HTTP server that answers every request with 204 once its body has
 * arrived, on as many server shares as the gateway has ingest verticles, no routing, no database.
 */
public final class PlainHttpServer extends VerticleBase {
  private final String host;
  private final int port;

  private PlainHttpServer(String host, int port) {
    this.host = host;
    this.port = port;
  }

  /** The gateway's ingest verticles by default (http.instances: 0): one per core. */
  public static int gatewayShares() {
    return Math.max(1, Runtime.getRuntime().availableProcessors());
  }

  /** Deploys {@code instances} shares of the server on {@code host:port}; completes with the deployment id. */
  public static Future<String> deploy(Vertx vertx, String host, int port, int instances) {
    return vertx.deployVerticle(() -> new PlainHttpServer(host, port), new DeploymentOptions().setInstances(instances));
  }

  @Override
  public Future<?> start() {
    return vertx.createHttpServer(new HttpServerOptions().setHost(host).setPort(port).setTcpNoDelay(true))
      // one header (Vert.x drops Content-Length on a 204), so that wrk's Lua response() sees the reply: wrk
      // skips replies without any header
      .requestHandler(request -> request.end().onComplete(ended -> request.response().setStatusCode(204)
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-store").end()))
      .listen();
  }
}
