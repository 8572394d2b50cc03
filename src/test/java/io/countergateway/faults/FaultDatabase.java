package io.countergateway.faults;

import io.countergateway.testing.TestDatabases;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the fault tests need from each test database: its config section, stopping and starting it, a direct
 * SQL connection (never through the gateway or a proxy) to check the table, and killing the gateway's connections.
 */
enum FaultDatabase {
  POSTGRES("PostgreSQL") {
    @Override
    JsonObject config() {
      return TestDatabases.postgres();
    }

    @Override
    void stop() {
      TestDatabases.stopPostgres();
    }

    @Override
    void startAgain() {
      TestDatabases.startPostgresAgain();
    }

    @Override
    Future<SqlConnection> connect(Vertx vertx) {
      JsonObject db = config();
      return PgConnection.connect(vertx, new PgConnectOptions().setHost(db.getString("host")).setPort(db.getInteger("port"))
        .setDatabase(db.getString("name")).setUser(db.getString("user")).setPassword(db.getString("password")))
        .map(c -> c);
    }

    @Override
    Future<Integer> killOtherConnections(SqlConnection killer) {
      // every client backend of the test database but our own: the gateway's write and read pools
      return killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
          + " AND pid <> pg_backend_pid() AND backend_type = 'client backend'").execute()
        .map(rows -> {
          int killed = 0;
          for (Row row : rows) {
            killed += Boolean.TRUE.equals(row.getBoolean(0)) ? 1 : 0;
          }
          return killed;
        });
    }

    @Override
    String mark(int position) {
      return "$" + position;
    }

    @Override
    Future<Void> readOnly(SqlConnection admin, boolean on) {
      // what a failover to a standby looks like to new sessions: 25006 read_only_sql_transaction on every write;
      // the sessions open now are ended, so only new ones (which take the setting) remain
      return admin.query("ALTER DATABASE " + TestDatabases.DATABASE + (on ? " SET default_transaction_read_only = on"
          : " RESET default_transaction_read_only")).execute()
        .compose(done -> killOtherConnections(admin)).mapEmpty();
    }

    @Override
    JsonObject writerConfig(Vertx vertx) {
      return config();
    }
  },

  MARIADB("MariaDB") {
    @Override
    JsonObject config() {
      return TestDatabases.mariadb();
    }

    @Override
    void stop() {
      TestDatabases.stopMariaDb();
    }

    @Override
    void startAgain() {
      TestDatabases.startMariaDbAgain();
    }

    @Override
    Future<SqlConnection> connect(Vertx vertx) {
      JsonObject db = config();
      return MySQLConnection.connect(vertx, new MySQLConnectOptions().setHost(db.getString("host"))
          .setPort(db.getInteger("port")).setDatabase(db.getString("name")).setUser(db.getString("user"))
          .setPassword(db.getString("password")))
        .map(c -> c);
    }

    @Override
    Future<Integer> killOtherConnections(SqlConnection killer) {
      return killer.query("SELECT id FROM information_schema.processlist WHERE db = '" + TestDatabases.DATABASE
          + "' AND id <> CONNECTION_ID()").execute()
        .compose(rows -> {
          List<Long> ids = new ArrayList<>();
          rows.forEach(row -> ids.add(row.getLong(0)));
          Future<Integer> chain = Future.succeededFuture(0);
          for (long id : ids) {
            // a connection may be gone by now (1094 unknown thread id): then it was not killed by us
            chain = chain.compose(killed -> killer.query("KILL CONNECTION " + id).execute()
              .map(done -> killed + 1).otherwise(killed));
          }
          return chain;
        });
    }

    @Override
    String mark(int position) {
      return "?";
    }

    @Override
    Future<Void> readOnly(SqlConnection admin, boolean on) {
      // read_only binds every session at once, but only users without READ ONLY ADMIN: see writerConfig
      return admin.query("SET GLOBAL read_only = " + (on ? "ON" : "OFF")).execute().mapEmpty();
    }

    @Override
    JsonObject writerConfig(Vertx vertx) {
      JsonObject root = config();
      String user = "'" + WRITER + "'@'%'";
      await(connect(vertx).compose(conn -> conn.query("CREATE USER IF NOT EXISTS " + user + " IDENTIFIED BY '" + WRITER
          + "'").execute()
        .compose(v -> conn.query("GRANT ALL PRIVILEGES ON " + TestDatabases.DATABASE + ".* TO " + user).execute())
        .eventually(conn::close)));
      return root.copy().put("user", WRITER).put("password", WRITER);
    }
  };

  /** A MariaDB user with rights on the test database only, so that read_only binds it (root has READ ONLY ADMIN). */
  private static final String WRITER = "gateway_writer";

  private static <T> T await(Future<T> future) {
    return Faults.await(future, 30);
  }

  final String label;

  FaultDatabase(String label) {
    this.label = label;
  }

  /** The gateway's {@code database} config section; starts the database if it is not running. */
  abstract JsonObject config();

  /** Stops the database, keeping its data and port. Blocking. */
  abstract void stop();

  /** Starts the database again on the same port with its data; does nothing if it runs. Blocking. */
  abstract void startAgain();

  /** A connection straight to the database. */
  abstract Future<SqlConnection> connect(Vertx vertx);

  /** Kills every connection to the test database except {@code killer}'s own; returns how many it killed. */
  abstract Future<Integer> killOtherConnections(SqlConnection killer);

  abstract String mark(int position);

  /** Turns the database read-only for the gateway's sessions (a failover to a replica), or writable again. */
  abstract Future<Void> readOnly(SqlConnection admin, boolean on);

  /** The gateway's database config section, as a user that {@link #readOnly} binds. Blocking. */
  abstract JsonObject writerConfig(Vertx vertx);

  /** SUM(count) per record_id of one namespace for the ids starting with {@code prefix} (no LIKE wildcards in it). */
  Future<Map<String, Long>> sums(Vertx vertx, String table, String type, String prefix) {
    String query = "SELECT record_id, SUM(count) FROM " + table + " WHERE record_type = " + mark(1)
      + " AND record_id LIKE " + mark(2) + " GROUP BY record_id";
    return connect(vertx).compose(conn -> conn.preparedQuery(query).execute(Tuple.of(type, prefix + "%"))
      .map(rows -> {
        Map<String, Long> sums = new HashMap<>();
        for (Row row : rows) {
          sums.put(row.getString(0), row.getNumeric(1).longValue());
        }
        return sums;
      })
      .eventually(conn::close));
  }
}
