package io.countergateway.internal.rollup;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.CompactionOptions;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.testing.Flushes;
import io.countergateway.testing.DirectSql;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
@DisplayName("Compaction of idle counters")
class CompactionIT {
  private static final int COUNTERS = 300;
  private static final int SLOTS = 4;

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("folds idle counters into one row each and loses nothing to increments written during the fold")
  void foldsIdleCountersLosingNothing(String database, Vertx vertx) {
    boolean postgres = database.equals("postgres");
    String table = "cc_" + UUID.randomUUID().toString().substring(0, 8);
    Pool sql = DirectSql.pool(vertx, database);
    CounterStore store = SqlStores.create(vertx, DirectSql.options(database, table), 4, 30_000);
    await(store.createSchema());
    String anHourAgo = postgres ? "now() - interval '1 hour'" : "NOW(3) - INTERVAL 1 HOUR";
    DirectSql.insert(sql, table + " (record_type, record_id, slot, count, written_at)", COUNTERS * SLOTS,
      i -> "('likes', '" + id(i / SLOTS) + "', " + (i % SLOTS) + ", " + (i % SLOTS + 1) + ", " + anHourAgo + ")");
    Map<String, Long> expected = new HashMap<>();
    for (int c = 0; c < COUNTERS; c++) {
      expected.put(id(c), (long) (1 + 2 + 3 + 4));
    }

    Compaction compaction = new Compaction(sql, postgres, table,
      CompactionOptions.fromJson(new JsonObject().put("enabled", true).put("idleAfter", "1m").put("batchSize", 10)), new SimpleMeterRegistry());
    Future<Compaction.Run> folding = compaction.runOnce();
    // even counters get increments while the fold runs, on existing and on new slots
    int flushes = 0;
    while (!folding.isComplete() || flushes < 20) {
      await(Flushes.write(store, flushOfEvenCounters(expected)));
      flushes++;
    }
    Compaction.Run run = await(folding);
    assertThat(run.ran()).isTrue();
    assertThat(run.counters()).as("at least every counter nobody wrote").isGreaterThanOrEqualTo(COUNTERS / 2);

    assertThat(sums(sql, table)).isEqualTo(expected);
    Map<String, Long> rows = rowsPerCounter(sql, table);
    for (int c = 1; c < COUNTERS; c += 2) {
      assertThat(rows.get(id(c))).as("rows of idle counter %s", id(c)).isEqualTo(1);
    }

    // once everything is idle, a second run leaves one row per counter and the same totals
    await(sql.query("UPDATE " + table + " SET written_at = " + anHourAgo).execute());
    assertThat(await(compaction.runOnce()).counters()).isPositive();
    assertThat(rowsPerCounter(sql, table).values()).containsOnly(1L).hasSize(COUNTERS);
    assertThat(sums(sql, table)).isEqualTo(expected);
    assertThat(await(compaction.runOnce()).counters()).as("nothing left to fold").isZero();
    await(store.close());
  }

  private static String id(int counter) {
    return "c" + (1000 + counter);
  }

  private static Flush flushOfEvenCounters(Map<String, Long> expected) {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    List<FlushRow> rows = new ArrayList<>();
    for (int c = 0; c < COUNTERS; c += 2) {
      if (random.nextInt(4) == 0) {
        long delta = random.nextInt(1, 4);
        rows.add(new FlushRow("likes", id(c), (short) random.nextInt(SLOTS + 2), delta));
        expected.merge(id(c), delta, Long::sum);
      }
    }
    rows.sort(Comparator.comparing(FlushRow::id).thenComparing(FlushRow::slot));
    return Flushes.of(Flushes.source("compaction"), 0, rows);
  }

  private static Map<String, Long> sums(Pool sql, String table) {
    Map<String, Long> sums = new HashMap<>();
    for (Row row : await(sql.query("SELECT record_id, SUM(count) FROM " + table + " GROUP BY record_id").execute())) {
      sums.put(row.getString(0), ((Number) row.getValue(1)).longValue());
    }
    return sums;
  }

  private static Map<String, Long> rowsPerCounter(Pool sql, String table) {
    Map<String, Long> rows = new HashMap<>();
    for (Row row : await(sql.query("SELECT record_id, COUNT(*) FROM " + table + " GROUP BY record_id").execute())) {
      rows.put(row.getString(0), ((Number) row.getValue(1)).longValue());
    }
    return rows;
  }
}
