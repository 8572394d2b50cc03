package io.countergateway.faults;

import io.countergateway.config.MemoryBounds.Bound;
import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.countergateway.testing.PinnedBounds;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Outages", against a real database that really goes away: the embedded database is stopped in the
 * middle of a concurrent load, kept down for three seconds and started again on the same port and data, while the
 * load goes on. Small limits make the gateway shed (503) and time out (503 withdrawn / 504 outcome unknown).
 */
abstract class DatabaseOutageContract extends FaultSuite {
  private static final String TABLE = "fault_outage";
  private static final int CLIENTS = 32;
  private static final int ACCEPTED_CLIENTS = 8;
  private static final long DOWN_MS = 3_000;

  @Override
  @AfterAll
  void closeTools() {
    database().startAgain();
    super.closeTools();
  }

  /** A gateway whose coalescers hold 300 counters and 12 waiting requests: an outage under load fills them. */
  static GatewayFixture start(JsonObject config) {
    return PinnedBounds.with(Map.of(Bound.PENDING_KEYS, 300L, Bound.WAITING_REQUESTS, 12L), () -> GatewayFixture.start(config));
  }

  static JsonObject gatewayConfig(JsonObject database) {
    JsonObject config = GatewayFixture.baseConfig(database, TABLE);
    config.getJsonObject("limits").put("requestTimeout", "2s").put("maxBatchIncrements", 12);
    config.put("batching", new JsonObject()
      .put("maxKeys", 100)
      .put("retryBackoff", "50ms")
      .put("retryBackoffMax", "500ms"));
    return config;
  }

  @Test
  @DisplayName("a database outage in the middle of a load loses no 200 or 202, counts no 503, counts nothing twice, and readiness follows it")
  void outageUnderLoad() {
    FaultDatabase db = database();
    GatewayFixture fixture = start(gatewayConfig(db.config()));
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("outage");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS,
        ACCEPTED_CLIENTS, 5_000, 40_000);
      ReadinessLog readiness = new ReadinessLog(tools, load.probe());

      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 2_500);
      readiness.phase("outage");
      long downAt = System.nanoTime();
      db.stop();
      long stopMs = millisSince(downAt);
      sleep(DOWN_MS);
      long startAt = System.nanoTime();
      db.startAgain();
      long startMs = millisSince(startAt);
      long outageMs = millisSince(downAt);
      readiness.phase("after");
      load.awaitAnswered(ANSWERED, 2_500);
      load.finish();
      await(loadDone, 60);
      Map<String, Integer> readinessSeen = readiness.stop();

      // readiness must come back on its own, with no increment sent any more
      long recoveryAt = System.nanoTime();
      int ready = Faults.ready(load.probe());
      while (ready != 200 && millisSince(recoveryAt) < 20_000) {
        sleep(200);
        ready = Faults.ready(load.probe());
      }
      long readyAfterLoadMs = millisSince(recoveryAt);
      double retries = Faults.metric(load.probe(), "gateway_flush_retries_total");

      await(fixture.stopGateway(), 60);
      gatewayStopped = true;
      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " outage", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | down " + outageMs + " ms (stop " + stopMs + " ms, start " + startMs
        + " ms), flush retries " + (long) retries + ", readiness " + readinessSeen + ", ready again "
        + readyAfterLoadMs + " ms after the load ended");

      ledger.assertHoldsAllAnswered();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(ledger.count("202")).as("202s").isPositive();
      assertThat(ledger.count("503")).as("the outage made the gateway refuse (503)").isPositive();
      // how many of the timeouts hit a delta still pending (503) or already in the retried flush (504) is up to timing;
      // that some did is not
      assertThat(ledger.count("504") + ledger.count("503 timeout_withdrawn"))
        .as("requests that timed out in the outage (503 timeout_withdrawn or 504)").isPositive();
      assertThat(retries).as("flush retries").isPositive();
      assertThat(readinessSeen).as("/health/ready during the outage").containsKey("outage:503");
      assertThat(ready).as("/health/ready after the database came back").isEqualTo(200);
    } finally {
      db.startAgain();
      if (!gatewayStopped) {
        fixture.stopGateway().toCompletionStage().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS)
          .exceptionally(e -> null).join();
      }
      await(fixture.vertx.close(), 30);
    }
  }

  @Test
  @DisplayName("after an outage that made the gateway shed, readiness comes back on its own though no increment arrives any more")
  void readinessRecoversWithoutTraffic() {
    FaultDatabase db = database();
    GatewayFixture fixture = start(gatewayConfig(db.config()));
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("quiet");
      // ack=commit only: during the outage the waiting requests pile up past maxWaitingRequests, so it sheds
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, CLIENTS, 0, 5_000,
        40_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_000);
      db.stop();
      sleep(DOWN_MS);
      // a load balancer stops sending to a gateway that is not ready: the load ends while the database is down
      load.finish();
      await(loadDone, 60);
      int readyInOutage = Faults.ready(load.probe());
      db.startAgain();

      long recoveryAt = System.nanoTime();
      int ready = Faults.ready(load.probe());
      while (ready != 200 && millisSince(recoveryAt) < 15_000) {
        sleep(200);
        ready = Faults.ready(load.probe());
      }
      long readyAfterMs = millisSince(recoveryAt);

      await(fixture.stopGateway(), 60);
      gatewayStopped = true;
      Map<String, Long> sums = await(db.sums(tools, TABLE, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " outage, then no traffic", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | readiness in the outage " + readyInOutage + ", after it " + ready
        + " (" + readyAfterMs + " ms after the database was back)");

      ledger.assertHoldsAllAnswered();
      assertThat(ledger.reasons(503)).as("the gateway shed load during the outage").contains("overloaded");
      assertThat(readyInOutage).as("/health/ready during the outage").isEqualTo(503);
      assertThat(ready).as("/health/ready once the database is back, with no increment arriving").isEqualTo(200);
    } finally {
      db.startAgain();
      if (!gatewayStopped) {
        fixture.stopGateway().toCompletionStage().toCompletableFuture().orTimeout(60, TimeUnit.SECONDS)
          .exceptionally(e -> null).join();
      }
      await(fixture.vertx.close(), 30);
    }
  }
}
