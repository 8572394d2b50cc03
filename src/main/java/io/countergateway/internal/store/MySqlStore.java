package io.countergateway.internal.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * MySQL / MariaDB: a flush is one call of the schema's {@code <table>_write_flush} procedure (schema step 009), which
 * checks the source's fence, inserts the flush id and upserts the rows in one transaction: one round trip, as
 * PostgreSQL's one statement. The rows go as JSON arrays in the flush's order (its lock order). Reads pad their id
 * lists to a few fixed sizes, so a handful of prepared statements serve every read.
 */
final class MySqlStore extends PooledCounterStore {
  private static final int DUPLICATE_KEY = 1062;

  private final MySqlSql sql;
  private final String table;

  MySqlStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, MySqlSql sql, String table) {
    super(vertx, pools, attemptTimeoutMs, sql.reset, sql.windows, UniqueSketches.statements(false, table).reset());
    this.sql = sql;
    this.table = table;
  }

  @Override
  public Future<Void> registerSource(String source) {
    return registerSource(source, sql.registerSource);
  }

  @Override
  public Future<Boolean> raiseFence(String source, long fence) {
    return bounded(pool -> pool.preparedQuery(sql.raiseFence).execute(Tuple.of(fence, source, FlushSourceRow.CLOSED))
      .map(raised -> raised.rowCount() > 0));
  }

  /** In chunks, each its own statement and transaction: a few row locks held briefly. */
  @Override
  public Future<Void> deleteSettledIds(List<String> ids) {
    return bounded(pool -> {
      int largest = MySqlSql.UPSERT_SIZES[MySqlSql.UPSERT_SIZES.length - 1];
      Future<?> chain = Future.succeededFuture();
      for (int from = 0; from < ids.size(); from += largest) {
        List<String> chunk = ids.subList(from, Math.min(ids.size(), from + largest));
        chain = chain.compose(v -> pool.preparedQuery(sql.deleteFlushIds(chunk.size()))
          .execute(Tuple.wrap(new ArrayList<Object>(chunk))));
      }
      return chain.mapEmpty();
    });
  }

  @Override
  public Future<FlushSourceRow> sourceRow(String source) {
    return sourceRow(source, sql.lockSource, sql.committedIdsOfSource);
  }

  @Override
  public Future<Void> deleteSource(String source) {
    return deleteSource(source, sql.deleteSource, sql.deleteIdsOfSource);
  }

  @Override
  public Future<Void> createSchema() {
    return new SchemaUpgrade(false, table).upgrade(pools.current());
  }

  @Override
  public Future<Void> checkSchema() {
    return new SchemaUpgrade(false, table).check(pools.current());
  }

  @Override
  public Future<WriteOutcome> write(Flush flush, Supplier<Future<Void>> beforeSend) {
    Tuple arguments = Tuple.of(flush.id().toString(), flush.id().source(), flush.id().sequence(),
      MySqlSql.plainRows(flush.rows()), MySqlSql.windowRows(flush.rows()));
    return sent(beforeSend, conn -> conn.preparedQuery(sql.writeFlush).execute(arguments).map(WriteOutcome.COMMITTED)
      .recover(failure -> outcomeOf(flush, failure)));
  }

  /**
   * The procedure's outcomes other than committed: the id already there (1062: an earlier attempt committed), the flush
   * behind its source's fence (a late copy of a flush settled long ago), the source closed or gone. Any other failure
   * as it is.
   */
  private static Future<WriteOutcome> outcomeOf(Flush flush, Throwable failure) {
    if (isDuplicateKey(failure) || signalled(failure, MySqlSql.BEHIND_FENCE)) {
      return Future.succeededFuture(WriteOutcome.ALREADY_COMMITTED);
    }
    if (signalled(failure, MySqlSql.SOURCE_MISSING_OR_CLOSED)) {
      return Future.failedFuture(sourceClosed(flush, failure.getMessage()));
    }
    return Future.failedFuture(failure);
  }

  /** A {@code SIGNAL SQLSTATE '45000'} of the flush procedure with {@code message}. */
  private static boolean signalled(Throwable failure, String message) {
    return failure instanceof MySQLException e && "45000".equals(e.getSqlState()) && e.getMessage() != null
      && e.getMessage().contains(message);
  }

  /**
   * In one transaction: the source's row shared and open, then the id inserted as voided; a duplicate key means it was
   * there: voided by an earlier void attempt of ours, or committed by a late copy of an earlier write attempt.
   */
  @Override
  public Future<VoidOutcome> voidFlush(Flush flush) {
    String id = flush.id().toString();
    return inTransaction(conn -> conn.preparedQuery(sql.lockSource).execute(Tuple.of(flush.id().source()))
      .compose(source -> {
        requireOpen(flush, source.size() == 0 ? null : source.iterator().next().getLong(0));
        return conn.preparedQuery(sql.insertVoidedId).execute(Tuple.of(id))
          .transform(inserted -> inserted.succeeded() ? Future.succeededFuture(VoidOutcome.VOIDED)
            : isDuplicateKey(inserted.cause())
              ? conn.preparedQuery(sql.readVoided).execute(Tuple.of(id)).map(rows -> voidOutcome(id, rows))
              : Future.failedFuture(inserted.cause()));
      }));
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return inTransaction(conn -> conn.preparedQuery(sql.closeDeadSources)
      .execute(Tuple.of(FlushSourceRow.CLOSED, olderThanSeconds, FlushSourceRow.CLOSED))
      .compose(closed -> conn.preparedQuery(sql.deleteIdsOfGoneSources).execute(Tuple.of(FlushSourceRow.CLOSED, olderThanSeconds)))
      .compose(dead -> conn.preparedQuery(sql.deleteGoneSources).execute(Tuple.of(FlushSourceRow.CLOSED, olderThanSeconds))
        .compose(gone -> conn.preparedQuery(sql.pruneFlushIds).execute(Tuple.of(olderThanSeconds)))
        .map(legacy -> dead.rowCount() + legacy.rowCount())));
  }

  /** One bounded transaction that settles at once on failure (see {@link BoundedPool#transaction}). */
  private <T> Future<T> inTransaction(Function<SqlConnection, Future<T>> work) {
    return pools.transaction(work);
  }

  private static int sizeIndexFor(int rows) {
    for (int i = 0; i < MySqlSql.UPSERT_SIZES.length; i++) {
      if (MySqlSql.UPSERT_SIZES[i] >= rows) {
        return i;
      }
    }
    return MySqlSql.UPSERT_SIZES.length - 1;
  }

  /**
   * Error 1062 on a flush-id insert. Not recognised by its message: MariaDB names only the key
   * ({@code for key 'PRIMARY'}), MySQL 8 also the table.
   */
  private static boolean isDuplicateKey(Throwable failure) {
    return failure instanceof MySQLException e && e.getErrorCode() == DUPLICATE_KEY;
  }

  @Override
  public Future<List<String>> distinctIds(String type, String after, int limit) {
    return bounded(pool -> pool.preparedQuery(("SELECT DISTINCT record_id FROM %s WHERE record_type = ? AND record_id > ? "
        + "ORDER BY record_id LIMIT ?").formatted(table)).execute(Tuple.of(type, after == null ? "" : after, limit))
      .map(PooledCounterStore::firstColumn));
  }

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    return paddedIdsRead(ids, size -> sql.sumByIds(size), Tuple.tuple().addString(type), Tuple.tuple());
  }

  @Override
  public Future<Map<String, BigInteger>> windowTotals(String type, List<String> ids, long from, long to) {
    return paddedIdsRead(ids, size -> sql.windowTotals(size), Tuple.tuple().addString(type), Tuple.of(from, to));
  }

  /** Pads the IN list to a fixed size, so a handful of prepared statements serve every read. */
  private Future<Map<String, BigInteger>> paddedIdsRead(List<String> ids, IntFunction<String> statement, Tuple before,
                                                        Tuple after) {
    int size = MySqlSql.UPSERT_SIZES[sizeIndexFor(ids.size())];
    if (ids.size() > size) {
      return Future.failedFuture(new IllegalArgumentException("at most " + size + " ids per read"));
    }
    Tuple tuple = before;
    for (int i = 0; i < size; i++) {
      tuple.addString(ids.get(Math.min(i, ids.size() - 1)));
    }
    for (int i = 0; i < after.size(); i++) {
      tuple.addValue(after.getValue(i));
    }
    return bounded(pool -> pool.preparedQuery(statement.apply(size)).execute(tuple).map(rows -> sums(ids, rows)));
  }
}
