package io.countergateway.internal.store;

import io.countergateway.internal.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
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

  /** A bounded attempt of one statement that leaves the process only once {@code beforeSend} completed. */
  protected <T> Future<T> sent(Supplier<Future<Void>> beforeSend, Function<SqlConnection, Future<T>> statement) {
    return pools.send(beforeSend, statement);
  }

  /** A flush refused by its statement or procedure because its source is closed or has no row ({@code detail}: why). */
  static FlushSourceClosedException sourceClosed(Flush flush, String detail) {
    String source = flush.id().source();
    return new FlushSourceClosedException(source, "flush source " + source + " is closed or has no row; flush "
      + flush.id() + " is not written (" + detail + ")");
  }

  /**
   * A flush statement of a source without a row, or closed as dead, fails: nothing proves it was written, so it is
   * never taken for "already committed". (The flush statement and procedure say so themselves: {@link #sourceClosed}.)
   */
  static void requireOpen(Flush flush, Long fence) {
    String source = flush.id().source();
    if (fence == null) {
      throw new FlushSourceClosedException(source, "flush source " + source + " has no row in the flush-sources table");
    }
    if (fence == FlushSourceRow.CLOSED) {
      throw new FlushSourceClosedException(source, "flush source " + source + " was closed as dead (silent longer than "
        + "batching.flushIdRetention); flush " + flush.id() + " is not written");
    }
  }

  /** The source's fence (null without a row) and, when closed, the ids it holds that are not voided; one transaction. */
  protected Future<FlushSourceRow> sourceRow(String source, String lockSource, String committedIds) {
    return pools.transaction(conn -> conn.preparedQuery(lockSource).execute(Tuple.of(source)).compose(rows -> {
      Long current = rows.size() == 0 ? null : rows.iterator().next().getLong(0);
      if (current == null || current != FlushSourceRow.CLOSED) {
        return Future.succeededFuture(new FlushSourceRow(current, Set.of()));
      }
      return conn.preparedQuery(committedIds).execute(Tuple.of(source)).map(ids -> {
        Set<FlushId> committed = new HashSet<>();
        ids.forEach(row -> committed.add(FlushId.parse(row.getString(0))));
        return new FlushSourceRow(current, committed);
      });
    }));
  }

  /** The source's row, then its ids, in one transaction (see {@link CounterStore#deleteSource}). */
  protected Future<Void> deleteSource(String source, String deleteRow, String deleteIds) {
    return pools.transaction(conn -> conn.preparedQuery(deleteRow).execute(Tuple.of(source))
      .compose(row -> conn.preparedQuery(deleteIds).execute(Tuple.of(source)))
      .mapEmpty());
  }

  /** A row for a new source, fence 0. */
  protected Future<Void> registerSource(String source, String register) {
    return bounded(pool -> pool.preparedQuery(register).execute(Tuple.of(source)).mapEmpty());
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
  public Future<List<Map.Entry<String, BigInteger>>> plainTop(String type, int count) {
    return bounded(pool -> pool.preparedQuery(windows.plainTop()).execute(Tuple.of(type, count))
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

  /** The first column of each row, as text. */
  static List<String> firstColumn(RowSet<Row> rows) {
    List<String> values = new ArrayList<>(rows.size());
    for (Row row : rows) {
      values.add(row.getString(0));
    }
    return values;
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
    return pools.close();
  }
}
