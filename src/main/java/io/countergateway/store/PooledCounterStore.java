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
import java.util.List;
import java.util.Map;
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
    if (fence != null) {
      fence.close();
    }
    return pools.close();
  }
}
