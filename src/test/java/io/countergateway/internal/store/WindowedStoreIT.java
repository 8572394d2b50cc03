package io.countergateway.internal.store;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.testing.Flushes;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.SettableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigInteger;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
@DisplayName("Windowed counters in the store of each dialect")
class WindowedStoreIT {
  private static final String TABLE = "window_store_counters";
  private static final long HOUR = 3_600;
  private static final long TEN = Instant.parse("2026-11-22T10:00:00Z").getEpochSecond();

  private static CounterStore store(Vertx vertx, String database) {
    CounterStore store = SqlStores.create(vertx, DirectSql.options(database, TABLE), 2, 10_000);
    await(store.createSchema());
    return store;
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a flush of plain and windowed rows over many buckets writes once; its retry under the same id writes nothing")
  void windowedFlushesAreExactlyOnce(String database, Vertx vertx) {
    CounterStore store = store(vertx, database);
    String id = "ws-" + UUID.randomUUID();
    List<FlushRow> rows = new ArrayList<>(List.of(new FlushRow("likes", id, (short) 1, 7)));
    for (int bucket = 0; bucket < 5; bucket++) {
      rows.add(new FlushRow("views", id, (short) 0, bucket + 1, TEN + bucket * HOUR));
      rows.add(new FlushRow("views", id, (short) 3, 10, TEN + bucket * HOUR));
    }
    rows.sort(null);
    Flush flush = Flushes.of(Flushes.source("wtest"), 1, rows);
    assertThat(await(Flushes.write(store, flush))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(await(store.write(flush))).isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    Flush windowedOnly = Flushes.of(flush.id().source(), 2, List.of(new FlushRow("views", id, (short) 2, 100, TEN)));
    assertThat(await(store.write(windowedOnly))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(await(store.write(windowedOnly))).isEqualTo(WriteOutcome.ALREADY_COMMITTED);

    assertThat(await(store.sum("likes", List.of(id)))).containsEntry(id, BigInteger.valueOf(7));
    assertThat(await(store.windowBuckets("views", id, TEN, TEN + 5 * HOUR))).extracting(BucketValue::value)
      .containsExactly(BigInteger.valueOf(111), BigInteger.valueOf(12), BigInteger.valueOf(13), BigInteger.valueOf(14),
        BigInteger.valueOf(15));
    assertThat(await(store.windowTotals("views", List.of(id, "none"), TEN + HOUR, TEN + 3 * HOUR)))
      .containsEntry(id, BigInteger.valueOf(25)).containsEntry("none", BigInteger.ZERO);
    await(store.reset(new io.countergateway.internal.model.CounterKey("views", id)));
    assertThat(await(store.windowTotals("views", List.of(id), 0, Long.MAX_VALUE))).containsEntry(id, BigInteger.ZERO);
    await(store.close());
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("the retention job deletes only the buckets past the retention, in small batches, and reports no lag after")
  void retentionDeletesOnlyExpiredBuckets(String database, Vertx vertx) {
    CounterStore store = store(vertx, database);
    String type = "ret" + Long.toString(System.nanoTime() % 1_000_000, 36);
    // 48 hourly buckets of 3 ids, ending in the hour before "now"
    List<FlushRow> rows = new ArrayList<>();
    for (int bucket = 0; bucket < 48; bucket++) {
      for (int i = 0; i < 3; i++) {
        rows.add(new FlushRow(type, "id" + i, (short) 0, 1, TEN - bucket * HOUR));
      }
    }
    rows.sort(null);
    await(Flushes.write(store, Flushes.of(Flushes.source("rtest"), 1, rows)));
    await(Flushes.write(store, Flushes.of(Flushes.source("rtest"), 1,
      List.of(new FlushRow("other", "id0", (short) 0, 1, TEN - 47 * HOUR)))));

    NamespaceOptions namespace = NamespaceOptions.fromJson(type, new JsonObject().put("window", new JsonObject()
      .put("bucket", "hour").put("retention", "24h").put("maxFutureSkew", "5m").put("maxRangeBuckets", 100)
      .put("expiryInterval", "1m")));
    SettableClock clock = new SettableClock(Instant.ofEpochSecond(TEN + HOUR / 2));
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    Pool pool = DirectSql.pool(vertx, database);
    BucketRetention retention = new BucketRetention(pool, database.equals("postgres"), TABLE, namespace, clock, 10, registry);

    long cut = retention.cutAt(clock.instant());
    assertThat(cut).isEqualTo(TEN - 24 * HOUR);
    assertThat(await(retention.runOnce())).as("23 buckets of 3 ids before the cut").isEqualTo(23 * 3);
    assertThat(await(store.windowTotals(type, List.of("id0", "id1", "id2"), 0, Long.MAX_VALUE)).values())
      .containsOnly(BigInteger.valueOf(25));
    assertThat(await(store.oldestBucket(type))).isEqualTo(cut);
    assertThat(await(store.oldestBucket("other"))).as("another namespace untouched").isEqualTo(TEN - 47 * HOUR);
    assertThat(registry.get("gateway.window.buckets.deleted").counter().count()).isEqualTo(69);
    assertThat(registry.get("gateway.window.retention.lag.seconds").gauge().value()).isZero();
    assertThat(await(retention.runOnce())).as("nothing left to delete").isZero();
    await(pool.close());
    await(store.close());
  }
}
