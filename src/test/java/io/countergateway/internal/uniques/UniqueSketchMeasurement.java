package io.countergateway.internal.uniques;

import io.countergateway.config.DatabaseOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.internal.store.UniqueSketches;
import io.countergateway.testing.DirectSql;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.apache.datasketches.hll.HllSketch;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static io.countergateway.testing.GatewayFixture.await;

/**
 * Not a test: the table bytes one counter-day of sketches takes, for 100, 10,000 and 1,000,000 visitors written on 1
 * and 3 slots (as three replicas would), merged through the store every 10,000 visitors like periodic merges. Opt in
 * with {@code -Dmeasure.uniques=true}; figures go to standard output.
 */
@EnabledIfSystemProperty(named = "measure.uniques", matches = "true")
@DisplayName("Bytes per counter-day of unique-visitor sketches (measurement, opt in)")
class UniqueSketchMeasurement {
  private static final int LG_K = 12;
  private static final long DAY_START = 1_795_392_000L;

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  void measure(String database) {
    Vertx vertx = Vertx.vertx();
    String table = "measure_uniques_" + System.nanoTime() % 1_000_000;
    DatabaseOptions options = DirectSql.options(database, table);
    boolean postgres = database.equals("postgres");
    try {
      CounterStore counters = SqlStores.create(vertx, options, 1, 30_000);
      await(counters.createSchema().eventually(counters::close));
      UniqueSketches store = new UniqueSketches(vertx, options, 1, 30_000);
      Pool sql = SqlStores.pool(vertx, options, 1);
      SplittableRandom random = new SplittableRandom(42);
      for (int visitors : new int[] {100, 10_000, 1_000_000}) {
        for (int slots : new int[] {1, 3}) {
          String id = "page-" + visitors + "-" + slots;
          CounterKey key = new CounterKey("visits", id, DAY_START);
          List<HllSketch> held = new ArrayList<>();
          for (int slot = 0; slot < slots; slot++) {
            held.add(VisitorSketches.empty(LG_K));
          }
          for (int visitor = 0; visitor < visitors; visitor++) {
            held.get(visitor % slots).update(random.nextLong());
            if ((visitor + 1) % 10_000 == 0 || visitor == visitors - 1) {
              List<UniqueSketches.SketchRow> rows = new ArrayList<>();
              for (int slot = 0; slot < slots; slot++) {
                rows.add(new UniqueSketches.SketchRow(key, (short) slot, held.get(slot).toCompactByteArray()));
                held.set(slot, VisitorSketches.empty(LG_K));
              }
              await(store.merge(rows, (stored, incoming) -> VisitorSketches.union(stored, incoming, LG_K)));
            }
          }
          String sizes = postgres
            ? "SELECT SUM(octet_length(sketch)), SUM(pg_column_size(sketch)), SUM(pg_column_size(u.*)) FROM "
              + table + "_uniques u WHERE record_id = '" + id + "'"
            : "SELECT SUM(LENGTH(sketch)), SUM(LENGTH(sketch)), SUM(LENGTH(sketch) + LENGTH(record_type) "
              + "+ LENGTH(record_id) + 8 + 2) FROM " + table + "_uniques WHERE record_id = '" + id + "'";
          Row row = await(sql.query(sizes).execute()).iterator().next();
          VisitorSketches.Estimate estimate = VisitorSketches.estimate(await(store.read("visits", id, DAY_START,
            DAY_START + 86_400)), LG_K);
          System.out.printf("MEASURE %s visitors=%d slots=%d sketch_bytes=%s stored_bytes=%s row_bytes=%s estimate=%d [%d, %d]%n",
            database, visitors, slots, row.getValue(0), row.getValue(1), row.getValue(2), estimate.unique(),
            estimate.lower(), estimate.upper());
        }
      }
      await(store.close());
      await(sql.close());
    } finally {
      await(vertx.close());
    }
  }
}
