package io.countergateway.internal.store;

import io.countergateway.internal.time.Timers;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A pool whose writes and reads are bounded attempts. A database that stops answering on an open connection (a
 * partition, a dead host that never closes its sockets) would otherwise keep that connection busy for good, and every
 * later attempt would wait for the pool behind it. The pool offers no way to evict one leased connection, so an
 * attempt that times out or fails in a way that may leave its connection stuck or stale replaces the whole pool:
 * closing the old pool closes all of its connections, and the next attempt connects afresh. Safe for writes because
 * what they write carries an id (a flush id, an idempotency key) that makes a retry count nothing twice.
 * Confined to the event loop of the verticle that uses it.
 */
final class BoundedPool {
  private static final Logger LOG = LoggerFactory.getLogger(BoundedPool.class);
  static final int CLOSE_TIMEOUT_SECONDS = 5;

  private final Vertx vertx;
  private final Timers timers;
  private final Supplier<Pool> pools;
  private final long attemptTimeoutMs;
  private Pool pool;
  /** Reads: a slow query is a failed read, not a stuck connection (see {@link #keepOnTimeout}). */
  private boolean keepOnTimeout;

  BoundedPool(Vertx vertx, Supplier<Pool> pools, long attemptTimeoutMs) {
    this(vertx, Timers.of(vertx), pools, attemptTimeoutMs);
  }

  /** {@code timers}: the attempt timeout's and the close's. */
  BoundedPool(Vertx vertx, Timers timers, Supplier<Pool> pools, long attemptTimeoutMs) {
    this.vertx = vertx;
    this.timers = timers;
    this.pools = pools;
    this.attemptTimeoutMs = attemptTimeoutMs;
    this.pool = pools.get();
  }

  /**
   * For a pool of reads: an attempt that times out (or that the server cancels at its statement timeout) fails, and
   * the pool is kept. A heavy read on a healthy database is slow, not stuck; replacing the pool would close the
   * connections of every other read in flight ("Pool closed"), turning one slow top-N read into an outage of all
   * reads. A connection that is really lost still fails with a connection error, which replaces the pool.
   */
  void keepOnTimeout() {
    keepOnTimeout = true;
  }

  /** The pool of the moment, for work that is not an attempt (schema, jobs, close). */
  Pool current() {
    return pool;
  }

  /**
   * Runs one attempt on the current pool, failing it after the attempt timeout. A timeout, or a failure that is
   * neither a refused value nor a lock conflict (a lost connection, a server turned read-only by a failover, an
   * unknown error), replaces the pool, so no retry runs on a connection that is stuck or bound to the wrong server.
   */
  <T> Future<T> attempt(Function<Pool, Future<T>> work) {
    // The answer is handed back on the caller's event loop whatever thread fails the attempt: a pool closed under an
    // attempt fails it from the thread that closes the socket, and a future without a context would even run its
    // timeout on a global Netty thread. The coalescer and the reader are confined to their loop.
    Context caller = vertx.getOrCreateContext();
    Thread callerThread = Thread.currentThread();
    Pool used = pool;
    Promise<T> answer = Promise.promise();
    long timer = timers.schedule(attemptTimeoutMs, () -> fail(answer, used,
      new TimeoutException("no answer from the database within " + attemptTimeoutMs + " ms")));
    work.apply(used).onComplete(result -> {
      Runnable settle = () -> {
        timers.cancel(timer);
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

  private static final int WAITING = 0;
  private static final int SENDING = 1;
  private static final int OVER = 2;

  /**
   * One attempt of one statement on a connection of its own: {@code beforeSend} runs on the caller's event loop once
   * the connection is in hand, and {@code statement} is sent only after it completed and while the attempt is not over.
   * The attempt fails with {@link StatementNotSentException} when it ended (failed, timed out) before the statement
   * was sent, which proves the statement never reached the database; a connection that comes later sends nothing.
   */
  <T> Future<T> send(Supplier<Future<Void>> beforeSend, Function<SqlConnection, Future<T>> statement) {
    Context caller = vertx.getOrCreateContext();
    Thread callerThread = Thread.currentThread();
    AtomicInteger stage = new AtomicInteger(WAITING);
    return this.<T>attempt(current -> current.withConnection(conn -> {
      Promise<Void> mayGo = Promise.promise();
      if (Thread.currentThread() == callerThread) {
        beforeSend.get().onComplete(mayGo);
      } else {
        caller.runOnContext(v -> beforeSend.get().onComplete(mayGo));
      }
      return mayGo.future().compose(v -> stage.compareAndSet(WAITING, SENDING) ? statement.apply(conn)
        : Future.failedFuture(new IllegalStateException("the attempt ended before its statement was sent")));
    })).recover(failure -> Future.failedFuture(stage.compareAndSet(WAITING, OVER)
      ? new StatementNotSentException(failure) : failure));
  }

  /**
   * One attempt as a transaction, like {@code pool.withTransaction}, except that a failure of {@code work} settles the
   * attempt at once instead of after the ROLLBACK: COMMIT was never sent, so nothing was written. Waiting for the
   * ROLLBACK is not only needless but can hang forever: when the connection dies, the MySQL client (5.0.10,
   * {@code MySQLCodec}) fails only the first command in flight and never answers a command written after that, and
   * {@code withTransaction} writes its ROLLBACK from the very callback that reports the failure.
   */
  <T> Future<T> transaction(Function<SqlConnection, Future<T>> work) {
    return attempt(current -> {
      Promise<T> settled = Promise.promise();
      current.withTransaction(conn -> work.apply(conn).onFailure(settled::tryFail)).onComplete(result -> {
        if (result.succeeded()) {
          settled.tryComplete(result.result());
        } else {
          settled.tryFail(result.cause());
        }
      });
      return settled.future();
    });
  }

  private <T> void fail(Promise<T> answer, Pool used, Throwable cause) {
    // on the caller's loop, like the timer: nothing settles the answer between this check and tryFail
    if (answer.future().isComplete()) {
      return;
    }
    if (keepOnTimeout && (cause instanceof TimeoutException || Failures.isStatementTimeout(cause))) {
      answer.tryFail(cause);
      return;
    }
    // the pool is replaced before the failure is told, and closed after: whoever reacts to it at once (a resolution
    // of a closed flush source, a retry) must not be handed the pool being closed
    boolean replace = !Failures.isValueRefused(cause) && !Failures.isLockConflict(cause) && pool == used;
    if (replace) {
      LOG.debug("replacing the connection pool after {}", cause.toString());
      pool = pools.get();
    }
    answer.tryFail(cause);
    if (replace) {
      used.close();
    }
  }

  /**
   * Closes the pool, waiting at most {@link #CLOSE_TIMEOUT_SECONDS}. vertx-sql-client 5.0.10 fails a request that
   * timed out waiting for a connection of a closing pool with a NullPointerException on its cancel path, and such a
   * pool never finishes closing; a stop waiting for it would never end, with everything flushed. Whoever closes a
   * store has nothing left in it, so giving up on the close loses nothing; the connections go with the process.
   */
  Future<Void> close() {
    Promise<Void> closed = Promise.promise();
    long timer = timers.schedule(TimeUnit.SECONDS.toMillis(CLOSE_TIMEOUT_SECONDS), () -> {
      if (closed.tryComplete()) {
        LOG.warn("a connection pool did not close within {} s; going on without it", CLOSE_TIMEOUT_SECONDS);
      }
    });
    pool.close().onComplete(done -> {
      timers.cancel(timer);
      closed.tryComplete();
    });
    return closed.future();
  }
}
