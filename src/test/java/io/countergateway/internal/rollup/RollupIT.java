package io.countergateway.internal.rollup;

import io.countergateway.Gateway;
import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.RollupOptions;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.testing.DirectSql;
import io.countergateway.testing.GatewayFixture;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
@DisplayName("Roll-ups into the application's table")
class RollupIT {
  private static final String NAMESPACE = "downloads";

  /** Names for one test: its counters table and the application's table. */
  record Tables(String counters, String app) {
    static Tables fresh() {
      String suffix = UUID.randomUUID().toString().substring(0, 8);
      return new Tables("rc_" + suffix, "repos_" + suffix);
    }
  }

  static void createCounters(Vertx vertx, String database, String table) {
    CounterStore store = SqlStores.create(vertx, DirectSql.options(database, table), 1, 30_000);
    await(store.createSchema().eventually(store::close));
  }

  /** The application's table, with rows for ids 1..rows (as text or integers). */
  static void createApp(Pool sql, String app, boolean integerKey, int rows) {
    await(sql.query("CREATE TABLE " + app + " (id " + (integerKey ? "BIGINT" : "VARCHAR(255)")
      + " NOT NULL PRIMARY KEY, name VARCHAR(40), download_count BIGINT NOT NULL DEFAULT 0)").execute());
    DirectSql.insert(sql, app + " (id, name)", rows, i -> "(" + (integerKey ? "" + (i + 1) : "'" + (i + 1) + "'") + ", 'repo')");
  }

  /** Slot rows written straight into the table: {@code slots} rows of count 1 for ids 1..counters, all dirty. */
  static void writeSlots(Pool sql, String table, int counters, int slots) {
    DirectSql.insert(sql, table + " (record_type, record_id, slot, count)", counters * slots,
      i -> "('" + NAMESPACE + "', '" + (i / slots + 1) + "', " + (i % slots) + ", 1)");
  }

  static RollupOptions options(Tables tables, int batchSize) {
    return RollupOptions.fromJson(new JsonObject().put("namespace", NAMESPACE).put("table", tables.app())
      .put("keyColumn", "id").put("valueColumn", "download_count").put("interval", "1s").put("batchSize", batchSize));
  }

  static Rollup rollup(Pool pool, String database, Tables tables, int batchSize) {
    boolean postgres = database.equals("postgres");
    RollupOptions options = options(tables, batchSize);
    boolean integerKey = await(RollupTarget.check(pool, postgres, "counters", options));
    RollupSql sql = postgres ? RollupSql.postgres(tables.counters(), options, integerKey)
      : RollupSql.mysql(tables.counters(), options, integerKey);
    return new Rollup(pool, tables.counters(), options, sql, new RollupMetrics(new SimpleMeterRegistry(), NAMESPACE));
  }

  /** Application rows whose column differs from the SUM of their counter's slots. */
  /**
   * Rows of the application's table whose column differs from their counter's SUM. Each row looks its slots up by the
   * counters' primary key: a join against a grouped derived table has no index on MariaDB and compares every pair.
   */
  static long rowsBehind(Pool sql, String database, Tables tables) {
    String key = database.equals("postgres") ? "a.id::text" : "CAST(a.id AS CHAR)";
    return DirectSql.longValue(sql, "SELECT COUNT(*) FROM (SELECT a.id FROM " + tables.app() + " a JOIN "
      + tables.counters() + " c ON c.record_type = '" + NAMESPACE + "' AND c.record_id = " + key
      + " GROUP BY a.id, a.download_count HAVING a.download_count <> SUM(c.count)) behind");
  }

