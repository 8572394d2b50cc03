package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

import static io.countergateway.faults.FlushSourceFaultTest.CLOSED;
import static io.countergateway.faults.FlushSourceFaultTest.count;
import static io.countergateway.faults.FlushSourceFaultTest.openSources;
import static io.countergateway.faults.FlushSourceFaultTest.readyWithin;
import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Exactly once", the flush sources at the smallest retention the config accepts: an idle gateway's
 * heartbeats keep its sources open through a whole retention while a prune runs every second. The wait is a full
 * retention, so one gateway on each embedded database idles through the same minute and the suite pays it once.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Flush sources of idle gateways at the smallest retention, on embedded PostgreSQL and MariaDB at once")
class FlushSourceIdleIT {
  private static final String AGE_POSTGRES =
    "SELECT COALESCE(MAX(EXTRACT(EPOCH FROM now() - heartbeat_at)) * 1000, 0)::bigint FROM ";
  private static final String AGE_MARIADB =
    "SELECT COALESCE(MAX(TIMESTAMPDIFF(MICROSECOND, heartbeat_at, NOW(3))) DIV 1000, 0) FROM ";

  private Vertx tools;

  @BeforeAll
  void startDatabases() {
    for (FaultDatabase db : FaultDatabase.values()) {
      db.config();
    }
    tools = Vertx.vertx();
  }

  @AfterAll
  void closeTools() {
    await(tools.close(), 30);
  }

  /** One dialect's gateway and what was seen of it. */
  private static final class Idle {
    final FaultDatabase db;
    final String table = FlushSourceFaultTest.table("idle");
    final String prefix;
    final GatewayFixture fixture;
    final List<IncrementLoad.Outcome> outcomes = new ArrayList<>();
    long oldestHeartbeatMs;
    long closed;
    int ready;
    boolean stopped;

    Idle(FaultDatabase db) {
      this.db = db;
      this.prefix = Faults.uniquePrefix("idle-" + db.name().toLowerCase());
      JsonObject config = FlushSourceFaultTest.gatewayConfig(db.config(), table);
      // 100 retries of writeTimeoutMs + retryMaxMs = 60 s: the smallest retention validation accepts
      config.put("batching", new JsonObject().put("flushIdRetentionSeconds", 60).put("pruneIntervalSeconds", 1)
        .put("writeTimeoutMs", 300).put("retryInitialMs", 20).put("retryMaxMs", 300));
      this.fixture = GatewayFixture.start(config);
    }

    String age() {
      return (db == FaultDatabase.POSTGRES ? AGE_POSTGRES : AGE_MARIADB) + table + "_flush_sources WHERE fence < " + CLOSED;
    }
  }

  @Test
  @DisplayName("with the smallest retention the config accepts, an idle gateway keeps its sources alive, and what it takes afterwards is counted exactly once")
  void smallestRetentionIdle() {
    Map<FaultDatabase, Idle> gateways = new EnumMap<>(FaultDatabase.class);
    try {
      for (FaultDatabase db : FaultDatabase.values()) {
        gateways.put(db, new Idle(db));
      }
      for (Idle idle : gateways.values()) {
        IncrementLoad warmUp = new IncrementLoad(tools, idle.fixture.gateway.port(), "downloads", idle.prefix + "w", 4, 1,
          10, 10_000);
        await(warmUp.start(), 30);
        idle.outcomes.addAll(warmUp.outcomes());
        assertThat(openSources(tools, idle.db, idle.table)).as(idle.db.label + ": sources registered by the first flushes")
          .isNotEmpty();
      }

      // idle for longer than the retention: the oldest heartbeat must stay far younger than it
      long idleAt = System.nanoTime();
      while (millisSince(idleAt) < 70_000) {
        for (Idle idle : gateways.values()) {
          idle.oldestHeartbeatMs = Math.max(idle.oldestHeartbeatMs, count(tools, idle.db, idle.age()));
          idle.closed = Math.max(idle.closed, count(tools, idle.db,
            "SELECT COUNT(*) FROM " + idle.table + "_flush_sources WHERE fence = " + CLOSED));
        }
        sleep(1_000);
      }

      List<Ledger> ledgers = new ArrayList<>();
      for (Idle idle : gateways.values()) {
        IncrementLoad load = new IncrementLoad(tools, idle.fixture.gateway.port(), "downloads", idle.prefix, 8, 2, 5_000,
          3_000);
        await(load.start(), 60);
        idle.outcomes.addAll(load.outcomes());
        idle.ready = readyWithin(load, 10_000);
        await(idle.fixture.stopGateway(), 60);
        idle.stopped = true;
        Map<String, Long> sums = await(idle.db.sums(tools, idle.table, "downloads", idle.prefix), 60);
        Ledger ledger = Ledger.of(idle.db.label + " idle at the smallest retention", idle.outcomes, sums);
        ledgers.add(ledger);
        System.out.println(ledger.summary() + " | oldest heartbeat while idle " + idle.oldestHeartbeatMs
          + " ms, sources closed " + idle.closed);
      }

      int i = 0;
      for (Idle idle : gateways.values()) {
        Ledger ledger = ledgers.get(i++);
        assertThat(idle.closed).as(idle.db.label + ": sources closed while idle").isZero();
        assertThat(idle.oldestHeartbeatMs).as(idle.db.label + ": the oldest heartbeat while idle (retention 60 s)")
          .isLessThan(30_000);
        ledger.assertHolds(false);
        assertThat(ledger.committed200).as(idle.db.label + ": 200s").isPositive();
        assertThat(ledger.accepted202).as(idle.db.label + ": 202s").isPositive();
        assertThat(idle.ready).as(idle.db.label + ": /health/ready").isEqualTo(200);
      }
    } finally {
      for (Idle idle : gateways.values()) {
        if (!idle.stopped) {
          FaultTest.stopQuietly(idle.fixture);
        }
        await(idle.fixture.vertx.close(), 30);
      }
    }
  }
}
