package io.countergateway.internal.write;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.CounterStore;
import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.List;

/**
 * "A write request → its answer", for one ingest verticle: every door (router and hot HTTP routes, the event-bus
 * consumer, and so {@code CounterClient}) submits here, and this class alone decides what the caller is told.
 *
 * <p>The rule, the same through every door:
 * <ul>
 *   <li>{@code ack=accepted}: 202 once the coalescer holds every increment; a refusal (503 full or stopping, 413 a
 *   batch larger than a coalescer) takes none of them.</li>
 *   <li>{@code ack=commit}: 200 once every counter's delta committed. When any part did not: if no part can have
 *   been counted (each one withdrawn, shed, or refused a value by the database) the refusal is answered, the one a
 *   retry would not cure first (422 before 503); if any part committed or may have (a part timed out in flight, an
 *   error nobody foresaw), 504 {@code outcome_unknown} — never "not counted" for a batch part of which is in the
 *   table, so a client that retries on 503 never counts twice.</li>
 *   <li>With an idempotency key the increments are written in one transaction with the key
 *   ({@link IdempotentIncrements}), so that answer is whole by construction: 200/202, a replay of the first answer,
 *   409 in use, 422 reused or refused, 503, 504.</li>
 *   <li>Add-and-get: after a 200, the counter's value read after the commit.</li>
 * </ul>
 * Confined to the verticle's event loop, as the coalescer is.
 */
public final class WritePath {
  private static final Future<WriteAnswer> COMMITTED = Future.succeededFuture(WriteAnswer.COMMITTED);
  private static final Future<WriteAnswer> ACCEPTED = Future.succeededFuture(WriteAnswer.ACCEPTED);

  private final Coalescer coalescer;
  private final IdempotentIncrements keyed;
  private final CommittedValues values;
  private final CounterStore store;
  private final NamespaceTally tally;

  /**
   * {@code store}: the pool the coalescer writes through, closed by {@link #drain()} once everything is written;
   * {@code tally}: the gateway's count of increments taken per namespace.
   */
  public WritePath(Coalescer coalescer, IdempotentIncrements keyed, CommittedValues values, CounterStore store,
                   NamespaceTally tally) {
    this.coalescer = coalescer;
    this.keyed = keyed;
    this.values = values;
    this.store = store;
    this.tally = tally;
  }

  /** Never fails: every outcome, refusals included, is a {@link WriteAnswer}. */
  public Future<WriteAnswer> submit(WriteRequest request) {
    Future<WriteAnswer> answer = request.idempotencyKey() != null ? writeKeyed(request) : take(request);
    return request.returnsValue() ? answer.compose(written -> withValue(written, request)) : answer;
  }

  private Future<WriteAnswer> take(WriteRequest request) {
    boolean commit = request.ack() == AckMode.COMMIT;
    List<Increment> increments = request.increments();
    try {
      if (!commit) {
        // held by the coalescer (and, with a journal, appended to it); answered once the journal's policy allows
        Future<Void> held = increments.size() == 1 ? coalescer.accept(increments.get(0)) : coalescer.acceptAll(increments);
        tallyTaken(increments);
        return held.succeeded() ? ACCEPTED : held.transform(done -> Future.succeededFuture(done.succeeded() ? WriteAnswer.ACCEPTED
          : WriteAnswer.refused(notJournaled())));
      }
      if (increments.size() == 1) {
        // the hot path: no list, no composite
        Ack ack = coalescer.add(increments.get(0), commit);
        tallyTaken(increments);
        return ack == null ? ACCEPTED : ack.future().transform(done -> Future.succeededFuture(
          done.succeeded() ? WriteAnswer.COMMITTED : answerOf(List.of(ack))));
      }
      List<Ack> acks = coalescer.addAll(increments, commit);
      tallyTaken(increments);
      if (acks.isEmpty()) {
        // accepted, or nothing to wait for (every counter's deltas summed to 0)
        return commit ? COMMITTED : ACCEPTED;
      }
      Promise<WriteAnswer> answered = Promise.promise();
      whenAllSettled(acks, () -> answered.complete(answerOf(acks)));
      return answered.future();
    } catch (ApiError refused) {
      // nothing was taken
      return Future.succeededFuture(WriteAnswer.refused(refused));
    }
  }

  /** Taken (not refused): each increment counts once in its namespace's live rate, its delta in the namespace's total. */
  private void tallyTaken(List<Increment> increments) {
    for (int i = 0; i < increments.size(); i++) {
      Increment increment = increments.get(i);
      tally.add(increment.key().type(), 1, increment.delta());
    }
  }

