package io.countergateway.testing;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Waits for what another thread, an event loop or another process makes true: the test asserts the condition it
 * awaits, never a fixed pause. It polls, first every millisecond, then less often, up to a deadline that only bounds a
 * failing test (a passing one goes on as soon as the condition holds).
 */
public final class Eventually {
  /** Long enough for a loaded machine; only a failing test waits it out ({@link TestBounds} scales it). */
  public static final Duration WITHIN = Duration.ofSeconds(10);
  private static final long MAX_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

  private Eventually() {
  }

  /**
   * What {@code probe} answers once it answers {@code expected}, or its last answer at the deadline, for the caller to
   * assert (so a failure shows the value seen).
   */
  public static <T> T value(Supplier<T> probe, T expected) {
    return value(probe, expected, WITHIN);
  }

  /** {@link #value(Supplier, Object)} up to {@code within}. */
  public static <T> T value(Supplier<T> probe, T expected, Duration within) {
    AtomicReference<T> last = new AtomicReference<>(probe.get());
    poll(() -> expected.equals(last.get()) || expected.equals(last.updateAndGet(seen -> probe.get())), within);
    return last.get();
  }

  /** Returns once {@code condition} holds; fails naming {@code what} at the deadline. */
  public static void until(String what, BooleanSupplier condition) {
    until(what, condition, WITHIN);
  }

  /** {@link #until(String, BooleanSupplier)} up to {@code within}. */
  public static void until(String what, BooleanSupplier condition, Duration within) {
    assertThat(poll(condition, within)).as("waited %s for %s", TestBounds.of(within), what).isTrue();
  }

  /** Whether {@code condition} held before {@code within} passed. */
  private static boolean poll(BooleanSupplier condition, Duration within) {
    long deadline = System.nanoTime() + TestBounds.of(within).toNanos();
    long pollNanos = TimeUnit.MILLISECONDS.toNanos(1);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      pause(pollNanos);
      pollNanos = Math.min(MAX_POLL_NANOS, pollNanos * 2);
    }
    return true;
  }

  /** The poll's interval: the one pause in the tests, between two looks at a condition, never an oracle. */
  private static void pause(long nanos) {
    try {
      TimeUnit.NANOSECONDS.sleep(nanos);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting", e);
    }
  }
}
