package io.countergateway.internal.write;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.vertx.core.Future;

import java.util.List;

/**
 * What the flush writer and the flush sources tell the write-ahead journal about flushes (src/DESIGN.md §4 "Journal"):
 * each record that decides what a replay writes is forced before the step it allows. Without a journal, every record
 * is a no-op that succeeds.
 */
interface FlushLog {
  /**
   * A flush holding journaled increments, recorded and forced before its first attempt, so a replay resolves it by
   * its id instead of taking its increments again; {@code zeroKeys} are journaled counters taken with it whose deltas
   * summed to 0. Fails when the record may not be on disk: the flush is then never attempted.
   */
  Future<Void> formed(Flush flush, List<CounterKey> zeroKeys);

  /**
   * {@code parent}, proven never committed, goes on as {@code children} (its split halves, or itself under a live
   * source): recorded and forced before any child is attempted. A parent the journal never held needs no record.
   */
  Future<Void> replaced(Flush parent, List<Flush> children);

  /**
   * A statement of flush {@code id} is about to leave the process, its connection in hand: completes once the journal
   * no longer says that none of its attempts did (at once unless it said so). Fails when that cannot be recorded:
   * the statement is then not sent.
   */
  Future<Void> beforeSend(FlushId id);

  /** An attempt of flush {@code id} failed before its statement left the process (see {@code Journal#notSent}). */
  void notSent(FlushId id);

  /** The flush formed under {@code formed} (and every flush that replaced it) is answered for good. */
  void settled(FlushId formed);

  /**
   * Completes once everything recorded so far is forced: a flush source's row may be deleted only after every flush
   * of it is durably settled or replaced, or a replay would write one again.
   */
  Future<Void> force();

  /** The journal failed: nothing appended from now on can be kept, so nothing new is recorded. */
  boolean failed();

  /** No journal: nothing to record. */
  FlushLog NONE = new FlushLog() {
    @Override
    public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> replaced(Flush parent, List<Flush> children) {
      return Future.succeededFuture();
    }

    @Override
    public Future<Void> beforeSend(FlushId id) {
      return Future.succeededFuture();
    }

    @Override
    public void notSent(FlushId id) {
    }

    @Override
    public void settled(FlushId formed) {
    }

    @Override
    public Future<Void> force() {
      return Future.succeededFuture();
    }

    @Override
    public boolean failed() {
      return false;
    }
  };
}
