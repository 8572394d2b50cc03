package io.countergateway.internal.write;

import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.vertx.core.Future;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** A journal of flushes that records each step it is asked for, in order, as "kind id", and fails on cue. */
final class RecordingFlushLog implements FlushLog {
  /** Every record asked for, in order, as "kind id". */
  final List<String> records = new ArrayList<>();
  /** The zero keys each formed flush's record was asked to carry, in order. */
  final List<List<CounterKey>> zeroKeys = new ArrayList<>();
  /** The journal had failed: nothing new is recorded. */
  boolean failed;
  /** A formed flush's record fails. */
  boolean refusesFormed;
  /** A replacement's record fails. */
  boolean refusesReplaced;
  /** The record that a statement of such an id may leave the process fails. */
  Predicate<FlushId> refusesBeforeSend = id -> false;

  @Override
  public Future<Void> formed(Flush flush, List<CounterKey> zeroKeys) {
    records.add("formed " + flush.id());
    this.zeroKeys.add(zeroKeys);
    return refusesFormed ? Future.failedFuture(new IllegalStateException("fsync failed")) : Future.succeededFuture();
  }

  @Override
  public Future<Void> replaced(Flush parent, List<Flush> children) {
    records.add("replaced " + parent.id() + " by " + children.stream().map(child -> child.id().toString()).toList());
    return refusesReplaced ? Future.failedFuture(new IllegalStateException("fsync failed")) : Future.succeededFuture();
  }

  @Override
  public Future<Void> beforeSend(FlushId id) {
    return refusesBeforeSend.test(id) ? Future.failedFuture(new IllegalStateException("fsync failed"))
      : Future.succeededFuture();
  }

  @Override
  public void notSent(FlushId id) {
    records.add("notSent " + id);
  }

  @Override
  public void settled(FlushId formed) {
    records.add("settled " + formed);
  }

  @Override
  public Future<Void> force() {
    return Future.succeededFuture();
  }

  @Override
  public boolean failed() {
    return failed;
  }
}
