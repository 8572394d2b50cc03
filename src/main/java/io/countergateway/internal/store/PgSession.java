package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.ClientBuilder;
import io.vertx.sqlclient.Pool;

import java.util.List;

/**
 * The session settings of a PostgreSQL connection and how they reach the server. Straight to PostgreSQL they are
 * start-up parameters, in force before the first statement. PgBouncer refuses a start-up parameter it does not track
 * ("unsupported startup parameter", or drops it silently when listed in {@code ignore_startup_parameters}), so with
 * {@code database.pooler: session} they are sent as {@code SET} once connected: in session pooling the client keeps
 * its server session, and with it the settings, until it disconnects (PgBouncer then runs {@code DISCARD ALL}).
 */
final class PgSession {
  private final DatabaseOptions options;
  private final long statementTimeoutMs;
  private final long lockTimeoutMs;

  PgSession(DatabaseOptions options, long statementTimeoutMs, long lockTimeoutMs) {
    this.options = options;
    this.statementTimeoutMs = statementTimeoutMs;
    this.lockTimeoutMs = lockTimeoutMs;
  }

  DatabaseOptions options() {
    return options;
  }

  long statementTimeoutMs() {
    return statementTimeoutMs;
  }

  private boolean behindPooler() {
    return options.getPooler() != DatabaseOptions.Pooler.NONE;
  }

  /** The server, credentials and TLS, with the settings as start-up parameters where they go there. */
  PgConnectOptions connect() {
    PgConnectOptions connect = SqlStores.pgConnect(options);
    if (behindPooler()) {
      // PgBouncer's own tcp_keepalive watches its server connections; the gateway's side is kept alive by ours
      return connect;
    }
    if (options.getSynchronousCommit() != null) {
      connect.addProperty("synchronous_commit", options.getSynchronousCommit());
    }
    return connect
      .addProperty("statement_timeout", Long.toString(statementTimeoutMs))
      .addProperty("lock_timeout", Long.toString(lockTimeoutMs))
      // the server notices a vanished gateway by keepalive
      .addProperty("tcp_keepalives_idle", "30")
      .addProperty("tcp_keepalives_interval", "10")
      .addProperty("tcp_keepalives_count", "3");
  }

  private String setStatement() {
    return "SET statement_timeout = " + statementTimeoutMs + "; SET lock_timeout = " + lockTimeoutMs
      + (options.getSynchronousCommit() == null ? "" : "; SET synchronous_commit = " + options.getSynchronousCommit());
  }

  /** A pool builder whose every new connection carries the settings. */
  ClientBuilder<Pool> apply(ClientBuilder<Pool> builder) {
    if (!behindPooler()) {
      return builder;
    }
    return SqlStores.settingEachSession(builder, List.of(setStatement()));
  }

  /** One connection outside any pool, with the settings in force. */
  Future<PgConnection> open(Vertx vertx) {
    Future<PgConnection> connecting = SqlStores.target(vertx, options, connect())
      .compose(connect -> PgConnection.connect(vertx, (PgConnectOptions) connect));
    if (!behindPooler()) {
      return connecting;
    }
    return connecting.compose(conn -> conn.query(setStatement()).execute().<PgConnection>map(conn)
      .onFailure(failed -> conn.close()));
  }
}
