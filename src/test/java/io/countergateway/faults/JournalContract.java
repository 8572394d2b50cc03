package io.countergateway.faults;

import io.countergateway.testing.FreePorts;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.GatewayProcess;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Journal", against a real database and a gateway in its own JVM: what was answered 202/204 survives
 * a stop during an outage and a kill -9, a torn journal tail, and a full journal refuses (503) rather than loses.
 */
abstract class JournalContract extends JournalProcessSuite {
  private static final String TABLE = "fault_journal";
  private static final int BEACONS = 200;

  /** The tests' base config, with pageviews' per-client beacon limits off: every beacon here comes from one client. */
  private static JsonObject baseConfig(JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, TABLE);
    config.getJsonObject("namespaces").getJsonObject("pageviews")
      .put("beacon", new JsonObject().put("perClientPerMinute", 0).put("idsPerClientPerHour", 0));
    return config;
  }

  private JsonObject processConfig(JsonObject database, int port) {
    JsonObject config = baseConfig(database);
    config.getJsonObject("http").put("port", port);
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "500ms"));
    config.put("shutdown", new JsonObject().put("timeout", "20s"));
    return config;
  }

  private WebClient client(int port) {
    return WebClient.create(tools, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port)
      .setKeepAlive(true).setConnectTimeout(2_000), new PoolOptions().setHttp1MaxSize(16));
  }

  /** Sends {@code count} beacons to ids {@code prefix0…}, 16 at a time; returns their statuses by id. */
  private static Map<String, Integer> beacons(WebClient client, String prefix, int count) {
    Map<String, Integer> statuses = new java.util.concurrent.ConcurrentHashMap<>();
    AtomicInteger next = new AtomicInteger();
    List<Future<Void>> senders = new ArrayList<>();
    for (int s = 0; s < 16; s++) {
      senders.add(sendNext(client, prefix, count, next, statuses));
    }
    await(Future.all(senders), 120);
    return statuses;
  }

  private static Future<Void> sendNext(WebClient client, String prefix, int count, AtomicInteger next,
                                       Map<String, Integer> statuses) {
    int n = next.getAndIncrement();
    if (n >= count) {
      return Future.succeededFuture();
    }
    String id = prefix + n;
    return client.post("/v1/beacon/pageviews/" + id).timeout(10_000).sendBuffer(Buffer.buffer("b"))
      .map(HttpResponse::statusCode).otherwise(0)
      .compose(status -> {
        statuses.put(id, status);
        return sendNext(client, prefix, count, next, statuses);
      });
  }

  /** Beacons by id and status (0: no answer) held against the table by the suite's one oracle. */
  static Ledger.Verdict beaconVerdict(String label, Map<String, Integer> statuses, Map<String, Long> sums) {
    Ledger ledger = Ledger.named(label);
    statuses.forEach((id, status) -> ledger.http(id, Ledger.Door.BEACON, status, status == 503 ? "refused" : null));
    return ledger.against(sums);
  }

  private static long sum(Map<String, Long> sums) {
    return sums.values().stream().mapToLong(Long::longValue).sum();
  }

  private Map<String, Long> awaitSum(String prefix, long expected, long timeoutMs) {
    long started = System.nanoTime();
    Map<String, Long> sums = await(database().sums(tools, TABLE, "pageviews", prefix), 30);
    while (sum(sums) < expected && millisSince(started) < timeoutMs) {
      sleep(250);
      sums = await(database().sums(tools, TABLE, "pageviews", prefix), 30);
    }
    return sums;
  }

  private static Path newestSegment(String journalDir) throws IOException {
    try (Stream<Path> files = Files.list(Path.of(journalDir))) {
      return files.filter(file -> file.getFileName().toString().endsWith(".seg")).max(Path::compareTo).orElseThrow();
    }
  }

  /**
   * The same with kill -9 instead of SIGTERM is RecoveryContract's bounded start during an outage, with a journal of
   * 16 MiB segments.
   */
  @Test
  @DisplayName("beacons answered 204 while the database is read-only survive SIGTERM and a torn journal tail: SUM = 204s after the restart")
  void outageStopRestart() throws IOException {
    FaultDatabase db = database();
    int port = FreePorts.take();
    JsonObject config = processConfig(db.writerConfig(tools), port);
    String journalDir = config.getJsonObject("journal").getString("dir");
    String prefix = Faults.uniquePrefix("jstop");
    SqlConnection admin = await(db.connect(tools), 30);
    try (GatewayProcess gateway = GatewayProcess.start("journal-outage-" + db.name().toLowerCase(),
      config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      WebClient client = client(port);
      assertThat(awaitReady(client, 30_000)).as("ready before the outage").isEqualTo(200);
      await(db.readOnly(admin, true), 30);
      Map<String, Integer> statuses = beacons(client, prefix, BEACONS);
      assertThat(statuses.values()).as("beacons during the outage").containsOnly(204).hasSize(BEACONS);
      // the database is out, the journal takes increments: a web pod whose sidecar this is stays in its Service
      assertThat(Faults.accepting(client)).as("/health/accepting during the outage").isEqualTo(200);

      long stopAt = System.nanoTime();
      int exit = gateway.stopGracefully(Duration.ofSeconds(60));
      long stopMs = millisSince(stopAt);
      assertThat(exit).isZero();
      assertThat(stopMs).as("a stop that cannot flush leaves the journal and exits quickly (ms)").isLessThan(10_000);
      assertThat(sum(await(db.sums(tools, TABLE, "pageviews", prefix), 30))).as("written before the restart").isZero();

      // a torn tail: half a frame, as a crash in the middle of a write leaves it
      Files.write(newestSegment(journalDir), new byte[] {0, 0, 0, 40, 1, 2, 3, 4, 1, 1}, StandardOpenOption.APPEND);
      await(db.readOnly(admin, false), 30);
      gateway.restart().awaitListening(Duration.ofSeconds(90));
      assertThat(awaitReady(client, 30_000)).as("ready after the replay").isEqualTo(200);
      Map<String, Long> sums = awaitSum(prefix, BEACONS, 30_000);
      Ledger.Verdict ledger = beaconVerdict(db.label + " beacons across SIGTERM", statuses, sums);
      assertThat(sum(sums)).as("SUM after the restart (%s)", gateway.logTail()).isEqualTo(BEACONS);
      ledger.assertHoldsAllAnswered();
      assertThat(gateway.logTail()).contains("journal replayed");
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
    }
  }

  /**
   * Under the default policy ({@code fsync: always}); {@code everyMs} answers once an increment is written (in the page
   * cache, which outlives the process), and RecoveryContract's bounded start kills a gateway under it.
   */
  @Test
  @DisplayName("kill -9 in the middle of a load: after the restart every 200, 202 and 204 is counted exactly once")
  void killMidLoad() {
    FaultDatabase db = database();
    int port = FreePorts.take();
    String prefix = Faults.uniquePrefix("jkill");
    JsonObject config = processConfig(db.config(), port);
    try (GatewayProcess gateway = GatewayProcess.start("journal-kill-" + db.name().toLowerCase(), config)) {
      gateway.awaitListening(Duration.ofSeconds(90));
      IncrementLoad load = new IncrementLoad(tools, port, "downloads", prefix, 24, 16, 100_000, 30_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 3_000);
      gateway.kill();
      load.finish();
      await(loadDone, 60);

      gateway.restart().awaitListening(Duration.ofSeconds(90));
      assertThat(awaitReady(load.probe(), 30_000)).as("ready after the replay").isEqualTo(200);
      // the replayed deltas' flushes land within a few flush delays
      Ledger journaled = IncrementLoad.ledger(db.label + " kill -9 with the journal", load.outcomes());
      long since = System.nanoTime();
      Ledger.Verdict ledger = journaled.against(await(db.sums(tools, TABLE, "downloads", prefix), 60));
      while (ledger.lost > 0 && millisSince(since) < 10_000) {
        sleep(100);
        ledger = journaled.against(await(db.sums(tools, TABLE, "downloads", prefix), 60));
      }
      System.out.println(ledger.summary());
      ledger.assertHolds();
      assertThat(ledger.count("202")).as("202s").isPositive();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(gateway.stopGracefully(Duration.ofSeconds(60))).isZero();
    }
  }

  @Test
  @DisplayName("a full journal answers 503 journal_full and loses nothing: every 204 is counted once the database is back")
  void journalFull() {
    FaultDatabase db = database();
    JsonObject config = baseConfig(db.writerConfig(tools));
    config.getJsonObject("http").put("instances", 1);
    config.getJsonObject("journal").put("segmentBytes", 65_536).put("maxBytes", 131_072);
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "300ms"));
    String prefix = Faults.uniquePrefix("jfull");
    SqlConnection admin = await(db.connect(tools), 30);
    GatewayFixture fixture = GatewayFixture.start(config);
    try {
      WebClient client = client(fixture.gateway.port());
      await(db.readOnly(admin, true), 30);
      Map<String, Integer> statuses = beacons(client, prefix, 8_000);
      long answered204 = statuses.values().stream().filter(status -> status == 204).count();
      long refused503 = statuses.values().stream().filter(status -> status == 503).count();
      assertThat(refused503).as("beacons refused by the full journal").isPositive();
      assertThat(statuses.values()).as("statuses").containsOnly(204, 503);
      assertThat(Faults.ready(client)).as("readiness while the journal is full").isEqualTo(503);
      assertThat(Faults.accepting(client)).as("/health/accepting while the journal is full").isEqualTo(503);
      await(db.readOnly(admin, false), 30);
      Map<String, Long> sums = awaitSum(prefix, answered204, 60_000);
      assertThat(sum(sums)).as("SUM = 204s (%d refused)", refused503).isEqualTo(answered204);
      beaconVerdict(db.label + " full journal", statuses, sums).assertHoldsAllAnswered();
      assertThat(awaitReady(client, 30_000)).as("ready once the journal drained").isEqualTo(200);
    } finally {
      await(db.readOnly(admin, false).eventually(admin::close), 30);
      stopQuietly(fixture);
      await(fixture.vertx.close(), 30);
    }
  }
}
