package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Exactly once": the gateway's database connections die around COMMIT while it flushes under load, and no
 * increment may be counted twice. Twice over: a chaos proxy that drops the database's answers and cuts connections
 * (ambiguous commits guaranteed), and the database itself killing the gateway's sessions (PostgreSQL
 * {@code pg_terminate_backend}, MySQL {@code KILL}). A third test runs the proxy with flush ids switched off, to show
 * that this test does see a double count when there is one.
 */
abstract class ConnectionKillContract extends FaultSuite {
  private static final String TABLE = "fault_kills";
  private static final int CLIENTS = 32;
  private static final int ACCEPTED_CLIENTS = 8;
  private static final double CHAOS = 0.15;
  private static final int MIN_AMBIGUOUS_COMMITS = 10;
  private static final long MAX_CHAOS_MS = 15_000;


  private static JsonObject gatewayConfig(JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, TABLE);
    config.getJsonObject("limits").put("requestTimeout", "5s");
    config.put("batching", new JsonObject()
      .put("retryBackoff", "10ms")
      .put("retryBackoffMax", "200ms"));
    return config;
  }

  @Test
  @DisplayName("a proxy that drops the database's answers and cuts connections around COMMIT makes flushes ambiguous, and none is counted twice")
  void chaosProxy() {
    Result result = underChaos(5_000);
    result.ledger.assertHoldsAllAnswered();
    assertThat(result.ledger.count("200")).as("200s").isPositive();
    assertThat(result.ledger.count("202")).as("202s").isPositive();
    assertThat(result.proxy.kills()).as("connections killed").isPositive();
    assertThat(result.proxy.ambiguousCommits.get()).as("committed writes whose answer was dropped").isPositive();
    assertThat(result.proxy.duplicateFlushAnswers.get()).as("retries that found their flush id committed").isPositive();
    assertThat(result.retries).as("flush retries").isPositive();
  }

  @Test
  @DisplayName("the database killing the gateway's sessions again and again during a load counts nothing twice and loses no 200")
  void databaseKillsSessions() {
    FaultDatabase db = database();
    JsonObject config = gatewayConfig(db.config());
    GatewayFixture fixture = GatewayFixture.start(config);
    boolean gatewayStopped = false;
    SqlConnection killer = await(db.connect(tools), 30);
    try {
      String prefix = Faults.uniquePrefix("killed");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 30_000);
      AtomicInteger killed = new AtomicInteger();
      AtomicInteger rounds = new AtomicInteger();
      AtomicBoolean killing = new AtomicBoolean(true);
      Future<Void> loadDone = load.start();
      Promise<Void> killerDone = Promise.promise();
      tools.runOnContext(v -> killRounds(db, killer, killing, killed, rounds, killerDone));
      sleep(6_000);
      killing.set(false);
      await(killerDone.future(), 30);
      load.finish();
      await(loadDone, 60);
      double retries = Faults.metric(load.probe(), "gateway_flush_retries_total");
      await(fixture.stopGateway(), 60);
      gatewayStopped = true;
      replayWhatTheStopLeft(config);

      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " killed sessions", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | " + killed + " sessions killed in " + rounds + " rounds, flush retries "
        + (long) retries);

      ledger.assertHoldsAllAnswered();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(ledger.count("202")).as("202s").isPositive();
      assertThat(killed.get()).as("sessions killed").isPositive();
      assertThat(retries).as("flush retries").isPositive();
    } finally {
      killer.close();
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
    }
  }

  /**
   * A graceful stop that finds the database failing leaves what it holds to the journal (a 202 is a promise of the
   * journal, kept by the next start's replay): the ledger is read after that next start, as an operator's would be.
   */
  private static void replayWhatTheStopLeft(JsonObject config) {
    GatewayFixture.start(config).close();
  }

  /** Kills the gateway's sessions every 20–60 ms until told to stop. */
  private void killRounds(FaultDatabase db, SqlConnection killer, AtomicBoolean killing, AtomicInteger killed,
                          AtomicInteger rounds, Promise<Void> done) {
    if (!killing.get()) {
      done.complete();
      return;
    }
    db.killOtherConnections(killer).onComplete(result -> {
      rounds.incrementAndGet();
      if (result.succeeded()) {
        killed.addAndGet(result.result());
      }
      tools.setTimer(ThreadLocalRandom.current().nextLong(20, 61),
        id -> killRounds(db, killer, killing, killed, rounds, done));
    });
  }

  private record Result(Ledger.Verdict ledger, ChaosProxy proxy, double retries) {
  }

  private Result underChaos(long chaosMillis) {
    FaultDatabase db = database();
    JsonObject direct = db.config();
    ChaosProxy proxy = new ChaosProxy(tools, direct.getInteger("port"), db == FaultDatabase.POSTGRES);
    int proxyPort = await(proxy.start(), 30);
    JsonObject config = gatewayConfig(direct.copy().put("port", proxyPort));
    GatewayFixture fixture = GatewayFixture.start(config);
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("chaos");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 30_000);
      Future<Void> loadDone = load.start();
      sleep(500);
      // chaos for at least chaosMillis, longer (bounded) on a busy machine until enough commits were ambiguous
      long chaosAt = System.nanoTime();
      proxy.chaos(CHAOS);
      sleep(chaosMillis);
      while (proxy.ambiguousCommits.get() < MIN_AMBIGUOUS_COMMITS && Faults.millisSince(chaosAt) < MAX_CHAOS_MS) {
        sleep(200);
      }
      proxy.chaos(0);
      long chaosMs = Faults.millisSince(chaosAt);
      sleep(500);
      load.finish();
      await(loadDone, 60);
      double retries = Faults.metric(load.probe(), "gateway_flush_retries_total");
      await(fixture.stopGateway(), 60);
      gatewayStopped = true;
      replayWhatTheStopLeft(config);

      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " chaos proxy", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | " + chaosMs + " ms of chaos: " + proxy.summary() + ", flush retries "
        + (long) retries);
      return new Result(ledger, proxy, retries);
    } finally {
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
      await(proxy.close(), 30);
    }
  }
}
