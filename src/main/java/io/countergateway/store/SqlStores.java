package io.countergateway.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;

import java.util.concurrent.TimeUnit;

/** Builds the store for the configured dialect, with its own small pool bound to the calling verticle. */
public final class SqlStores {
  /** Statements per connection the MySQL client may send before the first answer arrives. */
  static final int MYSQL_PIPELINING_LIMIT = 16;
  static final int CONNECT_TIMEOUT_MS = 2_000;

  private SqlStores() {
  }

  private static NetClientOptions netOptions() {
    return new NetClientOptions().setConnectTimeout(CONNECT_TIMEOUT_MS).setTcpNoDelay(true);
  }

  /** Call from the verticle that will use the store, so its connections live on that verticle's event loop. */
  public static CounterStore create(Vertx vertx, DatabaseOptions options, int poolSize) {
    return create(vertx, options, poolSize, true);
  }

  /** {@code exactlyOnce} false drops the flush-id bookkeeping; only to measure what it costs. */
  public static CounterStore create(Vertx vertx, DatabaseOptions options, int poolSize, boolean exactlyOnce) {
    PoolOptions poolOptions = new PoolOptions()
      .setMaxSize(poolSize)
      // a dead database must not park flushes forever: the coalescer retries with backoff instead
      .setConnectionTimeout(CONNECT_TIMEOUT_MS).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS)
      .setMaxWaitQueueSize(1_000);
    if (options.isPostgres()) {
      PgConnectOptions connect = new PgConnectOptions()
        .setHost(options.getHost()).setPort(options.getPort()).setDatabase(options.getName())
        .setUser(options.getUser()).setPassword(options.getPassword())
        .setCachePreparedStatements(true);
      Pool pool = PgBuilder.pool().with(poolOptions).with(netOptions()).connectingTo(connect).using(vertx).build();
      return new PostgresStore(pool, new PostgresSql(options.getTable(), exactlyOnce), options.getTable());
    }
    MySQLConnectOptions connect = new MySQLConnectOptions()
      .setHost(options.getHost()).setPort(options.getPort()).setDatabase(options.getName())
      .setUser(options.getUser()).setPassword(options.getPassword())
      .setCachePreparedStatements(true)
      .setPipeliningLimit(MYSQL_PIPELINING_LIMIT);
    Pool pool = MySQLBuilder.pool().with(poolOptions).with(netOptions()).connectingTo(connect).using(vertx).build();
    return new MySqlStore(pool, new MySqlSql(options.getTable()), options.getTable(), exactlyOnce);
  }

  /** A small plain pool on the configured database, for background jobs (roll-ups, compaction) that run their own SQL. */
  public static Pool pool(Vertx vertx, DatabaseOptions options, int poolSize) {
    PoolOptions poolOptions = new PoolOptions().setMaxSize(poolSize)
      .setConnectionTimeout(CONNECT_TIMEOUT_MS).setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
    if (options.isPostgres()) {
      return PgBuilder.pool().with(poolOptions).with(netOptions()).connectingTo(new PgConnectOptions()
        .setHost(options.getHost()).setPort(options.getPort()).setDatabase(options.getName())
        .setUser(options.getUser()).setPassword(options.getPassword())
        .setCachePreparedStatements(true)).using(vertx).build();
    }
    return MySQLBuilder.pool().with(poolOptions).with(netOptions()).connectingTo(new MySQLConnectOptions()
      .setHost(options.getHost()).setPort(options.getPort()).setDatabase(options.getName())
      .setUser(options.getUser()).setPassword(options.getPassword())
      .setCachePreparedStatements(true)).using(vertx).build();
  }
}
