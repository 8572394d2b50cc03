package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The holes found in "never lost, never twice", each against a real database: a split flush whose halves' ids used to
 * be taken for later flushes, a database that turns read-only (an error nobody listed), an ambiguous commit followed
 * by such an error, and a database host that stops answering on open connections without closing them.
 */
abstract class UnforeseenFailureContract extends FaultSuite {
  private static final String TABLE = "fault_unforeseen";
  private static final int CLIENTS = 16;
  private static final int ACCEPTED_CLIENTS = 4;


  private static JsonObject gatewayConfig(JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, TABLE);
    config.getJsonObject("limits").put("requestTimeout", "4s");
    config.put("batching", new JsonObject().put("retryBackoff", "50ms").put("retryBackoffMax", "300ms"));
    return config;
  }

  @Test
  @DisplayName("a flush split around a refused counter, followed by 100 committing flushes, counts each of them: no split half's id is taken for a later flush")
  void splitFlushIdsNeverCollide() {
    FaultDatabase db = database();
    JsonObject config = gatewayConfig(db.config());
    config.getJsonObject("http").put("instances", 1);
    try (GatewayFixture fixture = GatewayFixture.start(config)) {
      String prefix = Faults.uniquePrefix("split");
      String full = prefix + "full";
      String insert = "INSERT INTO " + TABLE + " (record_type, record_id, slot, count) VALUES (" + db.mark(1) + ", "
        + db.mark(2) + ", " + db.mark(3) + ", " + db.mark(4) + ")";
      for (int slot = 0; slot < 8; slot++) {
        await(fixture.sql().preparedQuery(insert).execute(Tuple.of("downloads", full, (short) slot, Long.MAX_VALUE - 10)), 30);
      }
      assertThat(status(fixture, "/v1/counters/downloads/" + prefix + "first/increments")).isEqualTo(200);
      // one flush of two rows: the full counter is refused, the flush split, its second half commits the other
      HttpResponse<Buffer> batch = await(fixture.http.post("/v1/increments?ack=accepted")
        .putHeader("Content-Type", "application/json").sendBuffer(new JsonArray()
        .add(new JsonObject().put("type", "downloads").put("id", full).put("delta", 1_000))
        .add(new JsonObject().put("type", "downloads").put("id", prefix + "other").put("delta", 1)).toBuffer()), 30);
      assertThat(batch.statusCode()).isEqualTo(202);
      sleep(500);
      int answered200 = 0;
      for (int i = 0; i < 100; i++) {
        answered200 += status(fixture, "/v1/counters/downloads/" + prefix + "z/increments") == 200 ? 1 : 0;
      }

      assertThat(answered200).isEqualTo(100);
      assertThat(await(fixture.sumInTable("downloads", prefix + "z"), 30)).as("SUM of z").isEqualTo(100L);
      assertThat(await(fixture.sumInTable("downloads", prefix + "other"), 30)).as("the split's other counter").isEqualTo(1L);
      String untouched = "SELECT COUNT(*) FROM " + TABLE + " WHERE record_type = 'downloads' AND record_id = "
        + db.mark(1) + " AND count = " + db.mark(2);
      assertThat(await(fixture.sql().preparedQuery(untouched).execute(Tuple.of(full, Long.MAX_VALUE - 10)), 30)
        .iterator().next().getLong(0)).as("slot rows of the refused counter left as they were").isEqualTo(8L);
    }
  }

  @Test
  @DisplayName("a database that turns read-only mid-load (a failover) is an outage: no 500, every 200 and 202 counted once after it is writable again, readiness 503 meanwhile")
  void readOnlyDatabaseIsAnOutage() {
    FaultDatabase db = database();
    GatewayFixture fixture = GatewayFixture.start(gatewayConfig(db.writerConfig(tools)));
    SqlConnection admin = await(db.connect(tools), 30);
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("readonly");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 30_000);
      ReadinessLog readiness = new ReadinessLog(tools, load.probe());
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_500);
      await(db.readOnly(admin, true), 30);
      readiness.phase("read-only");
      sleep(3_000);
      readiness.phase("after");
      await(db.readOnly(admin, false), 30);
      load.awaitAnswered(ANSWERED, 2_000);
      load.finish();
      await(loadDone, 60);
      Map<String, Integer> readinessSeen = readiness.stop();
      double retries = Faults.metric(load.probe(), "gateway_flush_retries_total");
      double refusedRows = Faults.metric(load.probe(), "gateway_flush_refused_rows_total");
      await(fixture.stopGateway(), 60);
      gatewayStopped = true;

      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " read-only", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | flush retries " + (long) retries + ", refused rows " + (long) refusedRows
        + ", readiness " + readinessSeen);

      ledger.assertHoldsAllAnswered();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(ledger.count("202")).as("202s, all of them counted").isPositive();
      assertThat(refusedRows).as("rows refused as bad values").isZero();
      assertThat(retries).as("flush retries").isPositive();
      assertThat(readinessSeen).as("/health/ready while read-only").containsKey("read-only:503");
    } finally {
      await(db.readOnly(admin, false), 30);
      admin.close();
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
    }
  }

  @Test
  @DisplayName("an ambiguous commit followed by an error nobody listed retries the same flush id: counted once, never split and written again")
  void ambiguousCommitThenUnlistedError() {
    FaultDatabase db = database();
    JsonObject direct = db.writerConfig(tools);
    ChaosProxy proxy = new ChaosProxy(tools, direct.getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(proxy.start(), 30);
    JsonObject config = gatewayConfig(direct.copy().put("port", proxyPort));
    // time for the database to turn read-only between the dropped answer and the retry
    config.getJsonObject("batching").put("retryBackoff", "600ms").put("retryBackoffMax", "1s");
    config.getJsonObject("http").put("instances", 1);
    GatewayFixture fixture = GatewayFixture.start(config);
    SqlConnection admin = await(db.connect(tools), 30);
    try {
      String prefix = Faults.uniquePrefix("ambiguous");
      // a first commit takes the write connection past its start-up, whose answers the proxy never touches
      assertThat(status(fixture, "/v1/counters/downloads/" + prefix + "warm-up/increments")).isEqualTo(200);
      proxy.dropNextCommittedAnswer(() -> db.readOnly(admin, true)
        .onComplete(done -> tools.setTimer(1_500, id -> db.readOnly(admin, false))));
      HttpResponse<Buffer> answer = await(fixture.http.post("/v1/counters/downloads/" + prefix + "a/increments")
        .timeout(30_000).send(), 40);
      double retries = Faults.metric(fixture.http, "gateway_flush_retries_total");
      System.out.println("[" + db.label + " ambiguous then unlisted] status " + answer.statusCode() + " | "
        + proxy.summary() + ", flush retries " + (long) retries);

      assertThat(proxy.ambiguousCommits.get()).as("committed writes whose answer was dropped").isEqualTo(1);
      assertThat(answer.statusCode()).as("the committing request").isEqualTo(200);
      assertThat(await(fixture.sumInTable("downloads", prefix + "a"), 30)).as("SUM").isEqualTo(1L);
      assertThat(retries).as("retries: the lost answer, then the read-only refusals").isGreaterThanOrEqualTo(2);
      assertThat(proxy.duplicateFlushAnswers.get()).as("the retry found its flush id committed").isPositive();
    } finally {
      await(db.readOnly(admin, false), 30);
      admin.close();
      stopQuietly(fixture);
      await(fixture.vertx.close(), 30);
      await(proxy.close(), 30);
    }
  }

  @Test
  @DisplayName("a database host that stops answering on open connections without closing them: commits resume after batching.writeTimeout and a reconnect, every 200 counted once")
  void silentConnectionsAreReplaced() {
    FaultDatabase db = database();
    JsonObject direct = db.config();
    ChaosProxy proxy = new ChaosProxy(tools, direct.getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(proxy.start(), 30);
    JsonObject config = gatewayConfig(direct.copy().put("port", proxyPort));
    config.getJsonObject("limits").put("requestTimeout", "6s");
    config.getJsonObject("batching").put("writeTimeout", "1s");
    GatewayFixture fixture = GatewayFixture.start(config);
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("silent");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 30_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_500);
      long stallAt = System.nanoTime();
      proxy.stallOpenConnections();
      // MariaDB: a stall that catches a flush inside its transaction leaves that flush's id row locked until the
      // server ends the silent session (wait_timeout, 10 s at least, see SqlStores); the retry waits for it. The
      // load goes on until commits of requests sent after the stall have come back, at most that long.
      long most = db == FaultDatabase.POSTGRES ? 6_000 : 14_000;
      while (millisSince(stallAt) < most && load.outcomes().stream()
        .filter(o -> o.status == 200 && o.sentAt > stallAt).count() < 50) {
        sleep(100);
      }
      load.finish();
      await(loadDone, 60);
      HttpResponse<Buffer> read = await(fixture.http.get("/v1/counters/downloads/" + prefix + "0").timeout(10_000).send(), 20);
      // the accepted increments held while the database was failing are written once it is healthy again (a stop
      // before that leaves them to the journal's replay at the next start)
      long readyBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (Faults.ready(fixture.http) != 200 && System.nanoTime() < readyBy) {
        sleep(200);
      }
      await(fixture.stopGateway(), 60);
      gatewayStopped = true;

      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " silent connections", load.outcomes(), sums);
      long firstCommitAfterStallMs = load.outcomes().stream()
        .filter(o -> o.status == 200 && o.sentAt > stallAt)
        .mapToLong(o -> TimeUnit.NANOSECONDS.toMillis(o.answeredAt - stallAt)).min().orElse(-1);
      long committedAfterStall = load.outcomes().stream().filter(o -> o.status == 200 && o.sentAt > stallAt).count();
      System.out.println(ledger.summary() + " | " + proxy.summary() + ", first commit of a request sent after the stall "
        + firstCommitAfterStallMs + " ms after it, " + committedAfterStall + " commits of requests sent after it");

      ledger.assertHoldsAllAnswered();
      assertThat(committedAfterStall).as("requests sent after the stall and committed").isPositive();
      assertThat(read.statusCode()).as("a read after the stall").isEqualTo(200);
    } finally {
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
      await(proxy.close(), 30);
    }
  }

  private static int status(GatewayFixture fixture, String path) {
    return await(fixture.http.post(path).send(), 30).statusCode();
  }
}
