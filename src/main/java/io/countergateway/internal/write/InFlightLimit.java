package io.countergateway.internal.write;

import java.util.function.LongSupplier;

/**
 * How many flushes one coalescer keeps in flight: a hill climb on what the limit buys, between 1 and the ceiling
 * {@code batching.maxInFlight} (src/DESIGN.md §3 "Flushes in flight"). Confined to the coalescer's event loop.
 *
 * <p>What a limit buys is its <em>power</em> over a stretch of time: counts committed per second divided by the mean
 * time a count waited, from arriving to committed (Kleinrock's throughput ÷ delay). Clients that wait for their
 * answer send more when their answers come sooner, so there it is throughput; traffic that arrives at its own rate
 * commits at that rate whatever the limit, so there it is the wait. A count's wait is estimated per flush as half the
 * time since the flush before it was sent (its counts arrived over that time) plus the flush's round trip.
 *
 * <p>It starts at the ceiling and holds the limit for {@link #HOLD_PERIODS} periods of {@link #PERIOD_NANOS}, then
 * tries one fewer in flight, and if that did not pay one more, each for {@link #PROBE_PERIODS} periods. One fewer is
 * kept only if its power beats the held one by {@link #MARGIN}; one more is kept unless it falls short by as much:
 * a flush in flight costs a connection and a slot the ceiling already grants, while too few costs the full distance
 * on every flush, and on a busy machine the round trip is mostly scheduling delay that more in flight overlaps like
 * distance. A kept try is followed at once by the next step the same way. Measured rather than modelled, it sees
 * every cost of another flush in flight, the database's queue as well as the gateway's CPU per flush (more, smaller
 * flushes). A try that lost waits 1, 2, then {@link #MOST_SKIPPED} cycles before that side is tried again, so a
 * settled limit spends little time on tries. A failed write halves the limit: a failing or overloaded database gets
 * fewer retries at once. Fixed ({@code batching.adaptiveInFlight: false}) it is always the ceiling.
 */
final class InFlightLimit {
  /** Many flushes long at any distance the limit matters for, short enough to settle within a second or two. */
  static final long PERIOD_NANOS = 100_000_000L;
  /** A period lasts for this many writes at least: a slow database's periods still hold a few. */
  static final int MIN_WRITES = 4;
  static final int HOLD_PERIODS = 4;
  static final int PROBE_PERIODS = 2;
  /** Above most of a busy machine's noise between two stretches of the same limit. */
  static final double MARGIN = 0.05;
  static final int MOST_SKIPPED = 4;

  private enum Phase { HOLD, UP, DOWN }

  private final int ceiling;
  private final boolean adaptive;
  private final LongSupplier nanoClock;
  private int limit;
  private Phase phase = Phase.HOLD;
  /** The limit a try started from, and whether the try follows a won one the same way (then it does not turn). */
  private int held;
  private boolean climbing;
  private int periodsLeft = 1;
  /** Power of the limit held; NaN before the first hold ended. */
  private double reference = Double.NaN;
  private int upSkipped;
  private int upWait;
  private int downSkipped;
  private int downWait;
  private final Stretch period = new Stretch();
  private final Stretch stretch = new Stretch();
  private long periodStart;
  private long lastSent;
  private long lastDone = Long.MIN_VALUE;

  /** Counts committed, writes and count-weighted wait (ns) over some time. */
  private static final class Stretch {
    long nanos;
    long writes;
    long counts;
    double waitNanos;

    void add(Stretch other) {
      nanos += other.nanos;
      writes += other.writes;
      counts += other.counts;
      waitNanos += other.waitNanos;
    }

    void clear() {
      nanos = 0;
      writes = 0;
      counts = 0;
      waitNanos = 0;
    }

    /** Counts per second ÷ mean wait, in any fixed unit: only compared with itself. */
    double power() {
      return counts == 0 || nanos == 0 || waitNanos <= 0 ? 0 : (double) counts * counts / nanos / waitNanos;
    }
  }

  /** Starts at the ceiling, as the fixed setting would run, and tries fewer after its first period. */
  InFlightLimit(int ceiling, boolean adaptive, LongSupplier nanoClock) {
    this.ceiling = Math.max(1, ceiling);
    this.adaptive = adaptive;
    this.nanoClock = nanoClock;
    this.limit = this.ceiling;
    this.periodStart = nanoClock.getAsLong();
    this.lastSent = periodStart;
  }

