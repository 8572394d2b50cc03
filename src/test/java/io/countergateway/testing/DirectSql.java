package io.countergateway.testing;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Plain SQL on the embedded test databases, beside the gateway's own code: to set up states and check results. */
public final class DirectSql {
  private DirectSql() {
  }

  /** {@code database} is "postgres" or "mariadb". */
  public static JsonObject config(String database) {
    return database.equals("postgres") ? TestDatabases.postgres() : TestDatabases.mariadb();
  }

  /** The gateway's database options for the test database, with the counters in {@code table}. */
  public static DatabaseOptions options(String database, String table) {
    return DatabaseOptions.fromJson(config(database).copy().put("table", table));
  }

  public static Pool pool(Vertx vertx, String database) {
    JsonObject db = config(database);
    return database.equals("postgres")
      ? PgBuilder.pool().connectingTo(new PgConnectOptions().setHost(db.getString("host")).setPort(db.getInteger("port"))
        .setDatabase(db.getString("name")).setUser(db.getString("user")).setPassword(db.getString("password"))).using(vertx).build()
      : MySQLBuilder.pool().connectingTo(new MySQLConnectOptions().setHost(db.getString("host")).setPort(db.getInteger("port"))
        .setDatabase(db.getString("name")).setUser(db.getString("user")).setPassword(db.getString("password"))).using(vertx).build();
  }

  /** Inserts rows as multi-row VALUES statements of 500 rows, four at a time; {@code row} renders one tuple as SQL. */
  public static void insert(Pool pool, String into, int rows, Function<Integer, String> row) {
    List<Future<?>> statements = new ArrayList<>();
    for (int from = 0; from < rows; from += 500) {
      List<String> values = new ArrayList<>();
      for (int i = from; i < Math.min(rows, from + 500); i++) {
        values.add(row.apply(i));
      }
      statements.add(pool.query("INSERT INTO " + into + " VALUES " + String.join(", ", values)).execute());
      if (statements.size() == 4) {
        GatewayFixture.await(Future.all(statements));
        statements.clear();
      }
    }
    GatewayFixture.await(Future.all(statements));
  }

  public static long longValue(Pool pool, String query) {
    Row row = GatewayFixture.await(pool.query(query).execute()).iterator().next();
    Object value = row.getValue(0);
    return value == null ? 0 : ((Number) value).longValue();
  }

  public static String stringValue(Pool pool, String query) {
    Row row = GatewayFixture.await(pool.query(query).execute()).iterator().next();
    return row.getString(0);
  }
}
