package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLConnection;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnectOptions;
import io.vertx.sqlclient.SqlConnection;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Where a new connection of {@code database.hosts} goes: to the host that takes writes, as libpq's
 * {@code target_session_attrs=read-write} chooses it. Each time a pool makes a connection, the hosts are asked in turn,
 * the one found writable last time first, on a connection of their own: PostgreSQL {@code pg_is_in_recovery()} false,
 * MySQL / MariaDB {@code @@read_only} and {@code @@innodb_read_only} both 0. A standby is never written to: when no
 * host takes writes (the primary is down and no standby promoted yet) the connection fails, and the write is retried
 * with backoff. After a failover nothing needs a restart: the old primary's connections fail (refused, closed, or
 * read-only errors), {@link BoundedPool} replaces a pool whose attempt failed so, and the new pool's connections find
 * the promoted server here.
 *
 * <p>The check is a second connection per pooled one, made only when a pool opens a connection (pools keep theirs,
 * for {@link #RETARGET_SECONDS} at most).
 * Between the check and the connection it vouches for, a server can only stop taking writes by being demoted, which
 * PostgreSQL does only through a restart (so the connection fails) and MariaDB by {@code read_only}, which fails the
 * write (1290) of every session whose user lacks {@code READ ONLY ADMIN} (or {@code SUPER}); either replaces the pool.
 * A user with that right writes through {@code read_only}, so the start warns of it ({@link #warnIfReadOnlyBypassed}).
 */
public final class PrimaryTarget implements Supplier<Future<SqlConnectOptions>> {
  /**
   * One host's check: a connection and one query. Longer than a connection's timeout, as a busy machine may take
   * seconds to answer; a host that does not answer costs it only until another is found writable, which is asked first.
   */
  static final long CHECK_TIMEOUT_MS = 5_000;
  /**
   * The longest a pooled connection of {@code database.hosts} lives, so that each is targeted again that often: a
   * primary demoted in place is left within it by every pool, not only by one whose write failed. A connection and a
   * check per pooled connection this often is nothing beside the statements it carries.
   */
  static final int RETARGET_SECONDS = 5;
  private static final Logger LOG = LoggerFactory.getLogger(PrimaryTarget.class);
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
    return readOnlyReason(candidate).transform(checked -> {
      if (checked.succeeded() && checked.result().isEmpty()) {
        last = index;
        return Future.succeededFuture(candidate);
      }
      passed.add(candidate.getHost() + ":" + candidate.getPort() + " " + (checked.succeeded()
        ? "is read-only (" + checked.result() + ")"
        : "(" + String.valueOf(checked.cause().getMessage()).replaceAll("\\s+", " ").trim() + ")"));
      return ask(next, asked + 1, passed);
    });
  }

  /**
   * Why the server of {@code candidate} refuses writes, empty when it takes them; asked on a connection closed after.
   * The statement is the dialect's ({@link PostgresSql#READ_ONLY_CHECK}, {@link MySqlSql#READ_ONLY_CHECK}).
   */
  private Future<String> readOnlyReason(SqlConnectOptions candidate) {
    Future<? extends SqlConnection> connecting = postgres ? PgConnection.connect(vertx, (PgConnectOptions) candidate)
      : MySQLConnection.connect(vertx, (MySQLConnectOptions) candidate);
    // a connection made after the deadline is closed too
    return connecting.compose(conn -> conn.query(postgres ? PostgresSql.READ_ONLY_CHECK : MySqlSql.READ_ONLY_CHECK)
        .execute().map(rows -> reasons(rows.iterator().next()))
        .eventually(conn::close))
      .timeout(timeoutMs, TimeUnit.MILLISECONDS);
  }

  /**
   * The columns of the check that say read-only, by name ({@code a standby} for {@code pg_is_in_recovery()}); empty
   * when none does. A column says read-only unless it is false, 0 or OFF, so an answer not understood never sends
   * writes to a server.
   */
  private static String reasons(Row answer) {
    List<String> reasons = new ArrayList<>();
    for (int column = 0; column < answer.size(); column++) {
      if (!takesWrites(answer.getValue(column))) {
        String name = answer.getColumnName(column);
        reasons.add(name.contains("pg_is_in_recovery") ? "a standby" : name.replace("@@global.", "") + " ON");
      }
    }
    return String.join(", ", reasons);
  }

  /** {@code pg_is_in_recovery()} false; {@code @@read_only} 0 (OFF on MariaDB versions that name it). */
  private static boolean takesWrites(Object answer) {
    String text = String.valueOf(answer).trim();
    return text.equals("false") || text.equals("0") || text.equalsIgnoreCase("off");
  }

  /**
   * With {@code database.hosts} on MySQL / MariaDB: a warning when {@code database.user} holds a right that writes
   * through {@code read_only} ({@link MySqlSql#READ_ONLY_BYPASS}), as then a demoted primary would go on taking the
   * writes of connections opened before its demotion, until they are re-targeted ({@link #RETARGET_SECONDS}): writes
   * that a switchover made after the replica caught up would leave behind. A warning, not a refusal: killing the old
   * primary's sessions (or the server) at the switch still moves every write, and a failure of the check only leaves it
   * unsaid.
   */
  static Future<Void> warnIfReadOnlyBypassed(Pool pool, DatabaseOptions options) {
    if (options.isPostgres() || options.getHosts().isEmpty()) {
      return Future.succeededFuture();
    }
    return pool.query(MySqlSql.READ_ONLY_BYPASS).execute().onSuccess(rows -> {
      List<String> rights = new ArrayList<>();
      rows.forEach(row -> rights.add(row.getString(0)));
      if (!rights.isEmpty()) {
        LOG.warn("{} {} holds {}, which writes through read_only: after a switchover that only sets the old "
          + "primary's read_only, the connections opened before it would go on writing there for up to {} s; grant it "
          + "the rights on the gateway's schema only (docs/databases.md \"Failover: following the primary\")",
          DatabaseOptions.USER.name(), options.getUser(), String.join(" and ", rights), RETARGET_SECONDS);
      }
    }).<Void>mapEmpty().otherwiseEmpty();
  }

  /** No host of {@code database.hosts} takes writes now: the database is away, as when a failover is under way. */
  public static final class NoPrimaryException extends RuntimeException {
    NoPrimaryException(String message) {
      super(message, null, false, false);
    }
  }
}
