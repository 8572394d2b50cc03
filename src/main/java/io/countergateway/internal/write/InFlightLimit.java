package io.countergateway.internal.write;

import java.util.function.LongSupplier;

/**
 * How many flushes one coalescer keeps in flight: a Vegas rule on each write's measured round trip, between 1 and the
 * ceiling {@code batching.maxInFlight} (src/DESIGN.md §3 "Flushes in flight"). Confined to the coalescer's event loop.
 *
 * <p>The shortest round trip of the last {@link #WINDOW_NANOS} to {@code 2 ×} that long is the base: the database's
 * distance plus its cost of a small flush. Once per round (as many writes as the limit), the mean round trip of that
 * round against the base estimates how many flushes wait in the database rather than travel (Little's law on the
 * excess): {@code limit × (rtt − base) / rtt}. Fewer than {@link #GROW_BELOW}: the connection idles between flushes, so one
 * more goes in flight; more than {@link #SHRINK_ABOVE}: flushes queue behind each other (or split a batch that one
 * flush would have carried), so one fewer does. A failed write halves the limit: a failing or overloaded database
 * gets fewer retries at once. Fixed ({@code batching.adaptiveInFlight: false}) it is always the ceiling.
 */
final class InFlightLimit {
  /** Long enough to hold a quiet moment's round trip, short enough to follow a database that moved. */
  static final long WINDOW_NANOS = 10_000_000_000L;
  static final double GROW_BELOW = 0.5;
  static final double SHRINK_ABOVE = 1.0;

  private final int ceiling;
  private final boolean adaptive;
  private final LongSupplier nanoClock;
  private int limit;
  private long windowStart;
  private long windowMin = Long.MAX_VALUE;
  private long previousWindowMin = Long.MAX_VALUE;
  private long roundSum;
  private int roundSamples;

  /** Starts at one, as a fixed setting of 1 would run, and grows from the first round trips measured. */
  InFlightLimit(int ceiling, boolean adaptive, LongSupplier nanoClock) {
    this.ceiling = Math.max(1, ceiling);
    this.adaptive = adaptive;
    this.nanoClock = nanoClock;
    this.limit = adaptive ? 1 : this.ceiling;
    this.windowStart = nanoClock.getAsLong();
  }

  int current() {
    return limit;
  }

  /** A write committed {@code rttNanos} after it was sent. */
  void succeeded(long rttNanos) {
    if (!adaptive) {
      return;
    }
    long rtt = Math.max(1, rttNanos);
    long now = nanoClock.getAsLong();
    if (now - windowStart >= WINDOW_NANOS) {
      previousWindowMin = windowMin;
      windowMin = Long.MAX_VALUE;
      windowStart = now;
    }
    windowMin = Math.min(windowMin, rtt);
    roundSum += rtt;
    if (++roundSamples < limit) {
      return;
    }
    long base = Math.min(windowMin, previousWindowMin);
    double mean = (double) roundSum / roundSamples;
    double waiting = limit * (mean - base) / mean;
    if (waiting < GROW_BELOW) {
      limit = Math.min(ceiling, limit + 1);
    } else if (waiting > SHRINK_ABOVE) {
      limit = Math.max(1, limit - 1);
    }
    newRound();
  }

  /** A write failed (lost connection, timeout, deadlock): not a value the database refused. */
  void failed() {
    if (adaptive) {
      limit = Math.max(1, limit / 2);
      newRound();
    }
  }

  private void newRound() {
    roundSum = 0;
    roundSamples = 0;
  }
}
