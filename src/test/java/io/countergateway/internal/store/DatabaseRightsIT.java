package io.countergateway.internal.store;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.countergateway.testing.DirectSql;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.UUID;

import static io.countergateway.testing.GatewayFixture.await;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The rights the start checks (docs/databases.md "The database user") and the identity it reads, on both databases. */
@ExtendWith(VertxExtension.class)
@DisplayName("Every right the gateway's statements use, checked at start, and the database's identity")
class DatabaseRightsIT {
  private static final List<String> MARIADB_HOSTS = List.of("%", "localhost", "127.0.0.1");

  private static String fresh(String prefix) {
    return prefix + UUID.randomUUID().toString().substring(0, 8);
  }

  /** The schema, made by the tests' user (every right). */
  private static void createSchema(Vertx vertx, String database, String table) {
    CounterStore store = SqlStores.create(vertx, DirectSql.options(database, table), 1, 30_000);
    await(store.createSchema());
    await(store.close());
  }

  private static DatabaseOptions as(String database, String table, String user) {
    JsonObject config = DirectSql.config(database).copy().put("table", table).put("user", user).put("password", "pw");
    return DatabaseOptions.fromJson(config);
  }

  @Test
  @DisplayName("PostgreSQL: a user without INSERT and UPDATE on the counters table is refused naming database.user and both rights; granted them, the start reads the database's id")
  void postgresTableRights(Vertx vertx) {
    String table = fresh("rights_");
    String user = fresh("rights_user_");
    createSchema(vertx, "postgres", table);
    Pool admin = DirectSql.pool(vertx, "postgres");
    await(admin.query("CREATE ROLE " + user + " LOGIN PASSWORD 'pw'").execute());
    for (String each : SchemaUpgrade.tables(table)) {
      String rights = each.equals(table) ? "SELECT, DELETE" : "SELECT, INSERT, UPDATE, DELETE";
      await(admin.query("GRANT " + rights + " ON " + each + " TO " + user).execute());
    }
    assertThatThrownBy(() -> await(SqlStores.checkRightsAndIdentify(vertx, as("postgres", table, user))))
      .rootCause().isInstanceOf(ConfigException.class)
      .hasMessageStartingWith("database.user: '" + user + "' lacks INSERT on table " + table + ", UPDATE on table "
        + table + " in database 'counters'");

    await(admin.query("GRANT INSERT, UPDATE ON " + table + " TO " + user).execute());
    SqlStores.Identified identified = await(SqlStores.checkRightsAndIdentify(vertx, as("postgres", table, user)));
    assertThat(identified.replication().kind()).as("the machine's server has no standby")
      .isEqualTo(ReplicationSetup.Kind.NO_STANDBY);
    String id = identified.id();
    assertThat(id).isNotBlank()
      .isEqualTo(DirectSql.stringValue(admin, "SELECT id FROM " + table + "_identity"));
    createSchema(vertx, "postgres", table);
    assertThat(await(SqlStores.checkRightsAndIdentify(vertx, DirectSql.options("postgres", table))).id())
      .as("a schema step run again keeps the id").isEqualTo(id);
    await(admin.close());
  }

  @Test
  @DisplayName("MariaDB: a user with every table right but not EXECUTE on the flush procedure is refused naming database.user and the procedure; granted it, the start reads the database's id")
  void mariadbExecute(Vertx vertx) {
    String table = fresh("rights_");
    String user = fresh("rights_user_");
    createSchema(vertx, "mariadb", table);
    Pool admin = DirectSql.pool(vertx, "mariadb");
    for (String host : MARIADB_HOSTS) {
      await(admin.query("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY 'pw'").execute());
      await(admin.query("GRANT SELECT, INSERT, UPDATE, DELETE ON counters.* TO '" + user + "'@'" + host + "'").execute());
    }
    try {
      assertThatThrownBy(() -> await(SqlStores.checkRightsAndIdentify(vertx, as("mariadb", table, user))))
        .rootCause().isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("database.user: '" + user + "' lacks EXECUTE on procedure " + table + "_write_flush");

      for (String host : MARIADB_HOSTS) {
        await(admin.query("GRANT EXECUTE ON PROCEDURE counters." + table + "_write_flush TO '" + user + "'@'" + host
          + "'").execute());
      }
      SqlStores.Identified identified = await(SqlStores.checkRightsAndIdentify(vertx, as("mariadb", table, user)));
      assertThat(identified.replication().kind()).as("a user without PROCESS sees no replica")
        .isEqualTo(ReplicationSetup.Kind.NO_STANDBY);
      assertThat(identified.id()).hasSize(32).isEqualTo(DirectSql.stringValue(admin, "SELECT id FROM " + table + "_identity"));
    } finally {
      for (String host : MARIADB_HOSTS) {
        await(admin.query("DROP USER IF EXISTS '" + user + "'@'" + host + "'").execute());
      }
      await(admin.close());
    }
  }

  @Test
  @DisplayName("MariaDB: a user without UPDATE on the flush ids table is refused naming that table")
  void mariadbTableRight(Vertx vertx) {
    String table = fresh("rights_");
    String user = fresh("rights_user_");
    createSchema(vertx, "mariadb", table);
    Pool admin = DirectSql.pool(vertx, "mariadb");
    for (String host : MARIADB_HOSTS) {
      await(admin.query("CREATE USER '" + user + "'@'" + host + "' IDENTIFIED BY 'pw'").execute());
      for (String each : SchemaUpgrade.tables(table)) {
        String rights = each.equals(table + "_flushes") ? "SELECT, INSERT, DELETE" : "SELECT, INSERT, UPDATE, DELETE";
        await(admin.query("GRANT " + rights + " ON counters." + each + " TO '" + user + "'@'" + host + "'").execute());
      }
      await(admin.query("GRANT EXECUTE ON PROCEDURE counters." + table + "_write_flush TO '" + user + "'@'" + host
        + "'").execute());
    }
    try {
      assertThatThrownBy(() -> await(SqlStores.checkRightsAndIdentify(vertx, as("mariadb", table, user))))
        .rootCause().isInstanceOf(ConfigException.class)
        .hasMessageStartingWith("database.user: '" + user + "' lacks UPDATE on table " + table + "_flushes in");
    } finally {
      for (String host : MARIADB_HOSTS) {
        await(admin.query("DROP USER IF EXISTS '" + user + "'@'" + host + "'").execute());
      }
      await(admin.close());
    }
  }
}
