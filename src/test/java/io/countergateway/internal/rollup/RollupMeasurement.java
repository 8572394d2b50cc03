package io.countergateway.internal.rollup;

import io.countergateway.config.CompactionOptions;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.config.RollupOptions;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.testing.DirectSql;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static io.countergateway.testing.GatewayFixture.await;

/**
 * Not a test: times a roll-up over 100,000 changed counters on the machine's own PostgreSQL and MariaDB, opt in
 * with {@code -Dmeasure.rollup=true} (and {@code -Dmeasure.counters=N}). Figures go to standard output.
 */
@EnabledIfSystemProperty(named = "measure.rollup", matches = "true")
@DisplayName("Roll-up and compaction run times (measurement, opt in)")
class RollupMeasurement {

  private static DatabaseOptions machineDatabase(String database, String table) {
    return DatabaseOptions.fromJson(new JsonObject().put("kind", database.equals("postgres") ? "postgres" : "mysql")
      .put("host", "127.0.0.1").put("name", "test").put("table", table));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  void measure(String database) {
    int counters = Integer.getInteger("measure.counters", 100_000);
    Vertx vertx = Vertx.vertx();
    try {
      boolean postgres = database.equals("postgres");
      String table = "measure_counters";
      DatabaseOptions options = machineDatabase(database, table);
      Pool sql = SqlStores.pool(vertx, options, 4);
      for (String drop : List.of(table, table + "_flushes", table + "_schema", table + "_rollups", "measure_repos")) {
        await(sql.query("DROP TABLE IF EXISTS " + drop).execute());
      }
      CounterStore store = SqlStores.create(vertx, options, 1, 30_000);
      await(store.createSchema().eventually(store::close));
      await(sql.query("CREATE TABLE measure_repos (id BIGINT NOT NULL PRIMARY KEY, download_count BIGINT NOT NULL DEFAULT 0)").execute());
      DirectSql.insert(sql, "measure_repos (id)", counters, i -> "(" + (i + 1) + ")");
      String old = postgres ? "now() - interval '1 hour'" : "NOW(3) - INTERVAL 1 HOUR";
      DirectSql.insert(sql, table + " (record_type, record_id, slot, count, written_at)", counters * 4,
        i -> "('downloads', '" + (i / 4 + 1) + "', " + (i % 4) + ", 1, " + old + ")");
      await(sql.query(postgres ? "ANALYZE" : "ANALYZE TABLE " + table).execute());

      for (int batchSize : new int[] {1000, 200}) {
        RollupOptions rollupOptions = RollupOptions.fromJson(new JsonObject().put("namespace", "downloads")
          .put("table", "measure_repos").put("keyColumn", "id").put("valueColumn", "download_count").put("batchSize", batchSize));
        RollupSql rollupSql = postgres ? RollupSql.postgres(table, rollupOptions, true) : RollupSql.mysql(table, rollupOptions, true);
        Rollup rollup = new Rollup(sql, table, rollupOptions, rollupSql, new RollupMetrics(new SimpleMeterRegistry(), "downloads"));
        await(sql.query("UPDATE " + table + " SET dirty = TRUE" + (postgres ? "" : ", written_at = written_at")).execute());
        List<String> lines = new ArrayList<>();
        Rollup.Run full = await(rollup.runOnce());
        lines.add("%s batch %d: %d changed counters rolled in %.2f s".formatted(database, batchSize, full.counters(),
          (full.finishedNanos() - full.startedNanos()) / 1e9));
        Rollup.Run idle = await(rollup.runOnce());
        lines.add("%s batch %d: nothing changed, run in %.3f s".formatted(database, batchSize,
          (idle.finishedNanos() - idle.startedNanos()) / 1e9));
        lines.forEach(System.out::println);
      }
      long rowsBefore = DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + table);
      Compaction compaction = new Compaction(sql, postgres, table,
        CompactionOptions.fromJson(new JsonObject().put("enabled", true).put("idleAfter", "1m").put("batchSize", 100)), new SimpleMeterRegistry());
      long started = System.nanoTime();
      Compaction.Run run = await(compaction.runOnce());
      System.out.printf("%s compaction: %d counters folded, %d -> %d rows in %.2f s%n", database, run.counters(), rowsBefore,
        DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + table), (System.nanoTime() - started) / 1e9);
      await(sql.close());
    } finally {
      await(vertx.close());
    }
  }
}