  /**
   * Runs {@code then} once every ack is settled. A count rather than {@code Future.join}: a batch holds up to a
   * thousand counters, and the composite future cost a batch request a twelfth of its time. Acks settle on this
   * event loop (the coalescer's), so the count needs no lock.
   */
  private static void whenAllSettled(List<Ack> acks, Runnable then) {
    int[] unsettled = {acks.size()};
    for (Ack ack : acks) {
      ack.future().onComplete(settled -> {
        if (--unsettled[0] == 0) {
          then.run();
        }
      });
    }
  }

  /** The rule of the class comment, for settled acks (one per counter). */
  static WriteAnswer answerOf(List<Ack> acks) {
    int counted = 0;
    int unknown = 0;
    ApiError notCounted = null;
    for (Ack ack : acks) {
      Throwable failure = ack.future().cause();
      if (ack.future().succeeded()) {
        counted++;
      } else if (failure instanceof ApiError refusal && provenNotCounted(refusal)) {
        // the refusal a retry would not cure tells the client more than a 503 does
        notCounted = notCounted == null || notCounted.status() == 503 && refusal.status() != 503 ? refusal : notCounted;
      } else {
        unknown++;
      }
    }
    if (notCounted == null && unknown == 0) {
      return WriteAnswer.COMMITTED;
    }
    if (counted == 0 && unknown == 0) {
      return WriteAnswer.refused(notCounted);
    }
    if (acks.size() == 1 && acks.get(0).future().cause() instanceof ApiError timedOut && timedOut.status() == 504) {
      return WriteAnswer.refused(timedOut);
    }
    return WriteAnswer.refused(outcomeUnknown());
  }

  /**
   * The refusals that prove nothing of a part was written: withdrawn before its flush, shed or stopping (503), too
   * large for a coalescer (413), or a value the database refused in a statement that failed whole (422, 500
   * {@code write_failed}). Anything else — a 504, an error nobody listed — may have been counted.
   */
  static boolean provenNotCounted(ApiError refusal) {
    return refusal.status() == 503 || refusal.status() == 413 || refusal.status() == 422
      || refusal.status() == 500 && "write_failed".equals(refusal.code());
  }

  /**
   * The journal's write or force that carried the increment failed: it is not answered 202, and not 503 either, for
   * the bytes may still have reached the disk and a replay would then count it; a retry could count it twice.
   */
  static ApiError notJournaled() {
    return new ApiError(504, "outcome_unknown", "the journal failed while writing this increment to disk; it may be "
      + "counted when the gateway restarts and replays its journal, or not at all; accepted increments get 503 "
      + "journal_unavailable until the gateway is restarted", null);
  }

  static ApiError outcomeUnknown() {
    return new ApiError(504, "outcome_unknown", "part of the request may have been counted when it ended; a repeat "
      + "with the same Idempotency-Key is counted once", null);
  }

  private Future<WriteAnswer> writeKeyed(WriteRequest request) {
    boolean commit = request.ack() == AckMode.COMMIT;
    return keyed.submit(request.idempotencyKey(), request.increments(), commit, commit ? 200 : 202, request.answerBody())
      .onSuccess(written -> {
        if (!written.replayed()) {
          tallyTaken(request.increments());
        }
      })
      .transform(done -> Future.succeededFuture(done.succeeded()
        ? new WriteAnswer(done.result().status(), null, done.result().body(), done.result().replayed(), null)
        : WriteAnswer.refused(done.cause() instanceof ApiError refusal ? refusal : outcomeUnknown())));
  }

  private Future<WriteAnswer> withValue(WriteAnswer answer, WriteRequest request) {
    if (answer.status() != 200) {
      return Future.succeededFuture(answer);
    }
    Increment increment = request.increments().get(0);
    return values.valueAfterCommit(increment.key().type(), increment.key().id()).map(answer::withValue);
  }

  /** Counters not written yet: pending, or in a flush formed and not settled. */
  public int countersHeld() {
    return coalescer.countersHeld();
  }

  /**
   * Stops intake and writes everything held, then closes the pools; the part not written by then stays pending. With
   * a journal and a failing database it does not wait (see {@link Coalescer#drain}), nor for keyed requests then.
   */
  public Future<Void> drain() {
    Future<Void> coalesced = coalescer.drain();
    Future<Void> keyedDrained = keyed.drain();
    Promise<Void> drained = Promise.promise();
    Future.join(coalesced, keyedDrained).onComplete(done -> drained.tryComplete());
    coalesced.onComplete(done -> {
      if (coalescer.leftInJournal()) {
        drained.tryComplete();
      }
    });
    return drained.future();
  }

  /** The drain left what was pending to the journal's replay. */
  public boolean leftInJournal() {
    return coalescer.leftInJournal();
  }

  /** The journal's directory was removed under it (see {@code Journal.unreachable()}). */
  public boolean journalUnreachable() {
    return coalescer.journalUnreachable();
  }

  /** After the drain: the flush sources and the journal (see {@link Coalescer#close}), then the pool. */
  public Future<Void> close() {
    return coalescer.close().eventually(store::close);
  }
}
