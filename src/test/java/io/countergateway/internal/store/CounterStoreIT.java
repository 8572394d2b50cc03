package io.countergateway.internal.store;

import java.math.BigInteger;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.testing.Flushes;
import io.countergateway.testing.TestDatabases;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;

@ExtendWith(VertxExtension.class)
@DisplayName("The store of each dialect")
class CounterStoreIT {

  private static CounterStore store(Vertx vertx, String database) {
    JsonObject db = database.equals("postgres") ? TestDatabases.postgres() : TestDatabases.mariadb();
    DatabaseOptions options = DatabaseOptions.fromJson(db.copy().put("table", "store_counters"));
    CounterStore store = SqlStores.create(vertx, options, 2, 10_000);
    await(store.createSchema());
    return store;
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("writes a flush once, and a second write of the same flush id writes nothing")
  void flushIdsMakeWritesIdempotent(String database, Vertx vertx) {
    CounterStore store = store(vertx, database);
    String id = "store-" + UUID.randomUUID();
    Flush flush = Flushes.of(Flushes.source("test"), 0, List.of(
      new FlushRow("likes", id, (short) 0, 5), new FlushRow("likes", id, (short) 1, 2)));
    assertThat(await(Flushes.write(store, flush))).isEqualTo(WriteOutcome.COMMITTED);
    assertThat(await(store.write(flush))).isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(await(store.sum("likes", List.of(id, "none")))).containsEntry(id, BigInteger.valueOf(7)).containsEntry("none", BigInteger.ZERO);
    await(store.reset(new io.countergateway.internal.model.CounterKey("likes", id)));
    assertThat(await(store.sum("likes", List.of(id)))).containsEntry(id, BigInteger.ZERO);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("closes a flush source silent for the retention, keeping its ids, and deletes it with them a retention later")
  void prunesOldFlushIds(String database, Vertx vertx) throws InterruptedException {
    CounterStore store = store(vertx, database);
    await(Flushes.write(store, Flushes.of(Flushes.source("old"), 0, List.of(new FlushRow("likes", "prune", (short) 0, 1)))));
    Thread.sleep(2_100);
    assertThat(await(store.pruneFlushIds(2))).as("closed: its id is kept for its gateway").isZero();
    Thread.sleep(2_100);
    Flush recent = Flushes.of(Flushes.source("recent"), 0, List.of(new FlushRow("likes", "prune", (short) 0, 1)));
    await(Flushes.write(store, recent));
    assertThat(await(store.pruneFlushIds(2))).as("closed for the retention: deleted with its id").isGreaterThanOrEqualTo(1);
    assertThat(await(store.pruneFlushIds(2))).isZero();
    assertThat(await(store.write(recent))).as("its source is open: the id is still there")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
  }
}
