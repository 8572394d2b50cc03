package io.countergateway.internal.store;

import io.vertx.core.Future;

import java.util.function.Supplier;

/** The two statements a flush writer sends; part of {@link CounterStore}. */
public interface FlushStatements {
  /**
   * Writes a flush atomically together with its flush id, under its source's fence (see {@code write/FlushSources}):
   * a repeated id, or a sequence below the fence, writes nothing ({@link WriteOutcome#ALREADY_COMMITTED}). Fails with
   * {@link FlushSourceClosedException} when the source's row is closed or missing. An attempt is bounded by the
   * store's attempt timeout; a timed-out attempt fails (its outcome unknown) and its connection is not used again.
   *
   * <p>{@code beforeSend} is called once a connection is in hand, and the statement leaves the process only after it
   * completed (and only within the attempt's bound). An attempt that failed before the statement left fails with
   * {@link StatementNotSentException}: nothing of it can commit. Any other failure may have committed.
   */
  Future<WriteOutcome> write(Flush flush, Supplier<Future<Void>> beforeSend);

  /** {@link #write(Flush, Supplier)} with nothing to wait for before the statement is sent. */
  default Future<WriteOutcome> write(Flush flush) {
    return write(flush, Future::succeededFuture);
  }

  /**
   * Makes sure the flush's id can never commit, once the database refused a value of the flush (which proves only that
   * this attempt did not commit): a late copy of an earlier attempt that reaches the database afterwards then finds
   * the id and writes nothing. Completes with {@link VoidOutcome#ALREADY_COMMITTED} when such a copy had committed
   * the flush whole before. Fails as {@link #write} does when the source is closed or missing.
   */
  Future<VoidOutcome> voidFlush(Flush flush);
}
