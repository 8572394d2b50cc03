package io.countergateway.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@ExtendWith(VertxExtension.class)
@DisplayName("The test databases")
class TestDatabasesIT {

  @Test
  @DisplayName("gives a PostgreSQL config section that the Vert.x client connects with")
  void postgresAnswers(Vertx vertx) throws Exception {
    JsonObject config = TestDatabases.postgres();

    assertThat(config.getString("kind")).isEqualTo("postgres");
    assertThat(config.getString("name")).isEqualTo("counters");
    assertThat(selectOne(vertx, config)).isEqualTo(1);
  }

  @Test
  @DisplayName("restarts PostgreSQL on the same port with its data kept")
  void postgresSurvivesRestart(Vertx vertx) throws Exception {
    JsonObject config = TestDatabases.postgres();
    String id = UUID.randomUUID().toString();
    withConnection(vertx, config, c -> c.query("CREATE TABLE IF NOT EXISTS kept (id TEXT PRIMARY KEY)").execute()
        .compose(r -> c.preparedQuery("INSERT INTO kept (id) VALUES ($1)").execute(Tuple.of(id))));

    TestDatabases.stopPostgres();
    TestDatabases.startPostgresAgain();

    assertThat(TestDatabases.postgres()).isEqualTo(config);
    RowSet<Row> rows = withConnection(vertx, config,
        c -> c.preparedQuery("SELECT id FROM kept WHERE id = $1").execute(Tuple.of(id)));
    assertThat(rows).extracting(row -> row.getString("id")).containsExactly(id);
  }

  @Test
  @DisplayName("gives a MySQL config section for MariaDB that the Vert.x client connects with")
  void mariaDbAnswers(Vertx vertx) throws Exception {
    JsonObject config = TestDatabases.mariadb();

    assertThat(config.getString("kind")).isEqualTo("mysql");
    assertThat(config.getString("name")).isEqualTo("counters");
    assertThat(selectOne(vertx, config)).isEqualTo(1);
  }

  @Test
  @DisplayName("restarts MariaDB on the same port with its data kept")
  void mariaDbSurvivesRestart(Vertx vertx) throws Exception {
    JsonObject config = TestDatabases.mariadb();
    String id = UUID.randomUUID().toString();
    withConnection(vertx, config, c -> c.query("CREATE TABLE IF NOT EXISTS kept (id VARCHAR(64) PRIMARY KEY)").execute()
        .compose(r -> c.preparedQuery("INSERT INTO kept (id) VALUES (?)").execute(Tuple.of(id))));

    TestDatabases.stopMariaDb();
    TestDatabases.startMariaDbAgain();

    assertThat(TestDatabases.mariadb()).isEqualTo(config);
    RowSet<Row> rows = withConnection(vertx, config,
        c -> c.preparedQuery("SELECT id FROM kept WHERE id = ?").execute(Tuple.of(id)));
    assertThat(rows).extracting(row -> row.getString("id")).containsExactly(id);
  }

  @Test
  @DisplayName("MariaDB checks passwords: root with a wrong one is refused, access denied")
  void mariaDbRefusesWrongPassword(Vertx vertx) {
    JsonObject wrong = TestDatabases.mariadb().copy().put("password", "not-the-password");

    assertThatThrownBy(() -> selectOne(vertx, wrong)).hasMessageContaining("Access denied for user 'root'");
  }

  private static int selectOne(Vertx vertx, JsonObject config) throws Exception {
    RowSet<Row> rows = withConnection(vertx, config, c -> c.query("SELECT 1").execute());
    return rows.iterator().next().getInteger(0);
  }

  /** Opens a connection from the config section, runs {@code work} on it, closes it; blocking. */
  private static <T> T withConnection(Vertx vertx, JsonObject config,
      Function<SqlConnection, Future<T>> work) throws Exception {
    Future<SqlConnection> connected = switch (config.getString("kind")) {
      case "postgres" -> PgConnection.connect(vertx, new PgConnectOptions()
          .setHost(config.getString("host")).setPort(config.getInteger("port"))
          .setDatabase(config.getString("name")).setUser(config.getString("user"))
          .setPassword(config.getString("password"))).map(c -> c);
      case "mysql" -> MySQLConnection.connect(vertx, new MySQLConnectOptions()
          .setHost(config.getString("host")).setPort(config.getInteger("port"))
          .setDatabase(config.getString("name")).setUser(config.getString("user"))
          .setPassword(config.getString("password"))).map(c -> c);
      default -> throw new IllegalArgumentException(config.encode());
    };
    return connected
        .compose(c -> work.apply(c).eventually(c::close))
        .await(30, TimeUnit.SECONDS);
  }
}
