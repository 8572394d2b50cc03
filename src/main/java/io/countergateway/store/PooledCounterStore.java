package io.countergateway.store;

import io.countergateway.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;


import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/** What both dialects do alike, given their own SQL. Writes and reads are bounded attempts ({@link BoundedPool}). */
abstract class PooledCounterStore implements CounterStore {

  private final Vertx vertx;
  protected final BoundedPool pools;
  private final String resetSql;
  private final WindowStatements windows;
  private final String resetUniques;
  /** The settled-flush bookkeeping; null without flush ids ({@code batching.exactlyOnce=false}). */
  protected FlushFence fence;

  PooledCounterStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, String resetSql, WindowStatements windows,
                     String resetUniques) {
    this.vertx = vertx;
    this.pools = new BoundedPool(vertx, pools, attemptTimeoutMs);
    this.resetSql = resetSql;
    this.windows = windows;
    this.resetUniques = resetUniques;
  }

  protected <T> Future<T> bounded(Function<Pool, Future<T>> attempt) {
    return pools.attempt(attempt);
  }

  /** One attempt of a flush under the id it is given (the fence has registered its source), in the dialect's SQL. */
  protected abstract Future<WriteOutcome> writeAs(Flush flush);

  /** Makes the given id (of a registered, open source) one that can never commit, unless it had (see voidFlush). */
  protected abstract Future<VoidOutcome> voidAs(Flush flush);

  @Override
  public Future<WriteOutcome> write(Flush flush) {
    return fence == null ? writeAs(flush) : routed(flush, WriteOutcome.ALREADY_COMMITTED, this::writeAs, true);
  }

  @Override
  public Future<VoidOutcome> voidFlush(Flush flush) {
    // without flush ids nothing can tell a late copy from a first attempt: there is nothing to void
    return fence == null ? Future.succeededFuture(VoidOutcome.VOIDED)
      : routed(flush, VoidOutcome.ALREADY_COMMITTED, this::voidAs, true);
  }

  /**
   * One attempt of {@code work} on the flush as the fence routes it (see {@link FlushFence}): under its own id while its
   * source is open; under a successor's once the source was found closed and the flush is proven never committed under
   * it; not at all once its id shows it had committed. An attempt that finds its source closed resolves the source,
   * then is routed and tried once more.
   */
  private <T> Future<T> routed(Flush formed, T alreadyCommitted, Function<Flush, Future<T>> work, boolean resolveIfClosed) {
    return fence.route(formed).compose(route -> {
      if (route.alreadyCommitted()) {
        return Future.succeededFuture(alreadyCommitted);
      }
      Flush target = route.flush();
      return fence.beforeWrite(target)
        .compose(mayGo -> work.apply(target).onFailure(failure -> {
          // only an answer that fails the statement itself proves nothing of this attempt committed; anything else
          // (a lost connection, a timeout, a session killed around its COMMIT) may have
          if (!(failure instanceof FlushSourceClosedException) && !Failures.isValueRefused(failure)
            && !Failures.isLockConflict(failure)) {
            fence.ambiguous(target);
          }
        }).onSuccess(outcome -> fence.written(target)).onComplete(answered -> fence.attemptEnded(target)))
        .recover(failure -> failure instanceof FlushSourceClosedException closed && resolveIfClosed
          ? fence.resolve(closed.source()).compose(resolved -> routed(formed, alreadyCommitted, work, false))
          : Future.failedFuture(failure));
    });
  }

  /**
   * For a writer that found {@code source} closed: its row's fence (null without a row) and, when closed, the ids it
   * holds that are not voided, read in one transaction with the row held shared.
   */
  protected Future<FlushFence.Closure> closureOf(String source, String lockSource, String committedIds) {
    return pools.transaction(conn -> conn.preparedQuery(lockSource).execute(Tuple.of(source)).compose(rows -> {
      Long current = rows.size() == 0 ? null : rows.iterator().next().getLong(0);
      if (current == null || current != FlushFence.CLOSED) {
        return Future.succeededFuture(new FlushFence.Closure(current, Set.of()));
      }
      return conn.preparedQuery(committedIds).execute(Tuple.of(source)).map(ids -> {
        Set<String> committed = new HashSet<>();
        ids.forEach(row -> committed.add(row.getString(0)));
        return new FlushFence.Closure(current, committed);
      });
    }));
  }

  /** The source's row, then its ids, in one transaction (see {@link FlushFence.Sql#delete}). */
  protected Future<Void> deleteSource(String source, String deleteRow, String deleteIds) {
    return pools.transaction(conn -> conn.preparedQuery(deleteRow).execute(Tuple.of(source))
      .compose(row -> conn.preparedQuery(deleteIds).execute(Tuple.of(source)))
      .mapEmpty());
  }

  /** The void's reading of an id that was there: voided by an earlier void attempt, or committed by a write attempt. */
  static VoidOutcome voidOutcome(String id, RowSet<Row> rows) {
    if (rows.size() == 0) {
      throw new IllegalStateException("flush id " + id + " was there and is gone, though its flush is not settled");
    }
    Object voided = rows.iterator().next().getValue(0);
    // BOOLEAN on PostgreSQL, TINYINT(1) on MySQL/MariaDB
    boolean isVoided = voided instanceof Boolean flag ? flag : ((Number) voided).intValue() != 0;
    return isVoided ? VoidOutcome.VOIDED : VoidOutcome.ALREADY_COMMITTED;
  }

  @Override
  public void keepFlushSourcesAlive(long heartbeatMs) {
    if (fence != null) {
      fence.heartbeatEvery(heartbeatMs);
    }
  }

  /** Rows of {@code (record_id, SUM(count))} as exact values, with 0 for the ids that have no row. */
  static Map<String, BigInteger> sums(List<String> ids, RowSet<Row> rows) {
    Map<String, BigInteger> values = new HashMap<>();
    for (String id : ids) {
      values.put(id, BigInteger.ZERO);
    }
    for (Row row : rows) {
      values.put(row.getString(0), row.getNumeric(1).bigIntegerValue());
    }
    return values;
  }

  @Override
  public Future<List<BucketValue>> windowBuckets(String type, String id, long from, long to) {
    return bounded(pool -> pool.preparedQuery(windows.buckets()).execute(Tuple.of(type, id, from, to))
      .map(PooledCounterStore::bucketValues));
  }

  @Override
  public Future<List<Map.Entry<String, BigInteger>>> windowTop(String type, long from, long to, int count) {
    return bounded(pool -> pool.preparedQuery(windows.top()).execute(Tuple.of(type, from, to, count))
      .map(PooledCounterStore::ranked));
  }

  @Override
  public Future<Integer> expireBuckets(String type, long before, int limit) {
    return bounded(pool -> pool.preparedQuery(windows.expire()).execute(Tuple.of(type, before, limit))
      .map(rows -> rows.rowCount()));
  }

  @Override
  public Future<Long> oldestBucket(String type) {
    return bounded(pool -> pool.preparedQuery(windows.oldest()).execute(Tuple.of(type))
      .map(rows -> rows.iterator().next().getLong(0)));
  }

  /** Rows of {@code (bucket_start, SUM(count))}, oldest first. */
  static List<BucketValue> bucketValues(RowSet<Row> rows) {
    List<BucketValue> buckets = new ArrayList<>(rows.size());
    for (Row row : rows) {
      buckets.add(new BucketValue(row.getLong(0), row.getNumeric(1).bigIntegerValue()));
    }
    return buckets;
  }

  /** Rows of {@code (record_id, SUM(count))} in the order the query ranked them. */
  static List<Map.Entry<String, BigInteger>> ranked(RowSet<Row> rows) {
    List<Map.Entry<String, BigInteger>> ranked = new ArrayList<>(rows.size());
    for (Row row : rows) {
      ranked.add(Map.entry(row.getString(0), row.getNumeric(1).bigIntegerValue()));
    }
    return ranked;
  }

  @Override
  public Future<Void> reset(CounterKey key) {
    // every bucket of a windowed counter as well: a reset leaves nothing of the counter behind
    Pool pool = pools.current();
    return pool.preparedQuery(resetSql).execute(Tuple.of(key.type(), key.id()))
      .compose(plain -> pool.preparedQuery(windows.reset()).execute(Tuple.of(key.type(), key.id())))
      .compose(buckets -> pool.preparedQuery(resetUniques).execute(Tuple.of(key.type(), key.id())))
      .mapEmpty();
  }

  @Override
  public Future<Void> replayedSourcesDone(String liveSource) {
    return fence == null ? Future.succeededFuture() : fence.retireAllBut(liveSource);
  }

  @Override
  public void flushSettled(Flush formed) {
    if (fence != null) {
      fence.settled(formed);
    }
  }

  protected Vertx vertx() {
    return vertx;
  }

  /** This store serves reads: an attempt that times out fails without replacing the pool ({@link BoundedPool#keepOnTimeout}). */
  void keepPoolOnTimeout() {
    pools.keepOnTimeout();
  }

  @Override
  public Future<Void> ping() {
    // bounded: a ping stuck on a silent connection would leave readiness to whoever waits for it
    return bounded(pool -> pool.query("SELECT 1").execute().mapEmpty());
  }

  @Override
  public Future<Void> close() {
    Future<Void> retired = fence == null ? Future.succeededFuture() : fence.retire();
    return retired.otherwiseEmpty().eventually(pools::close);
  }
}
