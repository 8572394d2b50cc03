package io.countergateway.internal.store;

import io.countergateway.config.ConfigException;
import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.ClosedConnectionException;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * At start, before any pool: does each PostgreSQL connection of the gateway keep one server session of its own? The
 * gateway needs it: its leader locks are session advisory locks, its statements are prepared once per connection
 * and cached, and its timeouts are session settings. Straight to PostgreSQL or through PgBouncer in session mode it
 * does; through transaction or statement pooling (PgBouncer {@code pool_mode = transaction | statement}) a client
 * connection gets whichever server session is free at each transaction, and a lock taken in one may be released in
 * another (or never).
 *
 * <p>The probe needs no access to the pooler's admin console. Connection A sets a session variable to a random token
 * and notes its server process; then {@link #HOLDERS} other connections at once each open a transaction and read both;
 * while they hold them, A reads both again. With a session per connection the holders never see A's token nor its
 * process, and A sees its own. A pooler that shares server sessions is caught by any of: a holder given A's server
 * session (PgBouncer hands out its most recently used idle server first, so a holder gets it), A moved to another one,
 * or A waiting for a server while the holders keep them all. Statement pooling refuses the holders' transaction.
 */
final class PoolerProbe {
  /** Connections that hold a transaction open while A reads again: more than the idle servers a pool may keep. */
  static final int HOLDERS = 3;
  /** How long a holder, or A's second read, may wait for a server session before the wait itself is the answer. */
  static final long SERVER_WAIT_MS = 3_000;
  private static final String VARIABLE = "counter_gateway_probe.session";
  private static final String READ = "SELECT current_setting('" + VARIABLE + "', true), pg_backend_pid()";

  private PoolerProbe() {
  }

  /** Fails with the one line naming {@code database.pooler} where connections do not keep a session of their own. */
  static Future<Void> check(Vertx vertx, PgSession session) {
    String token = UUID.randomUUID().toString();
    return session.open(vertx).compose(probe -> settingsApplied(probe, session)
      .compose(v -> probe.query("SELECT set_config('" + VARIABLE + "', '" + token + "', false), pg_backend_pid()")
        .execute())
      .compose(rows -> {
        int serverProcess = rows.iterator().next().getInteger(1);
        // the connections may complete on different event loops
        List<SqlConnection> holders = new CopyOnWriteArrayList<>();
        return hold(vertx, session, holders, token, serverProcess)
          .compose(v -> readAgain(probe, token, serverProcess))
          .eventually(() -> Future.join(holders.stream().map(PoolerProbe::release).toList()));
      })
      .eventually(probe::close))
      .recover(failure -> Future.failedFuture(failure instanceof SharedSessions shared
        ? refused(session.options(), shared.getMessage()) : failure));
  }

  /** The start-up parameters (or the SETs) are in force: a pooler may drop them without a word. */
  private static Future<Void> settingsApplied(PgConnection probe, PgSession session) {
    return probe.query("SELECT setting FROM pg_settings WHERE name = 'statement_timeout'").execute().compose(rows -> {
      String found = rows.iterator().next().getString(0);
      if (Long.toString(session.statementTimeoutMs()).equals(found)) {
        return Future.succeededFuture();
      }
      String setting = "statement_timeout is " + found + " ms, not " + session.statementTimeoutMs();
      return Future.failedFuture(session.options().getPooler() == DatabaseOptions.Pooler.NONE
        ? new ConfigException(DatabaseOptions.POOLER.name(), "the session settings sent at start-up did not reach the "
          + "server at " + endpoint(session.options()) + " (" + setting + "): a pooler dropped them (PgBouncer's "
          + "ignore_startup_parameters); set database.pooler: session")
        : new SharedSessions("a session setting did not last to the next statement: " + setting));
    });
  }

  /** Opens the holders at once, each in a transaction, each checked not to share the probe's server session. */
  private static Future<Void> hold(Vertx vertx, PgSession session, List<SqlConnection> holders, String token,
                                   int serverProcess) {
    List<Future<Void>> held = new ArrayList<>();
    for (int i = 0; i < HOLDERS; i++) {
      held.add(holdOne(vertx, session, holders, token, serverProcess));
    }
    // join: every holder is settled (in the list or closed) before they are released
    return Future.join(held).<Void>mapEmpty().recover(failure -> Future.failedFuture(held.stream()
      .filter(Future::failed).map(Future::cause).filter(SharedSessions.class::isInstance).findFirst().orElse(failure)));
  }

  private static Future<Void> holdOne(Vertx vertx, PgSession session, List<SqlConnection> holders, String token,
                                      int serverProcess) {
    Future<PgConnection> opening = session.open(vertx);
    return opening.compose(holder -> {
      holders.add(holder);
      // PgBouncer in statement pooling answers BEGIN with a FATAL error and closes the connection, which the
      // client may report as the close alone
      return holder.query("BEGIN").execute()
        .recover(refused -> Future.failedFuture(refused instanceof ClosedConnectionException
          || String.valueOf(refused.getMessage()).contains("pooling mode")
          ? new SharedSessions("a transaction was refused: " + oneLine(refused.getMessage())) : refused))
        .compose(begun -> holder.query(READ).execute());
    }).timeout(SERVER_WAIT_MS, TimeUnit.MILLISECONDS).recover(failure -> {
      if (!(failure instanceof TimeoutException)) {
        return Future.failedFuture(failure);
      }
      // one that arrives after the time-out is not among the holders, which are released by then
      opening.onSuccess(SqlConnection::close);
      return Future.failedFuture(new ConfigException("database.host / database.port", "a connection to "
        + endpoint(session.options()) + " waited " + SERVER_WAIT_MS + " ms for a server session while the probe's "
        + "other connections held theirs: a pooler whose pool for this database is that small (PgBouncer default_pool_size) "
        + "cannot serve the gateway's pools; enlarge it"));
    }).compose(rows -> {
      Row seen = rows.iterator().next();
      return token.equals(seen.getString(0)) || seen.getInteger(1) == serverProcess
        ? Future.failedFuture(new SharedSessions("another connection was given the server session of the first"))
        : Future.succeededFuture();
    });
  }

  private static Future<Void> readAgain(PgConnection probe, String token, int serverProcess) {
    return probe.query(READ).execute().timeout(SERVER_WAIT_MS, TimeUnit.MILLISECONDS).compose(rows -> {
      Row seen = rows.iterator().next();
      return token.equals(seen.getString(0)) && seen.getInteger(1) == serverProcess ? Future.succeededFuture()
        : Future.failedFuture(new SharedSessions("a connection's next statement ran in another server session"));
    }, failure -> Future.failedFuture(failure instanceof TimeoutException
      ? new SharedSessions("a statement waited " + SERVER_WAIT_MS + " ms for a server session while other connections "
        + "held transactions open") : failure));
  }

  private static Future<Void> release(SqlConnection holder) {
    return holder.query("ROLLBACK").execute().<Void>mapEmpty().eventually(holder::close);
  }

  private static ConfigException refused(DatabaseOptions options, String evidence) {
    return new ConfigException(DatabaseOptions.POOLER.name(), "the database endpoint " + endpoint(options)
      + " shares server sessions between connections (" + evidence + "): transaction or statement pooling, which the "
      + "gateway's session advisory locks, cached prepared statements and session settings do not survive; point "
      + "database.host / database.port at a PgBouncer pool in pool_mode = session and set database.pooler: session, "
      + "or at PostgreSQL itself");
  }

  private static String endpoint(DatabaseOptions options) {
    return options.endpointText();
  }

  private static String oneLine(String text) {
    return Objects.toString(text, "").strip().replaceAll("\\s*\\R\\s*", " ");
  }

  /** Evidence that server sessions are shared, turned into the one line by {@link #check}. */
  private static final class SharedSessions extends RuntimeException {
    SharedSessions(String evidence) {
      super(evidence, null, false, false);
    }
  }
}
