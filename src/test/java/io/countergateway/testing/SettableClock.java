package io.countergateway.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicReference;

/** A UTC clock a test sets and moves, to cross bucket boundaries of windowed namespaces at will. */
public final class SettableClock extends Clock {
  private final AtomicReference<Instant> now;

  public SettableClock(Instant start) {
    this.now = new AtomicReference<>(start);
  }

  public void set(Instant instant) {
    now.set(instant);
  }

  public void advance(Duration by) {
    now.updateAndGet(current -> current.plus(by));
  }

  /** This clock as {@link System#nanoTime()} reads: for the parts of the gateway that measure elapsed time. */
  public long nanoTime() {
    Instant instant = now.get();
    return instant.getEpochSecond() * 1_000_000_000L + instant.getNano();
  }

  @Override
  public Instant instant() {
    return now.get();
  }

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("a UTC clock");
  }
}
