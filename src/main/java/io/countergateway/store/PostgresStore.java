package io.countergateway.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;

import java.math.BigInteger;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** PostgreSQL: a flush is ONE {@code UNNEST} upsert statement, whatever its size. */
final class PostgresStore extends PooledCounterStore {
  private final PostgresSql sql;
  private final String table;

  PostgresStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, PostgresSql sql, String table) {
    super(vertx, pools, attemptTimeoutMs, sql.reset, sql.windows, UniqueSketches.statements(true, table).reset());
    this.sql = sql;
    this.table = table;
    if (sql.exactlyOnce) {
      fence = new FlushFence(vertx, new FlushFence.Sql() {
        @Override
        public Future<Void> register(String source) {
          return bounded(pool -> pool.preparedQuery(sql.registerSource).execute(Tuple.of(source)).mapEmpty());
        }

        @Override
        public Future<Void> advance(String source, long newFence, List<String> ids) {
          return bounded(pool -> pool.withTransaction(conn -> conn.preparedQuery(sql.raiseFence)
            .execute(Tuple.of(source, newFence, FlushFence.CLOSED))
            .compose(raised -> conn.preparedQuery(sql.deleteFlushIds).execute(Tuple.of((Object) ids.toArray(String[]::new))))
            .mapEmpty()));
        }
      });
    }
  }

  @Override
  public Future<Void> createSchema() {
    return new SchemaUpgrade(true, table).upgrade(pools.current());
  }

  @Override
  public Future<Void> checkSchema() {
    return new SchemaUpgrade(true, table).check(pools.current());
  }

  @Override
  public Future<Integer> pruneFlushIds(int olderThanSeconds) {
    return pools.current().preparedQuery(sql.pruneFlushIds).execute(Tuple.of(olderThanSeconds, FlushFence.CLOSED))
      .map(rows -> rows.iterator().next().getLong(0).intValue());
  }

  @Override
  public Future<WriteOutcome> write(Flush flush) {
    if (flush.rows().stream().anyMatch(FlushRow::windowed)) {
      return writeWindowed(flush);
    }
    Tuple arguments = PostgresSql.rowArrays(flush.rows());
    if (!sql.exactlyOnce) {
      return bounded(pool -> pool.preparedQuery(sql.upsertFlush).execute(arguments).map(WriteOutcome.COMMITTED));
    }
    arguments.addString(flush.id()).addString(FlushId.source(flush.id())).addLong(FlushId.sequence(flush.id()));
    return fence.beforeWrite(flush)
      .compose(registered -> bounded(pool -> pool.preparedQuery(sql.upsertFlush).execute(arguments)
        .map(result -> result.rowCount() == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED)))
      .onSuccess(outcome -> fence.written(flush));
  }

  /** The same one statement and flush id, over both tables; its answer row says whether the flush id was new. */
  private Future<WriteOutcome> writeWindowed(Flush flush) {
    Tuple arguments = PostgresSql.plainAndWindowedArrays(flush.rows());
    if (!sql.exactlyOnce) {
      return bounded(pool -> pool.preparedQuery(sql.upsertWindowedFlush).execute(arguments).map(WriteOutcome.COMMITTED));
    }
    arguments.addString(flush.id()).addString(FlushId.source(flush.id())).addLong(FlushId.sequence(flush.id()));
    return fence.beforeWrite(flush)
      .compose(registered -> bounded(pool -> pool.preparedQuery(sql.upsertWindowedFlush).execute(arguments)
        .map(result -> result.iterator().next().getLong(0) == 0 ? WriteOutcome.ALREADY_COMMITTED : WriteOutcome.COMMITTED)))
      .onSuccess(outcome -> fence.written(flush));
  }

  @Override
  public Future<Map<String, BigInteger>> windowTotals(String type, List<String> ids, long from, long to) {
    return bounded(pool -> pool.preparedQuery(sql.windowTotals)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)).addLong(from).addLong(to))
      .map(rows -> sums(ids, rows)));
  }

  @Override
  public Future<Map<String, BigInteger>> sum(String type, List<String> ids) {
    return bounded(pool -> pool.preparedQuery(sql.sumByIds)
      .execute(Tuple.tuple().addString(type).addArrayOfString(ids.toArray(String[]::new)))
      .map(rows -> sums(ids, rows)));
  }
}
