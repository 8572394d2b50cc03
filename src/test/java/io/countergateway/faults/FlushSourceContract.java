package io.countergateway.faults;

import io.countergateway.testing.GatewayFixture;
import io.countergateway.testing.Ledger;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.countergateway.faults.Faults.await;
import static io.countergateway.faults.Faults.millisSince;
import static io.countergateway.faults.Faults.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * src/DESIGN.md §4 "Exactly once", the flush sources: a gateway whose source is closed by the prune (of any replica)
 * while it is alive — cut off or paused — goes on without a restart and without counting anything twice or losing an
 * acknowledged increment; and sources do not pile up across restarts. Idle at the smallest retention:
 * {@link FlushSourceIdleIT}.
 */
abstract class FlushSourceContract extends FaultSuite {
  static final long CLOSED = Long.MAX_VALUE;

  static String table(String what) {
    return "fault_src_" + what + "_" + UUID.randomUUID().toString().substring(0, 6);
  }

  static JsonObject gatewayConfig(JsonObject database, String table) {
    JsonObject config = GatewayFixture.baseConfig(database, table);
    config.getJsonObject("limits").put("requestTimeout", "5s");
    config.put("shutdown", new JsonObject().put("timeout", "5s"));
    config.put("batching", new JsonObject().put("retryBackoff", "20ms").put("retryBackoffMax", "200ms"));
    return config;
  }

  private <T> T sql(java.util.function.Function<SqlConnection, Future<T>> work) {
    return sql(tools, database(), work);
  }

  static <T> T sql(Vertx tools, FaultDatabase db, java.util.function.Function<SqlConnection, Future<T>> work) {
    return await(db.connect(tools).compose(conn -> work.apply(conn).eventually(conn::close)), 30);
  }

  private long count(String query) {
    return count(tools, database(), query);
  }

  static long count(Vertx tools, FaultDatabase db, String query) {
    return sql(tools, db, conn -> conn.query(query).execute().map(rows -> rows.iterator().next().getLong(0)));
  }

  private List<String> openSources(String table) {
    return openSources(tools, database(), table);
  }

  static List<String> openSources(Vertx tools, FaultDatabase db, String table) {
    return sql(tools, db, conn -> conn.query("SELECT source FROM " + table + "_flush_sources WHERE fence < " + CLOSED).execute()
      .map(rows -> {
        List<String> sources = new ArrayList<>();
        for (Row row : rows) {
          sources.add(row.getString(0));
        }
        return sources;
      }));
  }

  static int readyWithin(IncrementLoad load, long millis) {
    long since = System.nanoTime();
    int ready = Faults.ready(load.probe());
    while (ready != 200 && millisSince(since) < millis) {
      sleep(200);
      ready = Faults.ready(load.probe());
    }
    return ready;
  }

  @Test
  @DisplayName("a source closed under load, as another replica's prune closes a gateway it takes for dead: the gateway goes on without a restart, readiness is 200 again, every 200 and 202 is counted exactly once")
  void closedUnderLoad() {
    FaultDatabase db = database();
    String table = table("closed");
    GatewayFixture fixture = GatewayFixture.start(gatewayConfig(db.config(), table));
    boolean gatewayStopped = false;
    try {
      String prefix = Faults.uniquePrefix("closed");
      IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, 16, 4, 5_000, 30_000);
      Future<Void> loadDone = load.start();
      load.awaitAnswered(ANSWERED, 1_500);
      List<String> closed = openSources(table);
      assertThat(closed).as("the gateway's flush sources").isNotEmpty();
      // what the prune does to a source silent for batching.flushIdRetention
      long closedRows = sql(conn -> conn.query("UPDATE " + table + "_flush_sources SET fence = " + CLOSED
        + " WHERE fence < " + CLOSED).execute().map(rows -> (long) rows.rowCount()));
      long closedAt = System.nanoTime();
      load.awaitAnswered(ANSWERED, 3_000);
      load.finish();
      await(loadDone, 60);
      int ready = readyWithin(load, 20_000);
      long readyAfterMs = millisSince(closedAt);
      List<String> open = openSources(table);
      long closedLeft = count("SELECT COUNT(*) FROM " + table + "_flush_sources WHERE fence = " + CLOSED);

      await(fixture.stopGateway(), 60);
      gatewayStopped = true;
      Map<String, Long> sums = await(db.sums(tools, table, "downloads", prefix), 60);
      Ledger.Verdict ledger = IncrementLoad.verdict(db.label + " flush sources closed under load", load.outcomes(), sums);
      System.out.println(ledger.summary() + " | closed " + closedRows + " sources " + closed + ", ready " + ready + " "
        + readyAfterMs + " ms after, open sources then " + open + ", closed ones left " + closedLeft);

      ledger.assertHoldsAllAnswered();
      assertThat(ledger.count("200")).as("200s").isPositive();
      assertThat(ledger.count("202")).as("202s").isPositive();
      assertThat(ready).as("/health/ready after the sources were closed, without a restart").isEqualTo(200);
      assertThat(open).as("the sources the gateway writes under now").isNotEmpty().doesNotContainAnyElementsOf(closed);
      assertThat(closedLeft).as("closed sources, once resolved, hold nothing and are deleted").isZero();
    } finally {
      if (!gatewayStopped) {
        stopQuietly(fixture);
      }
      await(fixture.vertx.close(), 30);
    }
  }

  @Test
  @DisplayName("three graceful restarts leave no flush source behind")
  void sourcesCleanedAcrossRestarts() {
    FaultDatabase db = database();
    String table = table("restarts");
    for (int run = 0; run < 3; run++) {
      GatewayFixture fixture = GatewayFixture.start(gatewayConfig(db.config(), table));
      try {
        String prefix = Faults.uniquePrefix("restart" + run);
        IncrementLoad load = new IncrementLoad(tools, fixture.gateway.port(), "downloads", prefix, 4, 1, 10, 10_000);
        await(load.start(), 30);
        assertThat(openSources(table)).as("sources while running").isNotEmpty();
        await(fixture.stopGateway(), 60);
        Map<String, Long> sums = await(db.sums(tools, table, "downloads", prefix), 60);
        IncrementLoad.verdict(db.label + " restart " + run, load.outcomes(), sums).assertHoldsAllAnswered();
      } finally {
        await(fixture.vertx.close(), 30);
      }
    }
    assertThat(count("SELECT COUNT(*) FROM " + table + "_flush_sources")).as("flush sources after three stops").isZero();
    assertThat(count("SELECT COUNT(*) FROM " + table + "_flushes")).as("flush ids after three stops").isZero();
  }
}
