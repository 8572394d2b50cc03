package io.countergateway.internal.store;

import io.countergateway.config.DatabaseOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.util.List;

/**
 * The writes of requests that carry an idempotency key. Such a request is not coalesced with others: its
 * increments commit in one statement (PostgreSQL) or one transaction (MySQL) with the key's row, which records the
 * request's fingerprint and answer. The key row is to the request what the flush id is to a flush: an attempt that
 * finds it already there writes nothing, so any number of attempts, on any replica, count the request once.
 */
public final class KeyedWrites implements KeyedStatements {
  private static final int DUPLICATE_KEY = 1062;
  /** Rows per MySQL statement; a keyed batch is at most limits.maxBatchIncrements rows. */
  private static final int MYSQL_ROWS_PER_STATEMENT = 1024;

  /** What a key found: written now, or the row an earlier request with the same key left. */
  public record Outcome(boolean written, String fingerprint, int status, String answer) {
    static Outcome writtenNow() {
      return new Outcome(true, null, 0, null);
    }
  }

  /** One keyed request: its increments (sorted, one row per counter) and what a repeat must get. */
  public record Request(String key, String fingerprint, int status, String answer, List<FlushRow> rows) {
  }

  private final BoundedPool pools;
  private final PostgresSql postgres;
  private final MySqlSql mysql;

  /** {@code attemptTimeoutMs} bounds each attempt, as for flushes (see {@link BoundedPool}). */
  public KeyedWrites(Vertx vertx, DatabaseOptions options, int poolSize, long attemptTimeoutMs) {
    this.pools = SqlStores.boundedPool(vertx, options, "idempotency", poolSize, attemptTimeoutMs);
    this.postgres = options.isPostgres() ? new PostgresSql(options.getTable()) : null;
    this.mysql = options.isPostgres() ? null : new MySqlSql(options.getTable());
  }

  @Override
  public Future<Outcome> write(Request request) {
    return (postgres != null ? writePostgres(request) : writeMySql(request))
      .compose(outcome -> outcome.written() ? Future.succeededFuture(outcome) : read(request.key()));
  }

  private Future<Outcome> writePostgres(Request request) {
    Tuple arguments = PostgresSql.rowArrays(request.rows()).addString(request.key()).addString(request.fingerprint())
      .addShort((short) request.status()).addString(request.answer());
    return pools.attempt(pool -> pool.preparedQuery(postgres.upsertKeyed).execute(arguments)
      .map(result -> result.rowCount() == 0 ? new Outcome(false, null, 0, null) : Outcome.writtenNow()));
  }

  /**
   * The key row first: a duplicate key there means the key is taken (by a committed request, or by one whose
   * transaction we waited for), and nothing else is written.
   */
  private Future<Outcome> writeMySql(Request request) {
    // a duplicate key is an answer, not a failure: the transaction commits empty, and the attempt (and its
    // connection pool) stays healthy
    return pools.transaction(conn -> conn.preparedQuery(mysql.insertKey)
      .execute(Tuple.of(request.key(), request.fingerprint(), request.status(), request.answer()))
      .transform(inserted -> inserted.succeeded()
        ? upsertAll(conn, request.rows()).map(Outcome.writtenNow())
        : inserted.cause() instanceof MySQLException e && e.getErrorCode() == DUPLICATE_KEY
          ? Future.succeededFuture(new Outcome(false, null, 0, null))
          : Future.failedFuture(inserted.cause())));
  }

  private Future<Void> upsertAll(SqlConnection conn, List<FlushRow> rows) {
    Future<?> chain = Future.succeededFuture();
    for (int from = 0; from < rows.size(); from += MYSQL_ROWS_PER_STATEMENT) {
      List<FlushRow> chunk = rows.subList(from, Math.min(rows.size(), from + MYSQL_ROWS_PER_STATEMENT));
      Tuple tuple = Tuple.tuple();
      for (FlushRow row : chunk) {
        tuple.addString(row.type()).addString(row.id()).addShort(row.slot()).addLong(row.delta());
      }
      chain = chain.compose(v -> conn.preparedQuery(mysql.upsert(chunk.size())).execute(tuple));
    }
    return chain.mapEmpty();
  }

  private Future<Outcome> read(String key) {
    String readKey = postgres != null ? postgres.readKey : mysql.readKey;
    return pools.attempt(pool -> pool.preparedQuery(readKey).execute(Tuple.of(key))).compose(rows -> {
      if (rows.size() == 0) {
        // expired between the two statements: the caller may simply try again
        return Future.failedFuture(new IllegalStateException("idempotency key row vanished; retry"));
      }
      Row row = rows.iterator().next();
      return Future.succeededFuture(new Outcome(false, row.getString(0), ((Number) row.getValue(1)).intValue(), row.getString(2)));
    });
  }

  /** Deletes keys older than {@code retentionSeconds}, at most {@code limit} per call; answers how many. */
  public static Future<Integer> expire(SqlConnection conn, boolean postgres, String table, int retentionSeconds, int limit) {
    String sql = postgres ? new PostgresSql(table).expireKeys : new MySqlSql(table).expireKeys;
    return conn.preparedQuery(sql).execute(Tuple.of(retentionSeconds, limit)).map(rows -> rows.rowCount());
  }

  @Override
  public Future<Void> close() {
    return pools.close();
  }
}
