package io.countergateway.internal.write;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.core.Promise;

/**
 * A request waiting for the commit of its delta. It knows where its delta is, so a timeout can tell 503 from 504:
 * {@code PENDING} (in the coalescer: withdrawn on timeout, not counted), {@code IN_FLIGHT} (in a flush: a timeout
 * answers 504, the flush goes on), {@code DONE}. This is the request's state, not its flush's: the coalescer withdraws
 * it while pending, its {@link FlushJob} takes it in flight and settles it. Confined to the coalescer's event loop.
 */
public final class Ack {
  enum State { PENDING, IN_FLIGHT, DONE }

  final CounterKey key;
  final long delta;
  final long deadline;
  private final Promise<Void> promise = Promise.promise();
  private State state = State.PENDING;

  Ack(CounterKey key, long delta, long deadline) {
    this.key = key;
    this.delta = delta;
    this.deadline = deadline;
  }

  public Future<Void> future() {
    return promise.future();
  }

  State state() {
    return state;
  }

  /** Its delta went into a flush. */
  void inFlight() {
    if (state == State.PENDING) {
      state = State.IN_FLIGHT;
    }
  }

  /** Its delta committed (or had nothing to write). */
  void committed() {
    state = State.DONE;
    promise.tryComplete();
  }

  /** Settled without a commit: withdrawn, refused, or of unknown outcome, as {@code answer} says. */
  void failed(ApiError answer) {
    state = State.DONE;
    promise.tryFail(answer);
  }

  /** The request's time is up while its flush is under way: answered 504 now, settled when the flush is. */
  void timedOutInFlight() {
    promise.tryFail(new ApiError(504, "outcome_unknown",
      "the increment was being written when the request timed out; it may or may not be counted", null));
  }
}
