package io.countergateway;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What readiness is made of, shared by all verticles of one gateway: whether it is shutting down, how many
 * coalescers currently fail to write, and how many are shedding load. Written from several event loops.
 *
 * <p>The gateway-wide transitions (the first coalescer starts failing or shedding, the last one stops) are the
 * operator's events: one log line each, whatever the number of coalescers.
 */
public final class GatewayState {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayState.class);

  private volatile boolean draining;
  private final AtomicInteger failingWriters = new AtomicInteger();
  private final AtomicInteger sheddingWriters = new AtomicInteger();
  private volatile long outageStartNanos;
  private volatile long sheddingStartNanos;
  private final AtomicLong drainedCounters = new AtomicLong();
  private final AtomicLong undrainedCounters = new AtomicLong();

  public boolean isDraining() {
    return draining;
  }

  public void startDraining() {
    draining = true;
  }

  public boolean writersHealthy() {
    return failingWriters.get() == 0 && sheddingWriters.get() == 0;
  }

  /** Ready as far as this process knows (the database ping of {@code /health/ready} aside). */
  public boolean isReady() {
    return !draining && writersHealthy();
  }

  public int failingWriters() {
    return failingWriters.get();
  }

  public int sheddingWriters() {
    return sheddingWriters.get();
  }

  public void writerFailing(boolean nowFailing) {
    int failing = failingWriters.addAndGet(nowFailing ? 1 : -1);
    if (nowFailing && failing == 1) {
      outageStartNanos = System.nanoTime();
      LOG.atWarn().addKeyValue("event", "database_outage_start")
        .log("database outage: flushes fail; increments are held and the flushes retried");
    } else if (!nowFailing && failing == 0) {
      LOG.atInfo().addKeyValue("event", "database_outage_end").addKeyValue("duration_ms", millisSince(outageStartNanos))
        .log("database outage over: flushes succeed again");
    }
  }

  public void writerShedding(boolean nowShedding) {
    int shedding = sheddingWriters.addAndGet(nowShedding ? 1 : -1);
    if (nowShedding && shedding == 1) {
      sheddingStartNanos = System.nanoTime();
      LOG.atWarn().addKeyValue("event", "shedding_start")
        .log("shedding load: new increments get 503 until pending counters and waiting requests fit again");
    } else if (!nowShedding && shedding == 0) {
      LOG.atInfo().addKeyValue("event", "shedding_end").addKeyValue("duration_ms", millisSince(sheddingStartNanos))
        .log("shedding over: increments are taken again");
    }
  }

  /** One coalescer's part of a graceful stop: counters it flushed, and those it could not within the timeout. */
  public void drained(int flushedCounters, int unflushedCounters) {
    drainedCounters.addAndGet(flushedCounters);
    undrainedCounters.addAndGet(unflushedCounters);
  }

  void logDrain(long startNanos) {
    long left = undrainedCounters.get();
    (left == 0 ? LOG.atInfo() : LOG.atError()).addKeyValue("event", "drain")
      .addKeyValue("counters_flushed", drainedCounters.get()).addKeyValue("counters_not_flushed", left)
      .addKeyValue("duration_ms", millisSince(startNanos))
      .log(left == 0 ? "drained: everything pending was flushed" : "drain incomplete: some counters were not flushed");
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }
}
