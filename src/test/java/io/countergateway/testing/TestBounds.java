package io.countergateway.testing;

import java.time.Duration;

/**
 * The real time a test waits at most for what another thread does (an answer, a journal's open, a loop's turn): only a
 * failing test waits it out. {@code -Dtest.bound.scale} scales every such bound (default 1): mutation testing sets it
 * low, so that a mutant which never answers fails its test within seconds (killed) instead of holding it until PIT's
 * own timeout, which also costs a restart of PIT's test JVM.
 */
public final class TestBounds {
  /** The factor every bound is multiplied by; a bound never goes under {@link #FLOOR}. */
  public static final double SCALE = scale();
  /** Below this a loaded machine's thread hand-overs alone could miss a bound. */
  private static final Duration FLOOR = Duration.ofMillis(500);

  private TestBounds() {
  }

  /** {@code bound} as this run scales it. */
  public static Duration of(Duration bound) {
    if (SCALE == 1.0) {
      return bound;
    }
    Duration scaled = Duration.ofNanos((long) (bound.toNanos() * SCALE));
    return scaled.compareTo(FLOOR) < 0 ? FLOOR : scaled;
  }

  /** {@code seconds} as this run scales them, in milliseconds. */
  public static long millis(long seconds) {
    return of(Duration.ofSeconds(seconds)).toMillis();
  }

  private static double scale() {
    String value = System.getProperty("test.bound.scale", "1");
    try {
      double scale = Double.parseDouble(value);
      if (scale > 0 && scale <= 1) {
        return scale;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw new IllegalArgumentException("test.bound.scale must be a number in (0, 1], was " + value);
  }
}
