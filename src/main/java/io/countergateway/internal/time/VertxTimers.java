package io.countergateway.internal.time;

import io.vertx.core.Vertx;

/** {@link Timers} on Vert.x timers and the system's clocks. */
final class VertxTimers implements Timers {
  private final Vertx vertx;

  VertxTimers(Vertx vertx) {
    this.vertx = vertx;
  }

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
    if (id >= 0) {
      vertx.cancelTimer(id);
    }
  }

  @Override
  public long nanoTime() {
    return System.nanoTime();
  }

  @Override
  public long currentTimeMillis() {
    return System.currentTimeMillis();
  }
}
