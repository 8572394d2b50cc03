package io.countergateway.internal.store;

import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.testing.Flushes;
import io.countergateway.testing.DirectSql;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

@ExtendWith(VertxExtension.class)
@DisplayName("Versioned schema steps")
class SchemaUpgradeIT {

  private static DatabaseOptions options(String database, String table) {
    return DirectSql.options(database, table);
  }

  private static Pool directPool(Vertx vertx, String database) {
    return DirectSql.pool(vertx, database);
  }

  private static String freshTable() {
    return "schema_" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static int recordedVersion(Pool sql, String table) {
    Row row = await(sql.query("SELECT COUNT(*), MAX(version) FROM " + table + "_schema").execute()).iterator().next();
    assertThat(((Number) row.getValue(0)).intValue()).as("one row per step").isEqualTo(((Number) row.getValue(1)).intValue());
    return ((Number) row.getValue(1)).intValue();
  }

  private static int latest(String database) {
    return new SchemaUpgrade(database.equals("postgres"), "any").latestVersion();
  }

  /** The layout a gateway created before schema steps existed: {@code schema/<dialect>.sql} of that version. */
  private static void createPreviousLayout(Pool sql, String database, String table) throws IOException {
    String file = database.equals("postgres") ? "postgres.sql" : "mysql.sql";
    try (InputStream in = SchemaUpgradeIT.class.getResourceAsStream("/schema-previous/" + file)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("${table}", table);
      List<String> statements = new ArrayList<>();
      for (String chunk : text.lines().filter(l -> !l.trim().startsWith("--")).reduce("", (a, b) -> a + b + "\n").split(";")) {
        if (!chunk.isBlank()) {
          statements.add(chunk.trim());
        }
      }
      for (String statement : statements) {
        await(sql.query(statement).execute());
      }
    }
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("upgrades a database created by the previous layout and keeps every counter and flush id")
  void upgradesThePreviousLayout(String database, Vertx vertx) throws IOException {
    String table = freshTable();
    Pool sql = directPool(vertx, database);
    createPreviousLayout(sql, database, table);
    // what a gateway of the previous version had written: two slot rows and the id of the flush that wrote them
    String flushId = Flushes.source("before") + ":0";
    await(sql.query("INSERT INTO " + table + " (record_type, record_id, slot, count) VALUES ('likes', 'kept', 0, 40), "
      + "('likes', 'kept', 3, 2)").execute());
    await(sql.query("INSERT INTO " + table + "_flushes (flush_id) VALUES ('" + flushId + "')").execute());
    Flush before = new Flush(FlushId.parse(flushId), List.of(new FlushRow("likes", "kept", (short) 0, 40), new FlushRow("likes", "kept", (short) 3, 2)));

    CounterStore store = SqlStores.create(vertx, options(database, table), 1, 30_000);
    await(store.createSchema());

    assertThat(recordedVersion(sql, table)).isEqualTo(latest(database));
    assertThat(await(store.sum("likes", List.of("kept")))).containsEntry("kept", BigInteger.valueOf(42));
    assertThat(await(Flushes.write(store, before))).as("the flush id survived the upgrade")
      .isEqualTo(WriteOutcome.ALREADY_COMMITTED);
    assertThat(await(store.sum("likes", List.of("kept")))).containsEntry("kept", BigInteger.valueOf(42));
    Row rows = await(sql.query("SELECT COUNT(*), MIN(CASE WHEN dirty THEN 1 ELSE 0 END) FROM " + table).execute()).iterator().next();
    assertThat(((Number) rows.getValue(0)).intValue()).isEqualTo(2);
    assertThat(((Number) rows.getValue(1)).intValue()).as("old rows start dirty, to be rolled up once").isEqualTo(1);
    await(store.checkSchema());
    await(store.close());
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("four replicas starting together apply each step exactly once, and a restart applies nothing")
  void concurrentUpgradesApplyEachStepOnce(String database, Vertx vertx) {
    String table = freshTable();
    List<CounterStore> stores = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      stores.add(SqlStores.create(vertx, options(database, table), 1, 30_000));
    }
    await(Future.all(stores.stream().map(CounterStore::createSchema).toList()));
    await(stores.get(0).createSchema());
    Pool sql = directPool(vertx, database);
    assertThat(recordedVersion(sql, table)).isEqualTo(latest(database));
    stores.forEach(CounterStore::close);
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("refuses a database whose schema is newer than the gateway, naming both versions")
  void refusesANewerDatabase(String database, Vertx vertx) {
    String table = freshTable();
    CounterStore store = SqlStores.create(vertx, options(database, table), 1, 30_000);
    await(store.createSchema());
    int newer = latest(database) + 1;
    await(directPool(vertx, database).query("INSERT INTO " + table + "_schema (version, description) VALUES ("
      + newer + ", 'from the future')").execute());
    assertThatThrownBy(() -> await(store.createSchema())).hasMessageContaining("at version " + newer)
      .hasMessageContaining("newer than this gateway");
    assertThatThrownBy(() -> await(store.checkSchema())).hasMessageContaining("newer than this gateway");
    await(store.close());
  }

  @ParameterizedTest(name = "on {0}")
  @ValueSource(strings = {"postgres", "mariadb"})
  @DisplayName("with createSchema=false, an unprepared database is refused with the step files a DBA must apply")
  void checkNamesTheFilesToApply(String database, Vertx vertx) {
    String table = freshTable();
    String dialect = database.equals("postgres") ? "postgres" : "mysql";
    CounterStore store = SqlStores.create(vertx, options(database, table), 1, 30_000);
    assertThatThrownBy(() -> await(store.checkSchema()))
      .hasMessageContaining("schema/" + dialect + "/001.sql").hasMessageContaining("database.createSchema");
    await(store.createSchema());
    await(store.checkSchema());
    await(store.close());
  }
}