  static long dirtyRows(Pool sql, Tables tables) {
    return DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + tables.counters() + " WHERE dirty");
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("under concurrent increments through a gateway, the column ends equal to the SUM of every counter")
  void convergesUnderConcurrentIncrements(String database, Vertx vertx) throws InterruptedException {
    Tables tables = Tables.fresh();
    Pool sql = DirectSql.pool(vertx, database);
    createApp(sql, tables.app(), true, 100);
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), tables.counters())
      .put("rollups", new JsonArray().add(new JsonObject().put("namespace", NAMESPACE).put("table", tables.app())
        .put("keyColumn", "id").put("valueColumn", "download_count").put("interval", "1s").put("batchSize", 16)));
    try (GatewayFixture gateway = GatewayFixture.start(config)) {
      AtomicBoolean sending = new AtomicBoolean(true);
      AtomicLong committed = new AtomicLong();
      List<Future<Void>> senders = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        senders.add(send(gateway, sending, committed));
      }
      // increments go on until a roll-up has run among them (the column moved), at most 3.5 s
      long rolledBy = System.currentTimeMillis() + 3_500;
      while (DirectSql.longValue(sql, "SELECT COALESCE(SUM(download_count), 0) FROM " + tables.app()) == 0
        && System.currentTimeMillis() < rolledBy) {
        Thread.sleep(100);
      }
      sending.set(false);
      await(Future.all(senders));
      assertThat(DirectSql.longValue(sql, "SELECT SUM(download_count) FROM " + tables.app()))
        .as("rolled up while increments arrived").isPositive();
      long deadline = System.currentTimeMillis() + 20_000;
      while ((rowsBehind(sql, database, tables) > 0 || dirtyRows(sql, tables) > 0) && System.currentTimeMillis() < deadline) {
        Thread.sleep(200);
      }
      assertThat(rowsBehind(sql, database, tables)).isZero();
      assertThat(DirectSql.longValue(sql, "SELECT SUM(download_count) FROM " + tables.app())).isEqualTo(committed.get());
    }
  }

  private static Future<Void> send(GatewayFixture gateway, AtomicBoolean sending, AtomicLong committed) {
    if (!sending.get()) {
      return Future.succeededFuture();
    }
    int id = ThreadLocalRandom.current().nextInt(1, 101);
    return gateway.http.post("/v1/counters/" + NAMESPACE + "/" + id + "/increments").sendJsonObject(new JsonObject().put("delta", 2))
      .compose((HttpResponse<?> response) -> {
        assertThat(response.statusCode()).isEqualTo(200);
        committed.addAndGet(2);
        return send(gateway, sending, committed);
      });
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("rolls up only changed counters; counters without an application row are counted and logged, never created")
  void missingRowsAreCountedNotCreated(String database, Vertx vertx) {
    Tables tables = Tables.fresh();
    Pool sql = DirectSql.pool(vertx, database);
    createCounters(vertx, database, tables.counters());
    createApp(sql, tables.app(), true, 3);
    writeSlots(sql, tables.counters(), 5, 2);
    await(sql.query("INSERT INTO " + tables.counters() + " (record_type, record_id, slot, count) VALUES ('"
      + NAMESPACE + "', 'not-a-number', 0, 7)").execute());
    Rollup rollup = rollup(sql, database, tables, 2);

    Rollup.Run first = await(rollup.runOnce());
    assertThat(first.ran()).isTrue();
    assertThat(first.counters()).isEqualTo(6);
    assertThat(first.missingRows()).as("ids 4, 5 and not-a-number have no row").isEqualTo(3);
    assertThat(DirectSql.longValue(sql, "SELECT COUNT(*) FROM " + tables.app())).isEqualTo(3);
    assertThat(rowsBehind(sql, database, tables)).isZero();
    assertThat(DirectSql.longValue(sql, "SELECT download_count FROM " + tables.app() + " WHERE id = 2")).isEqualTo(2);

    await(sql.query("UPDATE " + tables.counters() + " SET count = count + 10, dirty = TRUE WHERE record_id = '2' AND slot = 1").execute());
    assertThat(rowsBehind(sql, database, tables)).as("the changed counter is ahead of its column").isEqualTo(1);
    Rollup.Run second = await(rollup.runOnce());
    assertThat(second.counters()).as("only the changed counter").isEqualTo(1);
    assertThat(DirectSql.longValue(sql, "SELECT download_count FROM " + tables.app() + " WHERE id = 2")).isEqualTo(12);
    assertThat(await(rollup.lagSeconds())).isNotNull().isBetween(0.0, 60.0);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("two replicas started together never both run one roll-up")
  void oneReplicaAtATime(String database) {
    Tables tables = Tables.fresh();
    Vertx first = Vertx.vertx();
    Vertx second = Vertx.vertx();
    try {
      Pool sql = DirectSql.pool(first, database);
      createCounters(first, database, tables.counters());
      // 10 batches a run: long enough that the replica started second finds the lock taken
      createApp(sql, tables.app(), false, 1_000);
      writeSlots(sql, tables.counters(), 1_000, 2);
      Rollup a = rollup(DirectSql.pool(first, database), database, tables, 100);
      Rollup b = rollup(DirectSql.pool(second, database), database, tables, 100);
      List<Rollup.Run> runs = new ArrayList<>();
      for (int round = 0; round < 5; round++) {
        await(sql.query("UPDATE " + tables.counters() + " SET dirty = TRUE").execute());
        List<Future<Rollup.Run>> both = List.of(a.runOnce(), b.runOnce());
        await(Future.all(both));
        both.forEach(run -> runs.add(run.result()));
      }
      List<Rollup.Run> ran = runs.stream().filter(Rollup.Run::ran).toList();
      assertThat(ran).isNotEmpty();
      for (int i = 0; i < ran.size(); i++) {
        for (int j = i + 1; j < ran.size(); j++) {
          Rollup.Run x = ran.get(i);
          Rollup.Run y = ran.get(j);
          assertThat(x.finishedNanos() < y.startedNanos() || y.finishedNanos() < x.startedNanos())
            .as("runs %s and %s overlap", x, y).isTrue();
        }
      }
      assertThat(runs.stream().filter(run -> !run.ran()).count()).as("started together, one found the lock taken").isPositive();
      assertThat(rowsBehind(sql, database, tables)).isZero();
    } finally {
      await(first.close());
      await(second.close());
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("when the replica running a roll-up dies mid-run, another takes over and the column converges")
  void anotherReplicaTakesOver(String database, Vertx vertx) throws InterruptedException {
    Tables tables = Tables.fresh();
    Pool sql = DirectSql.pool(vertx, database);
    createCounters(vertx, database, tables.counters());
    createApp(sql, tables.app(), true, 10_000);
    writeSlots(sql, tables.counters(), 10_000, 2);
    Vertx doomed = Vertx.vertx();
    Rollup leader = rollup(DirectSql.pool(doomed, database), database, tables, 20);
    leader.runOnce();
    long deadline = System.currentTimeMillis() + 20_000;
    while (dirtyRows(sql, tables) == 20_000 && System.currentTimeMillis() < deadline) {
      Thread.sleep(5);
    }
    await(doomed.close());
    long left = dirtyRows(sql, tables);
    assertThat(left).as("the leader died half-way").isBetween(1L, 19_999L);

    Rollup successor = rollup(DirectSql.pool(vertx, database), database, tables, 500);
    Rollup.Run run = await(successor.runOnce());
    deadline = System.currentTimeMillis() + 10_000;
    while (!run.ran() && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      run = await(successor.runOnce());
    }
    assertThat(run.ran()).isTrue();
    assertThat(dirtyRows(sql, tables)).isZero();
    assertThat(rowsBehind(sql, database, tables)).isZero();
    assertThat(DirectSql.longValue(sql, "SELECT SUM(download_count) FROM " + tables.app())).isEqualTo(20_000);
  }

  private static Gateway start(Vertx vertx, JsonObject config) {
    return await(Gateway.start(vertx, GatewayConfig.fromJson(config), new SimpleMeterRegistry()));
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("a roll-up naming a missing table or column stops the start with one line naming the key")
  void refusesAMissingTargetAtStart(String database, Vertx vertx) {
    Tables tables = Tables.fresh();
    Pool sql = DirectSql.pool(vertx, database);
    createApp(sql, tables.app(), false, 1);
    JsonObject rollup = new JsonObject().put("namespace", NAMESPACE).put("table", tables.app()).put("keyColumn", "id")
      .put("valueColumn", "downloads_total");
    JsonObject config = GatewayFixture.baseConfig(DirectSql.config(database), tables.counters())
      .put("rollups", new JsonArray().add(rollup));
    assertThatThrownBy(() -> start(vertx, config)).rootCause().isInstanceOf(ConfigException.class)
      .hasMessage("rollups[0].valueColumn: column 'downloads_total' does not exist in table " + tables.app());
    rollup.put("valueColumn", "download_count").put("table", "no_such_table");
    assertThatThrownBy(() -> start(vertx, config)).rootCause()
      .hasMessage("rollups[0].table: table 'no_such_table' does not exist in database counters");
    rollup.put("table", tables.app()).put("valueColumn", "name");
    assertThatThrownBy(() -> start(vertx, config)).rootCause()
      .hasMessageStartingWith("rollups[0].valueColumn: " + tables.app() + ".name is");
  }
}
