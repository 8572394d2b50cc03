package io.countergateway.internal.time;

import io.vertx.core.Vertx;

/**
 * The timers and clocks of a component that waits for time (the journal's group fsync and release, the store's
 * attempt timeouts, the rollup's and the retention's rounds), passed in so that a test moves time instead of waiting
 * for it: {@link #of(Vertx)} in the gateway, a virtual implementation in tests. An action runs on the event loop (the
 * Vert.x context) that set its timer, as Vert.x timers do.
 */
public interface Timers {
  /** Runs {@code action} once after {@code delayMs} (at least 1 ms); returns an id for {@link #cancel}. */
  long schedule(long delayMs, Runnable action);

  /** Runs {@code action} every {@code periodMs} (at least 1 ms), the first time after one period; an id for {@link #cancel}. */
  long periodic(long periodMs, Runnable action);

  /** The action of {@code id} does not run again, unless it is running; an unknown or negative id is ignored. */
  void cancel(long id);

  /** Nanoseconds for measuring elapsed time, as {@link System#nanoTime()}: only differences mean anything. */
  long nanoTime();

  /** Milliseconds since the epoch, as {@link System#currentTimeMillis()}. */
  long currentTimeMillis();

  /** Vert.x timers of the calling context, and the system's clocks. */
  static Timers of(Vertx vertx) {
    return new VertxTimers(vertx);
  }
}
