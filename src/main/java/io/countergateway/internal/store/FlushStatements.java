package io.countergateway.internal.store;

import io.vertx.core.Future;

/** The two statements a flush writer sends; part of {@link CounterStore}. */
public interface FlushStatements {
  /**
   * Writes a flush atomically together with its flush id, under its source's fence (see {@code write/FlushSources}):
   * a repeated id, or a sequence below the fence, writes nothing ({@link WriteOutcome#ALREADY_COMMITTED}). Fails with
   * {@link FlushSourceClosedException} when the source's row is closed or missing. An attempt is bounded by the
   * store's attempt timeout; a timed-out attempt fails (its outcome unknown) and its connection is not used again.
   */
  Future<WriteOutcome> write(Flush flush);

  /**
   * Makes sure the flush's id can never commit, once the database refused a value of the flush (which proves only that
   * this attempt did not commit): a late copy of an earlier attempt that reaches the database afterwards then finds
   * the id and writes nothing. Completes with {@link VoidOutcome#ALREADY_COMMITTED} when such a copy had committed
   * the flush whole before. Fails as {@link #write} does when the source is closed or missing.
   */
  Future<VoidOutcome> voidFlush(Flush flush);
}
