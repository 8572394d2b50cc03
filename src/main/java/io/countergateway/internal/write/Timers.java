package io.countergateway.internal.write;

import io.vertx.core.Vertx;

/**
 * The one-shot timers of the flush path (a retry's backoff, the backstop on a store's answer), passed in so that a test
 * moves time instead of waiting for it. An action runs on the event loop that set the timer.
 */
interface Timers {
  /** Runs {@code action} after {@code delayMs}; returns an id for {@link #cancel}. */
  long schedule(long delayMs, Runnable action);

  /** The action of {@code id} does not run, unless it already has. */
  void cancel(long id);

  /** Vert.x timers of the calling context. */
  static Timers of(Vertx vertx) {
    return new Timers() {
      @Override
      public long schedule(long delayMs, Runnable action) {
        return vertx.setTimer(Math.max(1, delayMs), id -> action.run());
      }

      @Override
      public void cancel(long id) {
        vertx.cancelTimer(id);
      }
    };
  }
}
