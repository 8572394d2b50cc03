package io.countergateway.write;

import io.countergateway.model.CounterKey;
import io.vertx.core.Future;
import io.vertx.core.Promise;

/** A request waiting for the commit of its delta; it knows where its delta is, so a timeout can tell 503 from 504. */
public final class Ack {
  enum State { PENDING, IN_FLIGHT, DONE }

  final CounterKey key;
  final long delta;
  final long deadline;
  final Promise<Void> promise = Promise.promise();
  State state = State.PENDING;

  Ack(CounterKey key, long delta, long deadline) {
    this.key = key;
    this.delta = delta;
    this.deadline = deadline;
  }

  public Future<Void> future() {
    return promise.future();
  }
}
