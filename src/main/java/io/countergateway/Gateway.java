package io.countergateway;

import io.countergateway.config.GatewayConfig;
import io.countergateway.ingest.IngestVerticle;
import io.countergateway.logging.ConfigSummary;
import io.countergateway.metrics.GatewayMeters;
import io.countergateway.read.ReadVerticle;
import io.countergateway.store.CounterStore;
import io.countergateway.store.SqlStores;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running gateway inside a Vert.x instance: read verticles, then one ingest verticle per core.
 * Used by {@code Main}, by the tests and by the benchmark alike.
 */
public final class Gateway {
  private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
  /** A database that does not answer at start stops the start, rather than leaving a gateway that never gets ready. */
  private static final long START_TIMEOUT_SECONDS = 60;

  private final Vertx vertx;
  private final GatewayServices services;
  private final int port;
  private final List<String> ingestDeployments = new ArrayList<>();
  private final List<String> readDeployments = new ArrayList<>();

  private Gateway(Vertx vertx, GatewayServices services, int port) {
    this.vertx = vertx;
    this.services = services;
    this.port = port;
  }

  public static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry) {
    GatewayServices services = new GatewayServices(config, new GatewayState(), registry);
    GatewayMeters.register(registry, services.state());
    if (config.getHttp().getPort() == 0) {
      config.getHttp().setPort(freePort());
    }
    Gateway gateway = new Gateway(vertx, services, config.getHttp().getPort());
    return gateway.createSchema()
      .timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)
      .compose(v -> gateway.deploy().timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS))
      .onSuccess(v -> ConfigSummary.logStart(LOG, config, gateway.port, gateway.ingestDeployments.size()))
      .map(gateway);
  }

  private Future<Void> createSchema() {
    if (!services.config().getDatabase().isCreateSchema()) {
      return Future.succeededFuture();
    }
    CounterStore store = SqlStores.create(vertx, services.config().getDatabase(), 1, START_TIMEOUT_SECONDS * 1000L);
    return store.createSchema().eventually(store::close);
  }

  private Future<Void> deploy() {
    Future<Void> chain = Future.succeededFuture();
    for (int i = 0; i < services.config().getReads().getInstances(); i++) {
      boolean first = i == 0;
      chain = chain.compose(v -> vertx.deployVerticle(new ReadVerticle(services, first)).map(id -> {
        readDeployments.add(id);
        return null;
      }));
    }
    int instances = services.config().getHttp().getInstances() > 0
      ? services.config().getHttp().getInstances() : defaultIngestInstances();
    for (int i = 0; i < instances; i++) {
      int index = i;
      chain = chain.compose(v -> vertx.deployVerticle(new IngestVerticle(services, index, instances)).map(id -> {
        ingestDeployments.add(id);
        return null;
      }));
    }
    return chain;
  }

  /**
   * One ingest verticle per core, not per event loop (Vert.x runs two loops per core): with ack=commit and a
   * fixed number of client connections, fewer coalescers carry more increments per flush, and commits, not CPU,
   * are what bounds the rate.
   */
  static int defaultIngestInstances() {
    return Math.max(1, Runtime.getRuntime().availableProcessors());
  }

  /** Graceful stop: readiness goes false, intake stops, everything pending is flushed, pools close. */
  public Future<Void> stop() {
    long startNanos = System.nanoTime();
    services.state().startDraining();
    return Future.join(ingestDeployments.stream().map(vertx::undeploy).toList())
      .onComplete(ingest -> services.state().logDrain(startNanos))
      .transform(ingest -> Future.join(readDeployments.stream().map(vertx::undeploy).toList()))
      .mapEmpty();
  }

  public int port() {
    return port;
  }

  public GatewayState state() {
    return services.state();
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
