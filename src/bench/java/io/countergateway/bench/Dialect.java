package io.countergateway.bench;

import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;

import java.util.Locale;

/** The two SQL dialects the bench speaks: placeholders, defaults and how to open a (non-blocking) pool. */
public enum Dialect {
  POSTGRES("postgres", 5432, "postgres", "PostgreSQL"),
  MYSQL("mysql", 3306, "root", "MySQL/MariaDB");

  private final String gatewayKind;
  private final int defaultPort;
  private final String defaultUser;
  private final String label;

  Dialect(String gatewayKind, int defaultPort, String defaultUser, String label) {
    this.gatewayKind = gatewayKind;
    this.defaultPort = defaultPort;
    this.defaultUser = defaultUser;
    this.label = label;
  }

  public static Dialect parse(String value) {
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "postgres", "postgresql", "pg" -> POSTGRES;
      case "mysql", "mariadb" -> MYSQL;
      default -> throw new IllegalArgumentException("--db must be postgres or mysql (mariadb), got '" + value + "'");
    };
  }

  public boolean isPostgres() {
    return this == POSTGRES;
  }

  /** The {@code database.kind} the gateway's config uses for this dialect. */
  public String gatewayKind() {
    return gatewayKind;
  }

  public int defaultPort() {
    return defaultPort;
  }

  public String defaultUser() {
    return defaultUser;
  }

  public String label() {
    return label;
  }

  /** The n-th (1-based) bind marker. */
  public String p(int n) {
    return this == POSTGRES ? "$" + n : "?";
  }

  /** A pool of at most {@code size} connections with server-side prepared statements cached per connection. */
  public Pool pool(Vertx vertx, BenchOptions options, int size) {
    PoolOptions pool = new PoolOptions().setMaxSize(size).setMaxWaitQueueSize(-1);
    if (this == POSTGRES) {
      PgConnectOptions connect = new PgConnectOptions().setHost(options.host()).setPort(options.port())
        .setDatabase(options.database()).setUser(options.user()).setPassword(options.password())
        .setCachePreparedStatements(true);
      return PgBuilder.pool().with(pool).connectingTo(connect).using(vertx).build();
    }
    MySQLConnectOptions connect = new MySQLConnectOptions().setHost(options.host()).setPort(options.port())
      .setDatabase(options.database()).setUser(options.user()).setPassword(options.password())
      .setCachePreparedStatements(true);
    return MySQLBuilder.pool().with(pool).connectingTo(connect).using(vertx).build();
  }

  /** A numeric column as a long; SUM gives NUMERIC in PostgreSQL and DECIMAL in MySQL; NULL reads as 0. */
  static long longAt(Row row, int column) {
    Object value = row.getValue(column);
    return value == null ? 0L : ((Number) value).longValue();
  }
}
