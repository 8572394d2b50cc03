package io.countergateway.internal.cluster;

import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.Ledger;
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
import java.util.HashMap;
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
 * flushes never overlap, see store/FlushFence), nor on a starting replica's schema step (docs/scaling.md
 * "Rolling restart").
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RollingRestartIT {
  private static final String TABLE = "rolling_counters";
  private static final int SENDERS = 24;
  /** Commits through every replica between two restarts: the load reaches each, the one started last too. */
  private static final int COMMITTED_THROUGH_EACH = 50;

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
      int port = FreePorts.take();
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
    LockWaitSampler sampler = LockWaitSampler.start(vertx, sql, postgres, TABLE);
    WebClient http = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setConnectTimeout(1_000),
      new PoolOptions().setHttp1MaxSize(SENDERS));

    Load load = new Load(http, ports);
    for (int sender = 0; sender < SENDERS; sender++) {
      int first = sender;
      vertx.runOnContext(v -> load.send(first));
    }
    List<String> restarts = new ArrayList<>();
    for (GatewayProcess gateway : gateways) {
      load.awaitCommittedThroughEach(COMMITTED_THROUGH_EACH, 1_500);
      long stopping = System.nanoTime();
      int exit = gateway.stopGracefully(Duration.ofSeconds(40));
      long stopped = System.nanoTime();
      gateway.restart().awaitListening(Duration.ofSeconds(90));
      restarts.add(String.format("%s: exit %d, stop %d ms, start %d ms", gateway.name(), exit,
        (stopped - stopping) / 1_000_000, (System.nanoTime() - stopped) / 1_000_000));
      assertThat(exit).as(gateway.name() + " exits cleanly after SIGTERM").isZero();
    }
    load.awaitCommittedThroughEach(COMMITTED_THROUGH_EACH, 1_500);
    load.stop();
    await(load.finished());
    sampler.stop();
    Map<String, Long> sums = await(sql.query("SELECT record_id, SUM(count) FROM " + TABLE + " GROUP BY record_id").execute()
      .map(rows -> {
        Map<String, Long> byId = new HashMap<>();
        rows.forEach(row -> byId.put(row.getString(0), row.getNumeric(1).longValue()));
        return byId;
      }));
    Ledger.Verdict verdict = load.ledger.against(sums);
    long sum = verdict.sum;

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
    // per counter: its 200s <= its SUM <= its 200s + its 504s and lost answers
    verdict.assertHolds();
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
    private final Map<Integer, AtomicLong> committedByPort = new ConcurrentHashMap<>();
    final Ledger ledger = Ledger.named("rolling restart");
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
      String id = "rolling-" + (turn % 10);
      http.post(port, "127.0.0.1", "/v1/counters/downloads/" + id + "/increments").send()
        .onComplete(done -> {
          if (done.succeeded()) {
            int status = done.result().statusCode();
            outcomes.computeIfAbsent(Integer.toString(status), k -> new AtomicLong()).incrementAndGet();
            if (status == 200) {
              committedByPort.computeIfAbsent(port, k -> new AtomicLong()).incrementAndGet();
            }
            ledger.record(id, 1, status == 200 ? Ledger.Promise.COUNTED
              : status == 504 ? Ledger.Promise.AT_MOST_ONCE : Ledger.Promise.NOT_COUNTED, Integer.toString(status));
          } else if (done.cause() instanceof ConnectException) {
            outcomes.computeIfAbsent("refused", k -> new AtomicLong()).incrementAndGet();
            ledger.record(id, 1, Ledger.Promise.NOT_COUNTED, "refused");
          } else {
            outcomes.computeIfAbsent("other", k -> new AtomicLong()).incrementAndGet();
            ledger.record(id, 1, Ledger.Promise.AT_MOST_ONCE, "other");
            otherErrors.computeIfAbsent(done.cause().getClass().getSimpleName(), k -> new AtomicLong()).incrementAndGet();
          }
          running.decrementAndGet();
          send(turn + 1);
        });
    }

    /** Waits until every replica answered {@code count} more 200s than when called, or {@code maxMillis}. */
    void awaitCommittedThroughEach(int count, long maxMillis) throws InterruptedException {
      Map<Integer, Long> before = new HashMap<>();
      ports.forEach(port -> before.put(port, committed(port)));
      long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(maxMillis);
      while (System.nanoTime() < deadline && ports.stream().anyMatch(port -> committed(port) - before.get(port) < count)) {
        Thread.sleep(50);
      }
    }

    private long committed(int port) {
      AtomicLong value = committedByPort.get(port);
      return value == null ? 0 : value.get();
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
}
