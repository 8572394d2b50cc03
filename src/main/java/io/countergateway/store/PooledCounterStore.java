package io.countergateway.store;

import io.countergateway.batch.Flush;
import io.countergateway.model.CounterKey;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What both dialects do alike, given their own SQL.
 *
 * <p>Writes and reads are bounded attempts ({@link #bounded}): a database that stops answering on an open connection
 * (a partition, a dead host that never closes its sockets) would otherwise keep that connection busy for good, and
 * every later attempt would wait for the pool behind it. The pool offers no way to evict one leased connection, so an
 * attempt that times out or fails in a way that may leave its connection stuck or stale replaces the whole pool:
 * closing the old pool closes all of its connections, and the next attempt connects afresh. Safe for writes because a
 * flush retried under its id never counts twice.
 */
abstract class PooledCounterStore implements CounterStore {
  private static final Logger LOG = LoggerFactory.getLogger(PooledCounterStore.class);

  private final Vertx vertx;
  private final Supplier<Pool> pools;
  private final long attemptTimeoutMs;
  protected Pool pool;
  private final String resetSql;
  private final WindowStatements windows;
  /** The settled-flush bookkeeping; null without flush ids ({@code batching.exactlyOnce=false}). */
  protected FlushFence fence;

  PooledCounterStore(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs, String resetSql, WindowStatements windows) {
    this.vertx = vertx;
    this.pools = pools;
    this.attemptTimeoutMs = attemptTimeoutMs;
    this.pool = pools.get();
    this.resetSql = resetSql;
    this.windows = windows;
  }

  /**
   * Runs one attempt on the current pool, failing it after the attempt timeout. A timeout, or a failure that is
   * neither a refused value nor a lock conflict (a lost connection, a server turned read-only by a failover, an
   * unknown error), replaces the pool, so no retry runs on a connection that is stuck or bound to the wrong server.
   */
  protected <T> Future<T> bounded(Function<Pool, Future<T>> attempt) {
    // The answer is handed back on the caller's event loop whatever thread fails the attempt: a pool closed under an
    // attempt fails it from the thread that closes the socket, and a future without a context would even run its
    // timeout on a global Netty thread. The coalescer and the reader are confined to their loop.
    Context caller = vertx.getOrCreateContext();
    Thread callerThread = Thread.currentThread();
    Pool used = pool;
    Promise<T> answer = Promise.promise();
    long timer = vertx.setTimer(attemptTimeoutMs, id -> fail(answer, used,
      new TimeoutException("no answer from the database within " + attemptTimeoutMs + " ms")));
    attempt.apply(used).onComplete(result -> {
      Runnable settle = () -> {
        vertx.cancelTimer(timer);
        if (result.succeeded()) {
          answer.tryComplete(result.result());
        } else {
          fail(answer, used, result.cause());
        }
      };
      if (Thread.currentThread() == callerThread) {
        settle.run();
      } else {
        caller.runOnContext(v -> settle.run());
      }
    });
    return answer.future();
  }

  private <T> void fail(Promise<T> answer, Pool used, Throwable cause) {
    if (!answer.tryFail(cause)) {
      return;
    }
    if (!Failures.isValueRefused(cause) && !Failures.isLockConflict(cause) && pool == used) {
      LOG.debug("replacing the connection pool after {}", cause.toString());
      pool = pools.get();
      used.close();
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
    return pool.preparedQuery(resetSql).execute(Tuple.of(key.type(), key.id()))
      .compose(plain -> pool.preparedQuery(windows.reset()).execute(Tuple.of(key.type(), key.id())))
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
    return pool.close();
  }
}
