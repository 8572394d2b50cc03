package io.countergateway.internal.store;

import io.vertx.core.Future;

/** The statements of requests with an idempotency key (see {@link KeyedWrites}). */
public interface KeyedStatements {
  /** One attempt; a failure leaves the outcome unknown, and the same request may be attempted again. */
  Future<KeyedWrites.Outcome> write(KeyedWrites.Request request);

  Future<Void> close();
}
