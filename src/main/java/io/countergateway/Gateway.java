package io.countergateway;

import io.countergateway.StartFailures.StartFailure;
import io.countergateway.cluster.ReplicaLanes;
import io.countergateway.runtime.GatewayServices;
import io.countergateway.runtime.GatewayState;
import io.countergateway.config.GatewayConfig;
import io.countergateway.ingest.IngestVerticle;
import io.countergateway.logging.ConfigSummary;
import io.countergateway.metrics.GatewayMeters;
import io.countergateway.read.ReadVerticle;
import io.countergateway.rollup.RollupVerticle;
import io.countergateway.store.CounterStore;
import io.countergateway.store.SqlStores;
import io.micrometer.core.instrument.MeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
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
  private static final long SCHEMA_ATTEMPT_SECONDS = 15;
  private static final int SCHEMA_ATTEMPTS = 3;

  private final Vertx vertx;
  private final GatewayServices services;
  /** The bound HTTP port, read back from the ingest verticles' shared server once it listens. */
  private volatile int port;
  private final List<String> ingestDeployments = new ArrayList<>();
  private final List<String> readDeployments = new ArrayList<>();
  private final List<String> jobDeployments = new ArrayList<>();
  private ReplicaLanes lanes;

  private Gateway(Vertx vertx, GatewayServices services) {
    this.vertx = vertx;
    this.services = services;
  }

  public static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry) {
    return start(vertx, config, registry, Clock.systemUTC());
  }

  /** {@code clock}: the UTC clock that puts windowed increments into their buckets (a fixed one in tests). */
  public static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry, Clock clock) {
    GatewayServices services = new GatewayServices(config, new GatewayState(), registry, clock);
    GatewayMeters.register(registry, services.state(), config.getNamespaces().keySet());
    Gateway gateway = new Gateway(vertx, services);
    // one connection first: a database that is not there, speaks another protocol or refuses the credentials stops
    // the start at once, with a line naming the key to fix (StartFailures), before any pool retries or waits
    return SqlStores.probe(vertx, config.getDatabase(), StartFailures.DATABASE_PROBE_MS)
      .recover(failure -> Future.failedFuture(new StartFailure(StartFailures.database(failure, config.getDatabase()),
        failure)))
      .compose(v -> gateway.createSchema())
      .timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)
      .recover(failure -> Future.failedFuture(failure instanceof StartFailure ? failure
        : SqlStores.explainStartFailure(config.getDatabase(), failure)))
      .compose(v -> ReplicaLanes.lease(vertx, config, ingestInstances(config)).timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS))
      .compose(lanes -> {
        gateway.lanes = lanes;
        return gateway.deploy().timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      })
      .onSuccess(v -> ConfigSummary.logStart(LOG, config, gateway.port, gateway.ingestDeployments.size(),
        vertx.isNativeTransportEnabled() ? "epoll" : "nio"))
      .onFailure(e -> {
        if (gateway.lanes != null) {
          gateway.lanes.release(); // a replica that did not start must not keep renewing lanes
        }
      })
      .recover(failure -> Future.failedFuture(failure instanceof StartFailure ? failure
        : new StartFailure(StartFailures.starting(failure, config), failure)))
      .map(gateway);
  }

  private Future<Void> createSchema() {
    if (!services.config().getDatabase().isCreateSchema()) {
      CounterStore store = SqlStores.create(vertx, services.config().getDatabase(), "schema", 1, true,
      SCHEMA_ATTEMPT_SECONDS * 1000L);
      return store.checkSchema().timeout(SCHEMA_ATTEMPT_SECONDS, TimeUnit.SECONDS).onComplete(done -> store.close());
    }
    return createSchemaAttempt(1);
  }

  /**
   * Replicas starting together on a loaded machine can wait longer than the pool's connection timeout, and the
   * 5.0.10 pool then loses the failure (a NullPointerException in its cancel path, and again in its close): the
   * attempt never completes, nor does closing its pool. Each attempt therefore has its own deadline and a fresh
   * pool, closed without waiting.
   */
  private Future<Void> createSchemaAttempt(int attempt) {
    CounterStore store = SqlStores.create(vertx, services.config().getDatabase(), "schema", 1, true,
      SCHEMA_ATTEMPT_SECONDS * 1000L);
    return store.createSchema()
      .timeout(SCHEMA_ATTEMPT_SECONDS, TimeUnit.SECONDS)
      .onComplete(done -> store.close())
      .recover(failure -> {
        if (attempt >= SCHEMA_ATTEMPTS) {
          return Future.failedFuture(failure);
        }
        LOG.warn("creating the schema failed (attempt {} of {}), trying again: {}", attempt, SCHEMA_ATTEMPTS, failure.toString());
        return createSchemaAttempt(attempt + 1);
      });
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
    chain = chain.compose(v -> vertx.deployVerticle(new RollupVerticle(services)).map(id -> {
      jobDeployments.add(id);
      return null;
    }));
    for (int i = 0; i < ingestInstances(services.config()); i++) {
      int index = i;
      IngestVerticle verticle = new IngestVerticle(services, index, lanes.lane(index), ingestInstances(services.config()));
      chain = chain.compose(v -> vertx.deployVerticle(verticle).map(id -> {
        ingestDeployments.add(id);
        // every ingest verticle listens on one shared port: with port 0 configured, the one Vert.x bound
        port = verticle.actualPort();
        return null;
      }));
    }
    return chain;
  }

  private static int ingestInstances(GatewayConfig config) {
    return config.getHttp().getInstances() > 0 ? config.getHttp().getInstances() : defaultIngestInstances();
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
      .transform(ingest -> lanes == null ? Future.succeededFuture() : lanes.release())
      .transform(released -> Future.join(readDeployments.stream().map(vertx::undeploy).toList()))
      .transform(reads -> Future.join(jobDeployments.stream().map(vertx::undeploy).toList()))
      .mapEmpty();
  }

  public int port() {
    return port;
  }

  /** The lanes this replica's coalescers write, in ingest-verticle order. */
  public List<Integer> lanes() {
    return lanes.lanes();
  }

  public GatewayState state() {
    return services.state();
  }
}
