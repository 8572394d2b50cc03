package io.countergateway.internal.store;

import io.countergateway.Counter;
import io.countergateway.CounterException;
import io.countergateway.InTransactionCounters;
import io.countergateway.config.GatewayConfig;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
@DisplayName("Increments inside the caller's transaction")
class InTransactionCountersIT {

  private record Setup(Pool sql, CounterStore store, InTransactionCounters counters, String orders) {
  }

  private static Setup setup(Vertx vertx, String database) {
    String table = "tx_" + UUID.randomUUID().toString().substring(0, 8);
    GatewayConfig config = GatewayConfig.fromJson(GatewayFixture.baseConfig(DirectSql.config(database), table));
    CounterStore store = SqlStores.create(vertx, config.getDatabase(), 2, 30_000);
    await(store.createSchema());
    Pool sql = DirectSql.pool(vertx, database);
    String orders = table + "_orders";
    await(sql.query("CREATE TABLE " + orders + " (id VARCHAR(64) NOT NULL PRIMARY KEY)").execute());
    return new Setup(sql, store, InTransactionCounters.of(config), orders);
  }

  private static String insertOrder(Setup setup, String database) {
    return "INSERT INTO " + setup.orders() + " (id) VALUES (" + (database.equals("postgres") ? "$1" : "?") + ")";
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("commits the increments together with the caller's own row")
  void commitsWithTheCaller(String database, Vertx vertx) {
    Setup setup = setup(vertx, database);
    await(setup.sql().withTransaction(conn -> conn.preparedQuery(insertOrder(setup, database)).execute(Tuple.of("order-1"))
      .compose(inserted -> setup.counters().increment(conn, "likes", "product-7", 3))
      .compose(done -> setup.counters().incrementAll(conn, Map.of(
        new Counter("downloads", "b"), 2L, new Counter("downloads", "a"), 5L)))));
    assertThat(DirectSql.longValue(setup.sql(), "SELECT COUNT(*) FROM " + setup.orders())).isEqualTo(1);
    assertThat(await(setup.store().sum("likes", List.of("product-7")))).containsEntry("product-7", BigInteger.valueOf(3));
    assertThat(await(setup.store().sum("downloads", List.of("a", "b")))).containsEntry("a", BigInteger.valueOf(5)).containsEntry("b", BigInteger.valueOf(2));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("rolls the increments back with the caller's transaction")
  void rollsBackWithTheCaller(String database, Vertx vertx) {
    Setup setup = setup(vertx, database);
    assertThatThrownBy(() -> await(setup.sql().withTransaction(conn -> setup.counters().increment(conn, "likes", "product-8", 4)
      .compose(done -> conn.preparedQuery(insertOrder(setup, database)).execute(Tuple.of("dup")))
      .compose(done -> conn.preparedQuery(insertOrder(setup, database)).execute(Tuple.of("dup"))))))
      .as("the caller's second insert breaks its primary key");
    assertThat(DirectSql.longValue(setup.sql(), "SELECT COUNT(*) FROM " + setup.orders())).isZero();
    assertThat(await(setup.store().sum("likes", List.of("product-8")))).containsEntry("product-8", BigInteger.valueOf(0));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("many transactions naming the same counters in opposite orders neither deadlock nor lose a count")
  void keyOrderPreventsDeadlocks(String database, Vertx vertx) {
    Setup setup = setup(vertx, database);
    List<Future<?>> transactions = new ArrayList<>();
    for (int t = 0; t < 40; t++) {
      Map<Counter, Long> deltas = new LinkedHashMap<>();
      for (int c = 0; c < 5; c++) {
        int counter = t % 2 == 0 ? c : 4 - c;
        deltas.put(new Counter("likes", "hot-" + counter), 1L);
      }
      transactions.add(setup.sql().withTransaction(conn -> setup.counters().incrementAll(conn, deltas)));
    }
    await(Future.all(transactions));
    Map<String, BigInteger> sums = await(setup.store().sum("likes", List.of("hot-0", "hot-1", "hot-2", "hot-3", "hot-4")));
    assertThat(sums.values()).containsOnly(BigInteger.valueOf(40));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("refuses an undeclared namespace or a delta out of range before writing anything")
  void refusesBadInput(String database, Vertx vertx) {
    Setup setup = setup(vertx, database);
    assertThatThrownBy(() -> await(setup.sql().withTransaction(conn -> setup.counters().increment(conn, "nope", "x", 1))))
      .rootCause().isInstanceOf(CounterException.class).hasMessageContaining("not declared");
    assertThatThrownBy(() -> await(setup.sql().withTransaction(conn -> setup.counters().increment(conn, "likes", "x", Long.MAX_VALUE))))
      .rootCause().isInstanceOf(CounterException.class).hasMessageContaining("delta must be between");
    assertThat(await(setup.store().sum("likes", List.of("x")))).containsEntry("x", BigInteger.ZERO);
  }
}
