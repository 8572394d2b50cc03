package io.countergateway.internal.write;

import io.vertx.core.Vertx;

/**
 * The timers of the write path (the coalescer's flush delay, deadline sweep and drain check, a flush's backoff and the
 * backstop on a store's answer, the flush sources' ticks), passed in so that a test moves time instead of waiting for
 * it. An action runs on the event loop that set the timer.
 */
interface Timers {
  /** Runs {@code action} after {@code delayMs}; returns an id for {@link #cancel}. */
  long schedule(long delayMs, Runnable action);

  /** Runs {@code action} every {@code periodMs} until cancelled; returns an id for {@link #cancel}. */
  long periodic(long periodMs, Runnable action);

  /** The action of {@code id} does not run (again), unless it already has. */
  void cancel(long id);

  /** Vert.x timers of the calling context. */
  static Timers of(Vertx vertx) {
    return new Timers() {
      @Override
      public long schedule(long delayMs, Runnable action) {
        return vertx.setTimer(Math.max(1, delayMs), id -> action.run());
      }

      @Override
      public long periodic(long periodMs, Runnable action) {
        return vertx.setPeriodic(Math.max(1, periodMs), id -> action.run());
      }

      @Override
      public void cancel(long id) {
        vertx.cancelTimer(id);
      }
    };
  }
}