  int current() {
    return limit;
  }

  /** A write is sent now: the time since the one before it, at most a period, over which its counts arrived. */
  long sent() {
    if (!adaptive) {
      return 0;
    }
    long now = nanoClock.getAsLong();
    long gap = Math.min(PERIOD_NANOS, Math.max(0, now - lastSent));
    lastSent = now;
    return gap;
  }

  /** A write of {@code counts} (its rows' deltas, unsigned) committed {@code rttNanos} after {@link #sent}. */
  void succeeded(long rttNanos, long gapNanos, long counts) {
    if (!adaptive) {
      return;
    }
    long now = nanoClock.getAsLong();
    long rtt = Math.max(0, rttNanos);
    if (lastDone != Long.MIN_VALUE && now - lastDone > Math.max(PERIOD_NANOS, 4 * rtt)) {
      // a pause in the traffic, not the limit's doing: the period so far says nothing
      period.clear();
      periodStart = now;
    }
    lastDone = now;
    long n = Math.max(1, counts);
    period.writes++;
    period.counts += n;
    period.waitNanos += n * (gapNanos / 2.0 + rtt);
    if (now - periodStart >= PERIOD_NANOS && period.writes >= MIN_WRITES) {
      period.nanos = now - periodStart;
      stretch.add(period);
      period.clear();
      periodStart = now;
      if (--periodsLeft <= 0) {
        decide(stretch.power());
        stretch.clear();
      }
    }
  }

  /** A write failed (lost connection, timeout, deadlock): not a value the database refused. */
  void failed() {
    if (adaptive) {
      limit = Math.max(1, limit / 2);
      upSkipped = upWait = downSkipped = downWait = 0;
      reference = Double.NaN;
      hold();
      period.clear();
      stretch.clear();
      periodStart = nanoClock.getAsLong();
    }
  }

  private void decide(double power) {
    switch (phase) {
      case HOLD -> {
        reference = power;
        if (!tryDown() && !tryUp()) {
          hold();
        }
      }
      case DOWN -> {
        if (power > reference * (1 + MARGIN)) {
          downSkipped = 0;
          keep(power);
          if (!tryDown()) {
            hold();
          }
        } else {
          downSkipped = lost(downSkipped);
          downWait = downSkipped;
          if (climbing || !tryUp()) {
            hold();
          }
        }
      }
      case UP -> {
        if (power >= reference * (1 - MARGIN)) {
          upSkipped = 0;
          keep(power);
          if (!tryUp()) {
            hold();
          }
        } else {
          upSkipped = lost(upSkipped);
          upWait = upSkipped;
          hold();
        }
      }
    }
  }

  /** The try's limit is kept: the one held from now on, and the next step the same way is tried without a hold. */
  private void keep(double power) {
    reference = power;
    climbing = true;
  }

  /** Back to the limit held; that side waits twice the cycles it last waited (1 at first, {@link #MOST_SKIPPED} at most). */
  private int lost(int skipped) {
    limit = held;
    return Math.min(MOST_SKIPPED, Math.max(1, 2 * skipped));
  }

  /** One more in flight for a try, unless at the ceiling or that side waits out a lost try (one cycle less). */
  private boolean tryUp() {
    if (limit >= ceiling) {
      return false;
    }
    if (upWait > 0) {
      upWait--;
      return false;
    }
    return probe(Phase.UP, limit + 1);
  }

  private boolean tryDown() {
    if (limit <= 1) {
      return false;
    }
    if (phase == Phase.HOLD && downWait > 0) {
      downWait--;
      return false;
    }
    return probe(Phase.DOWN, limit - 1);
  }

  private boolean probe(Phase way, int to) {
    if (phase == Phase.HOLD) {
      climbing = false;
    }
    phase = way;
    held = limit;
    limit = to;
    periodsLeft = PROBE_PERIODS;
    return true;
  }

  private void hold() {
    phase = Phase.HOLD;
    climbing = false;
    periodsLeft = HOLD_PERIODS;
  }
}
