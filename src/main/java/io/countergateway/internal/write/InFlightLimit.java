package io.countergateway.internal.write;

import java.util.Arrays;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many flushes one coalescer keeps in flight: a hill climb on what the limit buys, between 1 and the ceiling
 * {@code batching.maxInFlight} (src/DESIGN.md §3 "Flushes in flight"). Confined to the coalescer's event loop.
 *
 * <p>What a limit buys is its <em>power</em> over a stretch of time: counts committed per second divided by the mean
 * time a count waited, from arriving to committed (Kleinrock's throughput ÷ delay). Clients that wait for their
 * answer send more when their answers come sooner, so there it is throughput (squared: they also wait less); traffic
 * that arrives at its own rate commits at that rate whatever the limit, so there it is the wait. A count's wait is
 * estimated per flush as half the time since the flush before it was sent (its counts arrived over that time) plus
 * the flush's round trip.
 *
 * <p>It starts at the ceiling. Each cycle holds the limit, tries half (or twice) as many in flight, then goes back to
 * the held limit, and compares the try with the mean of the stretches just before and just after it, so a trend in
 * the load or in the machine's speed (a JVM still compiling, other work starting) cancels out instead of crediting
 * whichever came later. Each stretch leaves out its first {@link #SETTLE_PERIODS} period, whose writes were sent
 * under the limit before. Fewer are kept only if their power beats that mean by {@link #MARGIN}; more are kept
 * unless they fall short by as much: on a real machine two stretches of the same limit differ by tens of percent,
 * too few in flight costs the full distance on every flush while one more than needed costs little, and a busy
 * machine's scheduling delay is overlapped by more in flight like distance. So where the limits measure alike it
 * stays at the ceiling, and it keeps fewer only where fewer clearly pay (a database on loopback whose gateway spends
 * its CPU on more, smaller flushes; a database whose queue more in flight only lengthens). A kept try is followed by
 * the next step the same way. A try that lost waits 1, 2, then {@link #MOST_SKIPPED} cycles before that same limit is
 * tried again, so a settled limit spends little time on tries that keep losing. A failed write halves the limit: a
 * failing or overloaded database gets fewer retries at once. Fixed ({@code batching.adaptiveInFlight: false}) it is
 * always the ceiling.
 */
final class InFlightLimit {
  private static final Logger LOG = LoggerFactory.getLogger(InFlightLimit.class);
  /** Many flushes long at any distance the limit matters for, short enough to settle within a few seconds. */
  static final long PERIOD_NANOS = 100_000_000L;
  /** A period lasts for this many writes at least: a slow database's periods still hold a few. */
  static final int MIN_WRITES = 4;
  /** Periods of each stretch left out: their writes were sent under the limit before. */
  static final int SETTLE_PERIODS = 1;
  /** Periods of each stretch measured. */
  static final int MEASURE_PERIODS = 2;
  static final int HOLD_PERIODS = 4;
  /** On power, which goes as the square of throughput for waiting clients: about 10 % of their throughput. */
  static final double MARGIN = 0.2;
  static final int MOST_SKIPPED = 4;

  private enum Phase { HOLD, TRY, BACK }

  private final int ceiling;
  private final boolean adaptive;
  private final LongSupplier nanoClock;
  private int limit;
  private Phase phase = Phase.HOLD;
  private int periodsLeft;
  /** The limit held while a try runs, the try's limit and way (+1 twice, −1 half), and a kept try's way (0: none). */
  private int held;
  private int to;
  private int way;
  private int keptWay;
  /** Power of the held limit just before the try, and of the try. */
  private double before;
  private double tried;
  /** Per limit tried, one way or the other: cycles it last waited after losing, and cycles still to wait. */
  private final int[] skippedDown;
  private final int[] waitDown;
  private final int[] skippedUp;
  private final int[] waitUp;
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

  /** Starts at the ceiling, as the fixed setting would run, and tries fewer after its first hold. */
  InFlightLimit(int ceiling, boolean adaptive, LongSupplier nanoClock) {
    this.ceiling = Math.max(1, ceiling);
    this.adaptive = adaptive;
    this.nanoClock = nanoClock;
    this.limit = this.ceiling;
    this.skippedDown = new int[this.ceiling + 1];
    this.waitDown = new int[this.ceiling + 1];
    this.skippedUp = new int[this.ceiling + 1];
    this.waitUp = new int[this.ceiling + 1];
    this.periodStart = nanoClock.getAsLong();
    this.lastSent = periodStart;
    enter(Phase.HOLD, HOLD_PERIODS);
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
      if (periodsLeft <= MEASURE_PERIODS) {
        stretch.add(period);
      }
      period.clear();
      periodStart = now;
      if (--periodsLeft <= 0) {
        double power = stretch.power();
        Phase was = phase;
        int at = limit;
        long writes = stretch.writes;
        stretch.clear();
        ended(power);
        if (LOG.isDebugEnabled()) {
          LOG.debug("in flight {} ({}): power {} over {} writes; now {} ({})", at, was, String.format("%.4g", power),
            writes, limit, phase);
        }
      }
    }
  }

  /** A write failed (lost connection, timeout, deadlock): not a value the database refused. */
  void failed() {
    if (adaptive) {
      limit = Math.max(1, limit / 2);
      Arrays.fill(skippedDown, 0);
      Arrays.fill(waitDown, 0);
      Arrays.fill(skippedUp, 0);
      Arrays.fill(waitUp, 0);
      keptWay = 0;
      period.clear();
      stretch.clear();
      periodStart = nanoClock.getAsLong();
      enter(Phase.HOLD, HOLD_PERIODS);
    }
  }

  private void ended(double power) {
    switch (phase) {
      case HOLD -> {
        before = power;
        if (!startTry()) {
          enter(Phase.HOLD, HOLD_PERIODS);
        }
      }
      case TRY -> {
        tried = power;
        limit = held;
        enter(Phase.BACK, SETTLE_PERIODS + MEASURE_PERIODS);
      }
      case BACK -> decide(power);
    }
  }

  /** The try against the held limit's power around it, the mean of just before and just after. */
  private void decide(double after) {
    double around = (before + after) / 2;
    boolean kept = way < 0 ? tried > around * (1 + MARGIN) : tried >= around * (1 - MARGIN);
    int[] skipped = way < 0 ? skippedDown : skippedUp;
    int[] wait = way < 0 ? waitDown : waitUp;
    if (kept) {
      skipped[to] = 0;
      keptWay = way;
      limit = to;
      enter(Phase.HOLD, HOLD_PERIODS);
      return;
    }
    skipped[to] = Math.min(MOST_SKIPPED, Math.max(1, 2 * skipped[to]));
    wait[to] = skipped[to];
    boolean turned = keptWay == 0 && way < 0;
    keptWay = 0;
    // after fewer lost, the stretch just measured at the held limit is the "before" of more
    before = after;
    if (!turned || !tryWay(+1)) {
      enter(Phase.HOLD, HOLD_PERIODS);
    }
  }

  /** The next try from the held limit: the way a kept try went, else fewer, else more. */
  private boolean startTry() {
    if (keptWay != 0) {
      int preferred = keptWay;
      keptWay = 0;
      if (tryWay(preferred)) {
        keptWay = preferred;
        return true;
      }
      return false;
    }
    return tryWay(-1) || tryWay(+1);
  }

  /** Half as many ({@code -1}) or twice as many ({@code +1}) for a try, unless none is left that way or that limit
   * waits a cycle. */
  private boolean tryWay(int step) {
    int next = step < 0 ? (limit + 1) / 2 : Math.min(ceiling, 2 * limit);
    if (next == limit) {
      return false;
    }
    int[] wait = step < 0 ? waitDown : waitUp;
    if (wait[next] > 0) {
      wait[next]--;
      return false;
    }
    held = limit;
    to = next;
    way = step;
    limit = next;
    enter(Phase.TRY, SETTLE_PERIODS + MEASURE_PERIODS);
    return true;
  }

  private void enter(Phase next, int periods) {
    phase = next;
    periodsLeft = periods;
  }
}
