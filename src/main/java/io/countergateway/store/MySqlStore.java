package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.batch.FlushRow;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.Promise;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * MySQL / MariaDB: a flush is one transaction of multi-row {@code VALUES … ON DUPLICATE KEY UPDATE} statements,
 * pipelined on one connection. The MySQL client has no batch protocol ({@code executeBatch} sends a statement per
 * row), so we build the multi-row statements ourselves, in a few fixed sizes so they stay prepared; a flush is
 * padded up to the next size with {@code +0} rows of its last key, which changes nothing and keeps the lock order.
 */
final class MySqlStore extends PooledCounterStore {
  private static final int DUPLICATE_KEY = 1062;

  private final MySqlSql sql;
  private final String table;
  private final boolean exactlyOnce;

  MySqlStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, MySqlSql sql, String table, boolean exactlyOnce) {
    super(vertx, pools, attemptTimeoutMs, sql.reset, sql.pruneFlushIds);
    this.sql = sql;
    this.table = table;
    this.exactlyOnce = exactlyOnce;
  }

  @Override
  public Future<Void> createSchema() {
    return pool.withConnection(conn -> {
      Future<?> chain = Future.succeededFuture();
      for (String statement : SchemaScript.statements("mysql", table)) {
        chain = chain.compose(done -> conn.query(statement).execute());
      }
      return chain.mapEmpty();
    });
  }

  @Override
  public Future<WriteOutcome> write(Flush flush) {
    if (!exactlyOnce) {
      return inTransaction(conn -> upsertAll(conn, flush.rows())).map(WriteOutcome.COMMITTED);
    }
    // The flush id goes first: a duplicate key here can only be this id (the upserts below cannot raise one), and
    // it means an earlier attempt committed; the transaction then writes nothing and commits empty.
    return inTransaction(conn -> conn.preparedQuery(sql.insertFlushId).execute(Tuple.of(flush.id()))
      .transform(inserted -> inserted.succeeded()
        ? upsertAll(conn, flush.rows()).map(WriteOutcome.COMMITTED)
        : isDuplicateKey(inserted.cause())
          ? Future.succeededFuture(WriteOutcome.ALREADY_COMMITTED)
          : Future.failedFuture(inserted.cause())));
  }

  /**
   * Like {@code pool.withTransaction}, except that a failure of {@code work} settles the write at once instead of
   * after the ROLLBACK: COMMIT was never sent, so nothing was written. Waiting for the ROLLBACK is not only needless but
   * can hang forever: when the connection dies, the MySQL client (5.0.10, {@code MySQLCodec}) fails only the first
   * command in flight and never answers a command written after that, and {@code withTransaction} writes its ROLLBACK
   * from the very callback that reports the failure. The dead connection is evicted from the pool on its own.
   */
  private <T> Future<T> inTransaction(Function<SqlConnection, Future<T>> work) {
    return bounded(pool -> {
      Promise<T> settled = Promise.promise();
      pool.withTransaction(conn -> work.apply(conn).onFailure(settled::tryFail)).onComplete(result -> {
        if (result.succeeded()) {
          settled.tryComplete(result.result());
        } else {
          settled.tryFail(result.cause());
        }
      });
      return settled.future();
    });
  }

  private Future<Void> upsertAll(SqlConnection conn, List<FlushRow> rows) {
    int largest = MySqlSql.UPSERT_SIZES[MySqlSql.UPSERT_SIZES.length - 1];
    List<Future<?>> statements = new ArrayList<>();
    for (int from = 0; from < rows.size(); from += largest) {
      List<FlushRow> chunk = rows.subList(from, Math.min(rows.size(), from + largest));
      int sizeIndex = sizeIndexFor(chunk.size());
      statements.add(conn.preparedQuery(sql.upsertBySize[sizeIndex]).execute(paddedTuple(chunk, MySqlSql.UPSERT_SIZES[sizeIndex])));
    }
    return Future.all(statements).mapEmpty();
  }

  private static int sizeIndexFor(int rows) {
    for (int i = 0; i < MySqlSql.UPSERT_SIZES.length; i++) {
      if (MySqlSql.UPSERT_SIZES[i] >= rows) {
        return i;
      }
    }
    return MySqlSql.UPSERT_SIZES.length - 1;
  }

  private static Tuple paddedTuple(List<FlushRow> chunk, int size) {
    Tuple tuple = Tuple.tuple();
    for (FlushRow row : chunk) {
      tuple.addString(row.type()).addString(row.id()).addShort(row.slot()).addLong(row.delta());
    }
    FlushRow last = chunk.get(chunk.size() - 1);
    for (int i = chunk.size(); i < size; i++) {
      tuple.addString(last.type()).addString(last.id()).addShort(last.slot()).addLong(0L);
    }
    return tuple;
  }

  /**
   * Error 1062 on the flush-id insert. Not recognised by its message: MariaDB names only the key
   * ({@code for key 'PRIMARY'}), MySQL 8 also the table.
   */
  private static boolean isDuplicateKey(Throwable failure) {
    return failure instanceof MySQLException e && e.getErrorCode() == DUPLICATE_KEY;
  }

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    // pad the IN list to a fixed size, so a handful of prepared statements serve every read
    int size = MySqlSql.UPSERT_SIZES[sizeIndexFor(ids.size())];
    if (ids.size() > size) {
      return Future.failedFuture(new IllegalArgumentException("at most " + size + " ids per read"));
    }
    Tuple tuple = Tuple.tuple().addString(type);
    for (int i = 0; i < size; i++) {
      tuple.addString(ids.get(Math.min(i, ids.size() - 1)));
    }
    return bounded(pool -> pool.preparedQuery(sql.sumByIds(size)).execute(tuple).map(rows -> sums(ids, rows)));
  }
}
