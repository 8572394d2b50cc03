package io.countergateway.cluster;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.TestInstance;

import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three gateway processes on one database (PostgreSQL, then MariaDB), committing increments through all three while each is stopped with
 * SIGTERM and started again in turn; needs nothing but the embedded databases. No session waits for a lock meanwhile:
 * not on another replica's rows (lanes), nor a flush on its own source's fence (a source's fence advance and its
 * flushes never overlap, see store/FlushFence), nor on a starting replica's schema step (README "Rolling restart").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RollingRestartIT {
  private static final String TABLE = "rolling_counters";
  private static final int SENDERS = 24;

  private final List<GatewayProcess> gateways = new ArrayList<>();
  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void stopGateways() {
    gateways.forEach(GatewayProcess::close);
    gateways.clear();
  }

  @AfterAll
  void closeVertx() {
    await(vertx.close());
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("three replicas restarted one by one under load: every 200 is counted exactly once, and no session ever waits for a lock")
  void rollingRestartCountsEveryCommitOnce(String kind) throws InterruptedException {
    boolean postgres = kind.equals("postgres");
    JsonObject database = postgres ? TestDatabases.postgres() : TestDatabases.mariadb();
    List<Integer> ports = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int port = GatewayProcess.freePort();
      ports.add(port);
      JsonObject config = GatewayFixture.baseConfig(database, TABLE);
      config.getJsonObject("http").put("port", port);
      // 3 replicas x 2 ingest verticles x 2 slots per lane
      config.getJsonObject("namespaces").getJsonObject("downloads").put("slots", 12);
      gateways.add(GatewayProcess.start("rolling-" + kind + "-" + i, config));
    }
    gateways.forEach(gateway -> gateway.awaitListening(Duration.ofSeconds(90)));
    Pool sql = postgres
      ? PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(database.getString("host"))
        .setPort(database.getInteger("port")).setDatabase(database.getString("name")).setUser(database.getString("user"))
        .setPassword(database.getString("password")))
        .using(vertx).build()
      : MySQLBuilder.pool().connectingTo(new MySQLConnectOptions().setHost(database.getString("host"))
        .setPort(database.getInteger("port")).setDatabase(database.getString("name")).setUser(database.getString("user"))
        .setPassword(database.getString("password", ""))).using(vertx).build();
    LockWaitSampler sampler = new LockWaitSampler(vertx, sql, postgres ? PG_LOCK_WAITS : MARIADB_LOCK_WAITS);
    WebClient http = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setConnectTimeout(1_000),
      new PoolOptions().setHttp1MaxSize(SENDERS));

    Load load = new Load(http, ports);
    for (int sender = 0; sender < SENDERS; sender++) {
      int first = sender;
      vertx.runOnContext(v -> load.send(first));
    }
    List<String> restarts = new ArrayList<>();
    for (GatewayProcess gateway : gateways) {
      Thread.sleep(1_500);
      long stopping = System.nanoTime();
      int exit = gateway.stopGracefully(Duration.ofSeconds(40));
      long stopped = System.nanoTime();
      gateway.restart().awaitListening(Duration.ofSeconds(90));
      restarts.add(String.format("%s: exit %d, stop %d ms, start %d ms", gateway.name(), exit,
        (stopped - stopping) / 1_000_000, (System.nanoTime() - stopped) / 1_000_000));
      assertThat(exit).as(gateway.name() + " exits cleanly after SIGTERM").isZero();
    }
    Thread.sleep(1_500);
    load.stop();
    await(load.finished());
    sampler.stop();
    long sum = await(sql.query("SELECT COALESCE(SUM(count), 0) FROM " + TABLE).execute()
      .map(rows -> rows.iterator().next().getNumeric(0).longValue()));

    System.out.printf("rolling restart on " + kind + ", 3 replicas x 2 ingest verticles, %d senders%n%s%n"
        + "| sent | 200 | 503 | 504 | refused (down) | other errors | SUM | samples with row-lock waits between replicas"
        + " | samples with a flush waiting for its own source's fence | lock waits by kind |%n"
        + "| %d | %d | %d | %d | %d | %d %s | %d | %d of %d | %d | %s %s |%n",
      SENDERS, String.join("\n", restarts), load.sent.get(), load.count("200"), load.count("503"), load.count("504"),
      load.count("refused"), load.count("other"), load.otherErrors, sum, sampler.rowLockSamples(),
      sampler.samples.get(), sampler.ownSourceSamples(), sampler.samplesByWait, sampler.exampleQuery);
    long ok = load.count("200");
    long unknown = load.count("504") + load.count("other");
    assertThat(ok).isPositive();
    assertThat(sum).as("every 200 is in the table").isGreaterThanOrEqualTo(ok);
    assertThat(sum).as("nothing counted twice or without an answer that allows it").isLessThanOrEqualTo(ok + unknown);
    assertThat(sampler.rowLockSamples()).as("replicas on disjoint lanes never wait on each other's row locks").isZero();
    assertThat(sampler.ownSourceSamples()).as("a flush never waits for its own source's fence advance").isZero();
    assertThat(sampler.samplesByWait).as("no session waits for a lock of any kind").isEmpty();
    await(sql.close());
  }

  /** Senders that each post one increment at a time, walking the three gateways in turn. */
  private static final class Load {
    final AtomicLong sent = new AtomicLong();
    final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();
    final Map<String, AtomicLong> otherErrors = new ConcurrentHashMap<>();
    private final WebClient http;
    private final List<Integer> ports;
    private final AtomicInteger running = new AtomicInteger();
    private final io.vertx.core.Promise<Void> finished = io.vertx.core.Promise.promise();
    private volatile boolean stopping;

    Load(WebClient http, List<Integer> ports) {
      this.http = http;
      this.ports = ports;
    }

    void send(int turn) {
      if (stopping) {
        if (running.get() == 0) {
          finished.tryComplete();
        }
        return;
      }
      running.incrementAndGet();
      sent.incrementAndGet();
      int port = ports.get(turn % ports.size());
      http.post(port, "127.0.0.1", "/v1/counters/downloads/rolling-" + (turn % 10) + "/increments").send()
        .onComplete(done -> {
          if (done.succeeded()) {
            outcomes.computeIfAbsent(Integer.toString(done.result().statusCode()), k -> new AtomicLong()).incrementAndGet();
          } else if (done.cause() instanceof ConnectException) {
            outcomes.computeIfAbsent("refused", k -> new AtomicLong()).incrementAndGet();
          } else {
            outcomes.computeIfAbsent("other", k -> new AtomicLong()).incrementAndGet();
            otherErrors.computeIfAbsent(done.cause().getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
          }
          running.decrementAndGet();
          send(turn + 1);
        });
    }

    long count(String outcome) {
      AtomicLong value = outcomes.get(outcome);
      return value == null ? 0 : value.get();
    }

    void stop() {
      stopping = true;
    }

    Future<Void> finished() {
      return finished.future();
    }
  }

  /**
   * Sessions waiting for a lock: (what they wait for, their statement, the statement of the session they wait for).
   * Row locks are {@code transactionid}, {@code tuple}.
   */
  private static final String PG_LOCK_WAITS =
    "SELECT w.wait_event, left(w.query, 80), left(b.query, 80) FROM pg_stat_activity w"
      + " LEFT JOIN pg_stat_activity b ON b.pid = (pg_blocking_pids(w.pid))[1]"
      + " WHERE w.wait_event_type = 'Lock' AND w.datname = current_database()";
  /** InnoDB row-lock waits (reported as {@code tuple}), and sessions waiting for a table's metadata lock. */
  private static final String MARIADB_LOCK_WAITS =
    "SELECT 'tuple', LEFT(r.trx_query, 80), LEFT(b.trx_query, 80) FROM information_schema.INNODB_LOCK_WAITS w"
      + " JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id"
      + " LEFT JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id"
      + " UNION ALL SELECT 'metadata', LEFT(INFO, 80), NULL FROM information_schema.PROCESSLIST"
      + " WHERE STATE LIKE 'Waiting for%lock'";
  /**
   * What a flush statement does first: take its own flush source's row shared (src/DESIGN.md §4, FlushFence). That
   * row belongs to one coalescer of one replica.
   */
  private static final List<String> FLUSH_TAKES_ITS_SOURCE = List.of(
    "WITH s AS (SELECT fence FROM " + TABLE + "_flush_sources WHERE source =",
    "SELECT fence FROM " + TABLE + "_flush_sources WHERE source =");
  /**
   * The statements only a source's own coalescer runs on that source's row: the fence transaction (the fence raised,
   * then the settled ids deleted) and the deletion of the source at a graceful stop. A flush waiting for one of these
   * waits for its own coalescer, not for another replica.
   */
  private static final List<String> OWN_SOURCE_TRANSACTIONS = List.of(
    "WITH raised AS (",
    "UPDATE " + TABLE + "_flush_sources SET fence = GREATEST(",
    "DELETE FROM " + TABLE + "_flushes WHERE flush_id",
    "DELETE FROM " + TABLE + "_flush_sources WHERE source =",
    "DELETE FROM " + TABLE + "_flushes WHERE split_part(flush_id");

  /**
   * Every 20 ms: the sessions of the test database waiting for a lock, by what they wait for. Row locks are what
   * concurrent flushes on shared slot rows would wait for; table-level waits ({@code relation}, {@code metadata})
   * come from statements such as a starting replica's schema statements. A row-lock wait of a flush on its own
   * source's row, held by that source's fence transaction, is counted apart ({@code own source}): it is a wait
   * inside one coalescer, which lanes do not and cannot remove.
   */
  private static final class LockWaitSampler {
    final AtomicLong samples = new AtomicLong();
    final Map<String, AtomicLong> samplesByWait = new ConcurrentHashMap<>();
    final Map<String, String> exampleQuery = new ConcurrentHashMap<>();
    private final Vertx vertx;
    private final long timer;

    LockWaitSampler(Vertx vertx, Pool sql, String lockWaits) {
      this.vertx = vertx;
      this.timer = vertx.setPeriodic(20, id -> sql.query(lockWaits).execute().onSuccess(rows -> {
          samples.incrementAndGet();
          java.util.Set<String> seen = new java.util.HashSet<>();
          rows.forEach(row -> {
            String wait = isRowLock(row.getString(0)) && ownSource(row.getString(1), row.getString(2))
              ? "own source" : row.getString(0);
            if (seen.add(wait)) {
              samplesByWait.computeIfAbsent(wait, k -> new AtomicLong()).incrementAndGet();
            }
            exampleQuery.putIfAbsent(wait, row.getString(1) + " <- " + row.getString(2));
          });
        }));
    }

    private static boolean isRowLock(String wait) {
      return wait.equals("transactionid") || wait.equals("tuple");
    }

    private static boolean ownSource(String waiting, String blocking) {
      return waiting != null && blocking != null
        && FLUSH_TAKES_ITS_SOURCE.stream().anyMatch(waiting::startsWith)
        && OWN_SOURCE_TRANSACTIONS.stream().anyMatch(blocking::startsWith);
    }

    /** Samples in which a session waited for a row lock another replica (or no known flush source owner) held. */
    long rowLockSamples() {
      return samplesByWait.entrySet().stream().filter(e -> isRowLock(e.getKey()))
        .mapToLong(e -> e.getValue().get()).sum();
    }

    long ownSourceSamples() {
      AtomicLong own = samplesByWait.get("own source");
      return own == null ? 0 : own.get();
    }

    void stop() {
      vertx.cancelTimer(timer);
    }
  }
}
