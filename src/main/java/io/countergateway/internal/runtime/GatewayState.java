package io.countergateway.internal.runtime;

import io.countergateway.internal.write.KeysInFlight;
import io.countergateway.internal.write.NamespaceTally;
import io.countergateway.internal.write.WriterHealth;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What readiness is made of, shared by all verticles of one gateway: whether it is shutting down, how many
 * coalescers currently fail to write, and how many are shedding load. Written from several event loops.
 *
 * <p>The gateway-wide transitions (the first coalescer starts failing or shedding, the last one stops) are the
 * operator's events: one log line each, whatever the number of coalescers.
 */
public final class GatewayState implements WriterHealth {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayState.class);

  private volatile boolean draining;
  private final Episode outage = new Episode("database_outage",
    "database outage: flushes fail; increments are held and the flushes retried",
    "database outage over: flushes succeed again");
  private final Episode shedding = new Episode("shedding",
    "shedding load: new increments get 503 until pending counters and waiting requests fit again",
    "shedding over: increments are taken again");
  private final Episode replay = new Episode("journal_replay",
    "resolving the flushes a journal replay carried over (each by its flush id); not ready until they settle",
    "journal replay resolved: every carried-over flush is settled");
  private final AtomicLong drainedCounters = new AtomicLong();
  private final AtomicLong undrainedCounters = new AtomicLong();
  private final AtomicLong journaledCounters = new AtomicLong();
  private final KeysInFlight keysInFlight = new KeysInFlight();
  private final Map<Class<?>, Object> shared = new ConcurrentHashMap<>();
  private final NamespaceTally taken = new NamespaceTally();
  private final Promise<Throwable> journalFailure = Promise.promise();

  /** The id the database keeps in its schema (step 010), once read at start; null while it has not answered. */
  private volatile String databaseId;
  /** The database ids the journals' held work was written for (their replays' record), for a database that answers late. */
  private final java.util.Set<String> journalDatabaseIds = ConcurrentHashMap.newKeySet();
  /** Counters answered 202/204 that a stop could neither write nor keep in the journal (its files were removed). */
  private final AtomicLong lostCounters = new AtomicLong();

  public String databaseId() {
    return databaseId;
  }

  public void databaseIdentified(String id) {
    databaseId = id;
    refuseIfNotTheJournals();
  }

  /** A journal replay holds work written for the database that keeps {@code id}. */
  public void journalHoldsWorkFor(String id) {
    journalDatabaseIds.add(id);
    refuseIfNotTheJournals();
  }

  /**
   * A database that answered only after a start without it, and keeps another id than the one a journal's held work
   * was written for: a start with it answering would have been refused (see {@code JournalTarget}). Said at ERROR;
   * the write path is not held back, so the operator must stop the gateway (docs/operations.md).
   */
  private synchronized void refuseIfNotTheJournals() {
    String id = databaseId;
    java.util.Set<String> others = new java.util.TreeSet<>(journalDatabaseIds);
    others.remove(id);
    if (id == null || others.isEmpty()) {
      return;
    }
    LOG.atError().addKeyValue("event", "journal_database_mismatch")
      .log("database.host: the database that answers now keeps id {}, but the journal in journal.dir holds work "
        + "written for the database that keeps {}: stop the gateway, and point database.kind, host, port and name at "
        + "that database until a clean stop has written it", id, String.join(", ", others));
  }

  /** One coalescer's part of a stop: counters answered 202/204 it could not write, held only in removed files. */
  public void lostAtStop(int counters) {
    lostCounters.addAndGet(counters);
  }

  /** Counters answered 202/204 that the stop lost (see {@link #lostAtStop}); the process exits non-zero then. */
  public long lostCounters() {
    return lostCounters.get();
  }

  /** Increments taken per namespace since start, by every ingest verticle. */
  public NamespaceTally taken() {
    return taken;
  }

  /**
   * The one {@code type} of this gateway that all its event loops share (the edge's budgets and per-client limits,
   * which the doors define), made by {@code create} on first use.
   */
  public <T> T shared(Class<T> type, java.util.function.Supplier<T> create) {
    return type.cast(shared.computeIfAbsent(type, t -> create.get()));
  }

  /** Idempotency keys whose request this gateway is writing now, on any of its event loops. */
  public KeysInFlight keysInFlight() {
    return keysInFlight;
  }

  public boolean isDraining() {
    return draining;
  }

  public void startDraining() {
    draining = true;
  }

  public boolean writersHealthy() {
    return failingWriters() == 0 && sheddingWriters() == 0 && replay.writers.get() == 0;
  }

  /** Ready as far as this process knows (the database ping of {@code /health/ready} aside). */
  public boolean isReady() {
    return !draining && writersHealthy();
  }

  public int failingWriters() {
    return outage.writers.get();
  }

  public int sheddingWriters() {
    return shedding.writers.get();
  }

  @Override
  public void writerFailing(boolean nowFailing) {
    outage.change(nowFailing);
  }

  @Override
  public void writerShedding(boolean nowShedding) {
    shedding.change(nowShedding);
  }

  @Override
  public void writerReplaying(boolean nowReplaying) {
    replay.change(nowReplaying);
  }

  /** A journal's write or fsync failed (its verticle takes no accepted increment until a restart). */
  public void journalFailed(Throwable cause) {
    if (journalFailure.tryComplete(cause)) {
      LOG.atError().addKeyValue("event", "restart_needed")
        .log("a journal cannot be written ({}): this gateway must be stopped, once drained, and started again; "
          + "the start replays what the journal holds", cause.toString());
    }
  }

  /** Completes with the first journal failure of this gateway (see {@link #journalFailed}). */
  public Future<Throwable> journalFailure() {
    return journalFailure.future();
  }

  /** One coalescer's part of a graceful stop: counters it flushed, and those it could not within the timeout. */
  public void drained(int flushedCounters, int unflushedCounters) {
    drainedCounters.addAndGet(flushedCounters);
    undrainedCounters.addAndGet(unflushedCounters);
  }

  /** One coalescer's part of a graceful stop that found its database failing: counters left to the journal's replay. */
  public void leftInJournal(int counters) {
    journaledCounters.addAndGet(counters);
  }

  public void logDrain(long startNanos) {
    long lost = lostCounters.get();
    if (lost > 0) {
      LOG.atError().addKeyValue("event", "drain").addKeyValue("counters_flushed", drainedCounters.get())
        .addKeyValue("counters_lost", lost).addKeyValue("duration_ms", millisSince(startNanos))
        .log("drain incomplete and the journal's files were removed from journal.dir: {} counters answered 202/204 "
          + "could not be written and are lost; exiting non-zero", lost);
      return;
    }
    long left = undrainedCounters.get();
    long journaled = journaledCounters.get();
    if (left == 0 && journaled > 0) {
      LOG.atWarn().addKeyValue("event", "drain").addKeyValue("counters_flushed", drainedCounters.get())
        .addKeyValue("counters_not_flushed", 0).addKeyValue("counters_in_journal", journaled)
        .addKeyValue("duration_ms", millisSince(startNanos))
        .log("drained to the journal: the database is failing; what is pending is replayed at the next start");
      return;
    }
    (left == 0 ? LOG.atInfo() : LOG.atError()).addKeyValue("event", "drain")
      .addKeyValue("counters_flushed", drainedCounters.get()).addKeyValue("counters_not_flushed", left)
      .addKeyValue("duration_ms", millisSince(startNanos))
      .log(left == 0 ? "drained: everything pending was flushed" : "drain incomplete: some counters were not flushed; "
        + "with the journal on, the accepted increments among them are in it and are written at the next start");
  }

  private static long millisSince(long startNanos) {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  /** A condition some coalescers are in; logged when the first enters it and when the last leaves. */
  private static final class Episode {
    private final AtomicInteger writers = new AtomicInteger();
    private final String event;
    private final String startMessage;
    private final String endMessage;
    private volatile long startNanos;

    Episode(String event, String startMessage, String endMessage) {
      this.event = event;
      this.startMessage = startMessage;
      this.endMessage = endMessage;
    }

    void change(boolean entering) {
      int now = writers.addAndGet(entering ? 1 : -1);
      if (entering && now == 1) {
        startNanos = System.nanoTime();
        LOG.atWarn().addKeyValue("event", event + "_start").log(startMessage);
      } else if (!entering && now == 0) {
        LOG.atInfo().addKeyValue("event", event + "_end").addKeyValue("duration_ms", millisSince(startNanos)).log(endMessage);
      }
    }
  }
}
