package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.SqlConnectOptions;
import io.vertx.sqlclient.SqlConnection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Where a new connection of {@code database.hosts} goes: to the host that takes writes, as libpq's
 * {@code target_session_attrs=read-write} chooses it. Each time a pool makes a connection, the hosts are asked in turn,
 * the one found writable last time first, on a connection of their own: PostgreSQL {@code pg_is_in_recovery()} false,
 * MySQL / MariaDB {@code @@read_only} 0. A standby is never written to: when no host takes writes (the primary is down
 * and no standby promoted yet) the connection fails, and the write is retried with backoff. After a failover nothing
 * needs a restart: the old primary's connections fail (refused, closed, or read-only errors), {@link BoundedPool}
 * replaces a pool whose attempt failed so, and the new pool's connections find the promoted server here.
 *
 * <p>The check is a second connection per pooled one, made only when a pool opens a connection (pools keep theirs).
 * Between the check and the connection it vouches for, a server can only stop taking writes by being demoted, which
 * PostgreSQL does only through a restart (so the connection fails) and MariaDB by {@code read_only}, which fails the
 * write; either replaces the pool.
 */
public final class PrimaryTarget implements Supplier<Future<SqlConnectOptions>> {
  /**
   * One host's check: a connection and one query. Longer than a connection's timeout, as a busy machine may take
   * seconds to answer; a host that does not answer costs it only until another is found writable, which is asked first.
   */
  static final long CHECK_TIMEOUT_MS = 5_000;
  private final Vertx vertx;
  private final boolean postgres;
  private final List<SqlConnectOptions> candidates;
  private final long timeoutMs;
  /** The candidate found writable last, asked first; any thread of the pool's may read and set it. */
  private volatile int last;

  private PrimaryTarget(Vertx vertx, boolean postgres, List<SqlConnectOptions> candidates, long timeoutMs) {
    this.vertx = vertx;
    this.postgres = postgres;
    this.candidates = candidates;
    this.timeoutMs = timeoutMs;
  }

  /** {@code base}: every setting of a connection but the server; one candidate per host of {@code options}. */
  static PrimaryTarget of(Vertx vertx, DatabaseOptions options, SqlConnectOptions base) {
    List<SqlConnectOptions> candidates = new ArrayList<>();
    for (DatabaseOptions.Endpoint endpoint : options.getHosts()) {
      SqlConnectOptions copy = options.isPostgres() ? new PgConnectOptions((PgConnectOptions) base)
        : new MySQLConnectOptions((MySQLConnectOptions) base);
      candidates.add(copy.setHost(endpoint.host()).setPort(endpoint.port()));
    }
    return new PrimaryTarget(vertx, options.isPostgres(), List.copyOf(candidates), CHECK_TIMEOUT_MS);
  }

  /** The connection settings of the host that takes writes now; fails naming each host and why it was passed. */
  @Override
  public Future<SqlConnectOptions> get() {
    return ask(last, 0, new ArrayList<>());
  }

  private Future<SqlConnectOptions> ask(int index, int asked, List<String> passed) {
    if (asked == candidates.size()) {
      return Future.failedFuture(new NoPrimaryException("no host of " + DatabaseOptions.HOSTS.name()
        + " takes writes: " + String.join(", ", passed)));
    }
    SqlConnectOptions candidate = candidates.get(index);
    int next = (index + 1) % candidates.size();
    return writable(candidate).transform(checked -> {
      if (checked.succeeded() && checked.result()) {
        last = index;
        return Future.succeededFuture(candidate);
      }
      passed.add(candidate.getHost() + ":" + candidate.getPort() + " " + (checked.succeeded() ? "is read-only (a standby)"
        : "(" + String.valueOf(checked.cause().getMessage()).replaceAll("\\s+", " ").trim() + ")"));
      return ask(next, asked + 1, passed);
    });
  }

  /** Whether the server of {@code candidate} takes writes, asked on a connection closed after. */
  private Future<Boolean> writable(SqlConnectOptions candidate) {
    Future<? extends SqlConnection> connecting = postgres ? PgConnection.connect(vertx, (PgConnectOptions) candidate)
      : MySQLConnection.connect(vertx, (MySQLConnectOptions) candidate);
    // a connection made after the deadline is closed too
    return connecting.compose(conn -> conn.query(postgres ? "SELECT pg_is_in_recovery()" : "SELECT @@read_only")
        .execute().map(rows -> takesWrites(rows.iterator().next().getValue(0)))
        .eventually(conn::close))
      .timeout(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /** {@code pg_is_in_recovery()} false; {@code @@read_only} 0 (OFF on MariaDB versions that name it). */
  private static boolean takesWrites(Object answer) {
    String text = String.valueOf(answer).trim();
    return text.equals("false") || text.equals("0") || text.equalsIgnoreCase("off");
  }

  /** No host of {@code database.hosts} takes writes now: the database is away, as when a failover is under way. */
  public static final class NoPrimaryException extends RuntimeException {
    NoPrimaryException(String message) {
      super(message, null, false, false);
    }
  }
}
