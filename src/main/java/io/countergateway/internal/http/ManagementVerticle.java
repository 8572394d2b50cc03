package io.countergateway.internal.http;

import io.countergateway.internal.runtime.GatewayServices;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;

import java.util.concurrent.TimeUnit;

/**
 * The server of {@code management.port}: health and metrics ({@link HttpApi#managementRouter}) on a port of their own.
 * Deployed before the ingest verticles, so {@code /health/live} answers while they replay their journals (and
 * {@code /health/ready} says they are not ready yet). Plain HTTP/1.1 on {@code http.host}: the port is meant for the
 * kubelet and Prometheus on the pod network, which the manifests' NetworkPolicy keeps it to.
 */
public final class ManagementVerticle extends VerticleBase {
  private final GatewayServices services;
  private HttpServer server;

  public ManagementVerticle(GatewayServices services) {
    this.services = services;
  }

  @Override
  public Future<?> start() {
    HttpServerOptions options = new HttpServerOptions()
      .setHost(services.config().getHttp().getHost()).setPort(services.config().getManagement().getPort())
      .setCompressionSupported(false).setHttp2ClearTextEnabled(false)
      .setPerMessageWebSocketCompressionSupported(false).setPerFrameWebSocketCompressionSupported(false)
      .setMaxHeaderSize(services.config().getLimits().getMaxHeaderBytes())
      .setIdleTimeout(services.config().getLimits().getIdleTimeoutSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS);
    // Vert.x closes a connection silent for limits.idleTimeout: the same announcement as the ingest servers' keeps an
    // honouring client (a scraper, a probe) off a connection that is closing
    String keepAlive = ConnectionGuard.keepAlive(services.config().getLimits());
    Router router = HttpApi.managementRouter(vertx, services);
    return vertx.createHttpServer(options).requestHandler(request -> {
        request.response().putHeader(HttpHeaders.KEEP_ALIVE, keepAlive);
        router.handle(request);
      })
      .invalidRequestHandler(HttpApi::invalidRequest).listen().onSuccess(listening -> server = listening);
  }

  /** The port the server is bound to, once started. */
  public int actualPort() {
    return server.actualPort();
  }
}
