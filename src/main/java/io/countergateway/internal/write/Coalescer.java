package io.countergateway.internal.write;

import io.countergateway.internal.time.Timers;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.config.BatchingOptions;
import io.countergateway.config.ConfigException;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.MemoryBounds;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.model.Increment;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.write.journal.Journal;
import io.countergateway.internal.write.journal.JournalRecords;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * Sums deltas per counter and turns them into few, large, ordered flushes, each a {@link FlushJob} that the
 * {@link FlushWriter} runs. Confined to one event loop: every method must be called on the owning verticle's context,
 * so there are no locks.
 *
 * <p>A flush starts when the oldest pending delta is {@code batching.maxDelay} old, when {@code maxKeys} counters are
 * pending, or at once when a request waits for a commit and no flush is in flight. While as many flushes run as
 * {@link InFlightLimit} allows (up to {@code maxInFlight}), the next batch grows: batch size follows load (group commit).
 *
 * <p>With a {@link Journal}, accepted increments are appended to it as they are taken, each flush that holds any is
 * recorded before its first attempt and its settlement after, and the coalescer tells the journal the lowest position
 * it still needs (src/DESIGN.md §4 "Journal").
 */
public final class Coalescer {
  private final Timers timers;
  private final FlushWriter writer;
  private final GatewayConfig config;
  private final BatchingOptions options;
  /** How many counters and waiting requests it may hold (derived from the heap). */
  private final MemoryBounds bounds;
  private final WriterHealth health;
  /** Nanoseconds, as {@link System#nanoTime()}: passed in, so tests move time instead of sleeping. */
  private final LongSupplier nanoClock;
  private final SlotPicker slots;
  /** How many flushes may be in flight now: follows the measured round trip, up to batching.maxInFlight. */
  private final InFlightLimit inFlightLimit;
  private final FlushSources sources;
  /** Created on its verticle's event loop; requests come on duplicates of that context, so the thread is the check. */
  private final Thread eventLoop;
  private final long timeoutNanos;

  private LinkedHashMap<CounterKey, Pending> pending = new LinkedHashMap<>();
  private int pendingWaiters;
  private int waiting;
  private long incrementsTaken;
  private long incrementsRefused;
  private long flushes;
  private long flushRows;
  private int inFlight;
  private long timerId = -1;
  private long sweepTimerId = -1;
  private long firstPendingNanos;
  private final ArrayDeque<Ack> deadlines = new ArrayDeque<>();
  private boolean shedding;
  private Promise<Void> drained;
  private boolean leftInJournal;
  /** Null without a journal. */
  private final Journal journal;
  /** The flush jobs holding journaled increments, until released: each keeps its journal position until then. */
  private final List<FlushJob> jobs = new ArrayList<>();
  private int replaying;
  /** Counters in flushes formed and not settled: with {@link #pending}, what a stop leaves unwritten. */
  private int countersInFlight;
  private static final Future<Void> HELD = Future.succeededFuture();
  /**
   * How long the writer must have been failing, without a success in between, before a drain leaves what it holds to
   * the journal: a connection killed or a pool replaced costs a flush one failed attempt and is over in milliseconds,
   * while a journal left behind is written only by a restart on the same disk (an emptyDir goes with its pod).
   */
  static final long LEAVE_TO_JOURNAL_AFTER_FAILING_MS = 1_000;

  private static final class Pending {
    long delta;
    /** Waiting requests, withdrawn ones included (marked DONE): removing from the middle would be O(n). */
    List<Ack> acks;
    int liveAcks;
    /** Journal position of the first journaled increment in this entry; -1 when none is. */
    long firstLsn = -1;
  }

  /**
   * {@code lane}: the replica lane this coalescer writes (see {@link SlotPicker}), read at every flush;
   * {@code nanoClock}: {@code System::nanoTime} but in tests.
   */
  public Coalescer(Vertx vertx, CounterStore store, GatewayConfig config, WriterHealth health, int instanceIndex,
                   IntSupplier lane, LongSupplier nanoClock) {
    this(vertx, store, config, health, instanceIndex, lane, nanoClock, null);
  }

  /** {@code journal}: where accepted increments go before they are answered; null for none. */
  public Coalescer(Vertx vertx, CounterStore store, GatewayConfig config, WriterHealth health, int instanceIndex,
                   IntSupplier lane, LongSupplier nanoClock, Journal journal) {
    this(vertx, store, config, health, instanceIndex, lane, nanoClock, journal, System::currentTimeMillis,
      FlushSources.TICK_MS);
  }

  /**
   * {@code millisClock}: the wall clock the flush sources' heartbeats read ({@code System::currentTimeMillis} but in
   * tests); {@code tickMs}: how often they consider an advance ({@link FlushSources#TICK_MS}).
   */
  Coalescer(Vertx vertx, CounterStore store, GatewayConfig config, WriterHealth health, int instanceIndex,
            IntSupplier lane, LongSupplier nanoClock, Journal journal, LongSupplier millisClock, long tickMs) {
    this(vertx, store, config, health, instanceIndex, lane, nanoClock, journal, millisClock, tickMs, Timers.of(vertx));
  }

  /** {@code timers}: every timer of the coalescer, its flush writer and its flush sources ({@link Timers#of} but in tests). */
  Coalescer(Vertx vertx, CounterStore store, GatewayConfig config, WriterHealth health, int instanceIndex,
            IntSupplier lane, LongSupplier nanoClock, Journal journal, LongSupplier millisClock, long tickMs,
            Timers timers) {
    this.timers = timers;
    this.journal = journal;
    this.config = config;
    this.options = config.getBatching();
    this.bounds = config.getMemoryBounds();
    this.health = health;
    this.nanoClock = nanoClock;
    this.slots = new SlotPicker(lane, config.getBatching().getMaxInFlight());
    FlushLog log = journal == null ? FlushLog.NONE : new JournalFlushLog(journal);
    this.sources = new FlushSources(store, log, instanceIndex, options.flushSourceHeartbeatMs(), millisClock, tickMs,
      timers);
    this.writer = new FlushWriter(vertx, store, sources, log, options, health, this::reslot, nanoClock, timers);
    this.inFlightLimit = new InFlightLimit(options.getMaxInFlight(), options.isAdaptiveInFlight(), nanoClock);
    writer.measuredBy(inFlightLimit);
    writer.onReleased(this::released);
    if (config.getDatabase().isKeepUntilReplicated() && config.getDatabase().isPostgres()) {
      writer.keepUntilReplicated(store::replicationPosition, config.getDatabase().getReplicationLagMaxMs(),
        this::endSheddingIfRoom);
    }
    this.eventLoop = Thread.currentThread();
    this.timeoutNanos = config.getLimits().getRequestTimeoutMs() * 1_000_000L;
    if (journal != null) {
      journal.neededBy(this::lowestNeeded);
    }
  }

  /** Exposes this coalescer's counters; they are read by the scrape thread, a little stale at worst. */
  public void registerMetrics(MeterRegistry registry, int index) {
    Tags tags = Tags.of("verticle", Integer.toString(index));
    FunctionCounter.builder("gateway.increments.taken", this, c -> c.incrementsTaken).tags(tags)
      .description("increments taken into the coalescer").register(registry);
    FunctionCounter.builder("gateway.increments.refused", this, c -> c.incrementsRefused).tags(tags)
      .description("increments refused with 503 because the coalescer was full or draining").register(registry);
    FunctionCounter.builder("gateway.flushes", this, c -> c.flushes).tags(tags)
      .description("flushes formed (one multi-row upsert each, split halves not counted)").register(registry);
    FunctionCounter.builder("gateway.flush.rows", this, c -> c.flushRows).tags(tags)
      .description("slot rows written by flushes; increments taken divided by this is the batching factor").register(registry);
    Gauge.builder("gateway.pending.counters", this, c -> c.pending.size()).tags(tags)
      .description("counters holding a delta not yet in a flush").register(registry);
    Gauge.builder("gateway.waiting.requests", this, c -> c.waiting).tags(tags)
      .description("requests waiting for the commit of their increment").register(registry);
    Gauge.builder("gateway.flushes.held.replication", writer, FlushWriter::heldForReplicas).tags(tags)
      .description("committed flushes held until every standby has flushed them (database.keepUntilReplicated)")
      .register(registry);
    writer.registerMetrics(registry, tags);
  }

  /** Starts the deadline sweep; waiting requests share one timeout, so they expire in arrival order. */
  public void start() {
    long period = Math.max(5, Math.min(100, config.getLimits().getRequestTimeoutMs() / 10));
    sweepTimerId = timers.periodic(period, this::expireOverdue);
  }

  private void expireOverdue() {
    long now = nanoClock.getAsLong();
    while (!deadlines.isEmpty() && (deadlines.peekFirst().state() == Ack.State.DONE
      || deadlines.peekFirst().deadline - now <= 0)) {
      expire(deadlines.pollFirst());
    }
  }

  /**
   * Takes an increment. Returns the {@link Ack} to wait on when {@code waitForCommit}, else null once the delta is
   * held. Throws {@link ApiError} 503 when the coalescer is full or shutting down: then nothing was taken.
   */
  public Ack add(Increment increment, boolean waitForCommit) {
    checkContext();
    checkOpen();
    Pending entry = pending.get(increment.key());
    checkRoom(entry == null ? 1 : 0, waitForCommit ? 1 : 0);
    checkSum(entry, increment);
    Ack ack = take(entry, increment, waitForCommit);
    scheduleFlush();
    return ack;
  }

  /**
   * Takes increments of distinct counters all together or none of them (a batch request is all or nothing).
   */
  public List<Ack> addAll(List<Increment> increments, boolean waitForCommit) {
    checkContext();
    checkOpen();
    int newKeys = 0;
    for (Increment increment : increments) {
      Pending entry = pending.get(increment.key());
      newKeys += entry == null ? 1 : 0;
      checkSum(entry, increment);
    }
    checkRoom(newKeys, waitForCommit ? increments.size() : 0);
    List<Ack> acks = new ArrayList<>(waitForCommit ? increments.size() : 0);
    for (Increment increment : increments) {
      Ack ack = take(pending.get(increment.key()), increment, waitForCommit);
      if (ack != null) {
        acks.add(ack);
      }
    }
    // the whole batch first, then one flush decision: it travels in one flush, not one row now and the rest later
    scheduleFlush();
    return acks;
  }

  /**
   * ack=accepted: takes an increment (into the journal first, when there is one). Returns when it may be answered:
   * at once without a journal, else once the journal holds it (see {@link Journal#committed()}). Throws
   * {@link ApiError} 503 when the coalescer or the journal is full, or shutting down: then nothing was taken.
   */
  public Future<Void> accept(Increment increment) {
    checkContext();
    checkOpen();
    Pending entry = pending.get(increment.key());
    checkRoom(entry == null ? 1 : 0, 0);
    checkSum(entry, increment);
    if (journal == null) {
      take(entry, increment, false);
      scheduleFlush();
      return HELD;
    }
    checkJournalRoom(JournalRecords.estimate(increment));
    long lsn = journal.appendIncrement(increment);
    take(entry, increment, false);
    markJournaled(increment, lsn);
    scheduleFlush();
    return journal.committed();
  }

  /** ack=accepted for increments of distinct counters, all together or none of them (see {@link #accept}). */
  public Future<Void> acceptAll(List<Increment> increments) {
    checkContext();
    checkOpen();
    int newKeys = 0;
    long bytes = 0;
    for (Increment increment : increments) {
      Pending entry = pending.get(increment.key());
      newKeys += entry == null ? 1 : 0;
      checkSum(entry, increment);
      bytes += JournalRecords.estimate(increment);
    }
    checkRoom(newKeys, 0);
    long lsn = -1;
    if (journal != null) {
      checkJournalRoom(bytes);
      lsn = journal.appendIncrements(increments);
    }
    for (Increment increment : increments) {
      take(pending.get(increment.key()), increment, false);
      if (journal != null) {
        markJournaled(increment, lsn);
      }
    }
    scheduleFlush();
    return journal == null ? HELD : journal.committed();
  }

  private void checkJournalRoom(long bytes) {
    try {
      journal.checkRoom(bytes);
    } catch (ApiError full) {
      incrementsRefused++;
      throw full;
    }
  }

  private void markJournaled(Increment increment, long lsn) {
    Pending entry = pending.get(increment.key());
    if (entry.firstLsn < 0) {
      entry.firstLsn = lsn;
    }
  }

  /**
   * What a journal replay carried over, taken before the verticle listens: the deltas are held again (as journaled
   * at the replay snapshot), and each flush formed but not settled is written again under its own id — which finds it
   * if it had committed — before new flushes start; readiness waits for them ({@link WriterHealth#writerReplaying}).
   * Refused (nothing taken) when the journal holds increments of a namespace the configuration no longer declares.
   */
  public void restore(Journal.Recovered recovered) {
    checkContext();
    requireDeclared(recovered);
    long lsn = 0;
    for (Map.Entry<CounterKey, Long> held : recovered.pending().entrySet()) {
      Pending entry = pending.get(held.getKey());
      if (entry == null) {
        if (pending.isEmpty()) {
          firstPendingNanos = nanoClock.getAsLong();
        }
        entry = new Pending();
        pending.put(held.getKey(), entry);
      }
      entry.delta += held.getValue();
      entry.firstLsn = lsn;
    }
    if (!recovered.unsettled().isEmpty()) {
      replaying = recovered.unsettled().size();
      health.writerReplaying(true);
    }
    for (Flush flush : recovered.unsettled()) {
      FlushJob job = FlushJob.replayed(flush, !recovered.neverSent().contains(flush.id()), lsn,
        nanoClock.getAsLong());
      jobs.add(job);
      inFlight++;
      countersInFlight += flush.rows().size();
      writer.run(job).onComplete(answered -> {
        countersInFlight -= flush.rows().size();
        if (--replaying == 0) {
          health.writerReplaying(false);
        }
        flushDone();
      });
    }
    if (!pending.isEmpty()) {
      scheduleFlush();
    }
  }

  /**
   * A namespace removed from the configuration while the journal holds its increments: they could be written nowhere
   * (its slots are gone with it), and dropping them would lose what was answered 202/204. The start is refused,
   * naming each such namespace and what it holds.
   */
  private void requireDeclared(Journal.Recovered recovered) {
    Map<String, long[]> undeclared = new TreeMap<>();
    recovered.pending().forEach((key, delta) -> {
      if (config.namespace(key.type()) == null) {
        undeclared.computeIfAbsent(key.type(), type -> new long[2])[0] += delta;
      }
    });
    for (Flush flush : recovered.unsettled()) {
      for (FlushRow row : flush.rows()) {
        if (config.namespace(row.type()) == null) {
          undeclared.computeIfAbsent(row.type(), type -> new long[2])[1] += row.delta();
        }
      }
    }
    if (undeclared.isEmpty()) {
      return;
    }
    String first = undeclared.keySet().iterator().next();
    StringBuilder held = new StringBuilder();
    undeclared.forEach((type, sums) -> held.append(held.length() == 0 ? "" : ", ").append(type).append(" (")
      .append(sums[0]).append(" pending, ").append(sums[1]).append(" in unsettled flushes)"));
    throw new ConfigException("namespaces." + first, "the journal in " + config.getJournal().getDir() + " holds "
      + "increments of namespaces the configuration no longer declares: " + held + "; declare them again until the "
      + "gateway has written them (readiness 200 and gateway_journal_bytes near 0), then remove them");
  }

  /**
   * A job let go of its journal position: answered, and (database.keepUntilReplicated) its commits on every standby. A
   * job left to the replay is never released and keeps its position.
   */
  private void released(FlushJob job) {
    jobs.remove(job);
    if (drained != null && !drained.future().isComplete()) {
      checkDrained();
    }
  }

  /** The lowest journal position still needed: the pending entries' and the flush jobs' first journaled increment. */
  private long lowestNeeded() {
    long lowest = journal.position();
    for (Pending entry : pending.values()) {
      if (entry.firstLsn >= 0 && entry.firstLsn < lowest) {
        lowest = entry.firstLsn;
      }
    }
    for (FlushJob job : jobs) {
      long position = job.journalPosition();
      if (position >= 0) {
        lowest = Math.min(lowest, position);
      }
    }
    return lowest;
  }

  /** Lock-free only because it is confined: a call from another thread would corrupt the maps, so refuse it. */
  private void checkContext() {
    if (Thread.currentThread() != eventLoop) {
      throw new IllegalStateException("the coalescer must be called on the event loop of the verticle that created it");
    }
  }

  private void checkOpen() {
    if (drained != null) {
      incrementsRefused++;
      throw ApiError.unavailable("shutting_down", "the gateway is shutting down; retry on another instance");
    }
  }

  /**
   * database.keepUntilReplicated: a committed flush the standbys have not confirmed for database.replicationLagMax
   * stops intake, as a full journal does, so what is held stays bounded and nothing is released unreplicated.
   */
  private void checkReplicated() {
    if (writer.replicasLagging()) {
      incrementsRefused++;
      setShedding(true);
      throw ApiError.unavailable("replication_lag", "the database's standbys have not confirmed the increments "
        + "committed within database.replicationLagMax; retry shortly");
    }
  }

  private void checkRoom(int newKeys, int newWaiters) {
    checkReplicated();
    if (newKeys > bounds.maxPendingKeys() || newWaiters > bounds.maxWaitingRequests()) {
      // could never fit, not even in an empty coalescer: a 503 would invite retries that fail forever
      incrementsRefused++;
      throw new ApiError(413, "batch_too_large", "the batch holds more counters than one ingest verticle may hold ("
        + Math.min(bounds.maxPendingKeys(), bounds.maxWaitingRequests()) + "); send smaller batches", "body");
    }
    boolean keysFit = pending.size() + newKeys <= bounds.maxPendingKeys();
    if (keysFit && waiting + newWaiters <= bounds.maxWaitingRequests()) {
      return;
    }
    incrementsRefused++;
    // shed (readiness 503) only when not even one more increment fits; a large batch that does not fit in what is
    // left is refused without telling load balancers to stop sending the small ones
    if (!hasRoomForOne()) {
      setShedding(true);
    }
    throw ApiError.unavailable("overloaded", keysFit
      ? "too many requests are waiting for a commit; retry shortly"
      : "too many counters are waiting to be written; retry shortly");
  }

  private boolean hasRoomForOne() {
    return pending.size() < bounds.maxPendingKeys() && waiting < bounds.maxWaitingRequests();
  }

  private static void checkSum(Pending entry, Increment increment) {
    if (entry != null) {
      long sum = entry.delta + increment.delta();
      if (((entry.delta ^ sum) & (increment.delta() ^ sum)) < 0) {
        throw ApiError.unavailable("overloaded", "this counter's pending delta is at its limit; retry shortly");
      }
    }
  }

  private Ack take(Pending entry, Increment increment, boolean waitForCommit) {
    incrementsTaken++;
    if (entry == null) {
      if (pending.isEmpty()) {
        firstPendingNanos = nanoClock.getAsLong();
      }
      entry = new Pending();
      pending.put(increment.key(), entry);
    }
    entry.delta += increment.delta();
    Ack ack = null;
    if (waitForCommit) {
      ack = new Ack(increment.key(), increment.delta(), nanoClock.getAsLong() + timeoutNanos);
      deadlines.add(ack);
      if (entry.acks == null) {
        entry.acks = new ArrayList<>(4);
      }
      entry.acks.add(ack);
      entry.liveAcks++;
      pendingWaiters++;
      waiting++;
    }
    return ack;
  }

  /**
   * A waiting request timed out. If its delta is still pending it is withdrawn (not counted): 503. If it is in a
   * flush under way the outcome is unknown: 504.
   */
  private void expire(Ack ack) {
    switch (ack.state()) {
      case PENDING -> {
        Pending entry = pending.get(ack.key);
        entry.delta -= ack.delta;
        entry.liveAcks--;
        if (entry.delta == 0 && entry.liveAcks == 0 && entry.firstLsn < 0) {
          pending.remove(ack.key);
        }
        pendingWaiters--;
        waiting--;
        ack.failed(ApiError.unavailable("timeout_withdrawn",
          "the database did not commit in time; the increment was withdrawn and not counted"));
        endSheddingIfRoom();
      }
      case IN_FLIGHT -> ack.timedOutInFlight();
      default -> {
        // already settled
      }
    }
  }

  /**
   * Stops intake and flushes everything pending; completes when nothing is left. With a journal, a drain that finds
   * the database failing (for {@link #LEAVE_TO_JOURNAL_AFTER_FAILING_MS} on end) does not wait: what is pending is in the journal (accepted increments) or is answered now
   * (a waiting request: 503 if its delta was still pending, 504 if in a flush), and a restart replays the journal —
   * unless the journal's directory was removed ({@link Journal#unreachable()}): nothing is kept for a restart then,
   * so the drain goes on until it wrote everything or the stop's timeout ends it.
   */
  public Future<Void> drain() {
    checkContext();
    if (drained == null) {
      drained = Promise.promise();
      flushWhilePossible();
      checkDrained();
      if (journal != null && !drained.future().isComplete()) {
        long[] check = {-1};
        check[0] = timers.periodic(100, () -> {
          if (drained.future().isComplete()) {
            timers.cancel(check[0]);
          } else if (writer.failingForMs() >= LEAVE_TO_JOURNAL_AFTER_FAILING_MS && !journal.unreachable()) {
            // a journal whose directory was removed keeps nothing for a restart: the drain goes on to the timeout
            timers.cancel(check[0]);
            leaveInJournal();
          }
        });
      }
    }
    return drained.future();
  }

  private void leaveInJournal() {
    leftInJournal = true;
    while (!deadlines.isEmpty()) {
      expire(deadlines.pollFirst());
    }
    timers.cancel(sweepTimerId);
    drained.tryComplete();
  }

  /** The journal's directory was removed under it: what is held lives only here and in files no restart finds. */
  public boolean journalUnreachable() {
    return journal != null && journal.unreachable();
  }

  /** The drain gave up on a failing database and left what is pending to the journal's replay. */
  public boolean leftInJournal() {
    return leftInJournal;
  }

  /**
   * After the drain: deletes the flush sources whose flushes are all settled (once the journal forced that), then
   * closes the journal, deleting its segments when the drain wrote everything.
   */
  public Future<Void> close() {
    // what the standbys have not confirmed stays in the journal for the next start, which writes it again by its ids
    writer.stopReplicaPolls();
    return sources.retire().otherwiseEmpty().compose(retired -> journal == null ? Future.succeededFuture()
      : journal.close(!leftInJournal && pending.isEmpty() && inFlight == 0 && writer.heldForReplicas() == 0));
  }

  /** Committed flushes held until every standby has them (database.keepUntilReplicated). */
  int heldForReplicas() {
    return writer.heldForReplicas();
  }

  public int pendingKeys() {
    return pending.size();
  }

  /** Counters not written yet: pending, or in a flush formed and not settled. */
  public int countersHeld() {
    return pending.size() + countersInFlight;
  }

  private void scheduleFlush() {
    if (inFlight >= inFlightLimit.current()) {
      return;
    }
    long waitedMs = (nanoClock.getAsLong() - firstPendingNanos) / 1_000_000;
    if (pending.size() >= options.getMaxKeys() || pendingWaiters > 0 && inFlight == 0 || waitedMs >= options.getMaxDelayMs()) {
      flushNow();
    } else if (timerId < 0) {
      timerId = timers.schedule(Math.max(1, options.getMaxDelayMs() - waitedMs), () -> {
        timerId = -1;
        flushNow();
      });
    }
  }

  private void flushWhilePossible() {
    while (!pending.isEmpty() && inFlight < inFlightLimit.current()) {
      flushNow();
    }
  }

  private void flushNow() {
    if (timerId >= 0) {
      timers.cancel(timerId);
      timerId = -1;
    }
    if (pending.isEmpty() || inFlight >= inFlightLimit.current()) {
      return;
    }
    slots.nextRound();
    List<Ack> answeredAtOnce = null;
    List<FlushRow> rows = new ArrayList<>(Math.min(pending.size(), options.getMaxKeys()));
    List<Ack> acks = new ArrayList<>();
    long firstLsn = Long.MAX_VALUE;
    List<CounterKey> zeroKeys = null;
    // a journaled flush's record stays within what the journal can always place (its reserve on a full disk)
    long recordRoom = journal == null ? Long.MAX_VALUE : journal.flushRecordBytes();
    Iterator<Map.Entry<CounterKey, Pending>> entries = pending.entrySet().iterator();
    while (entries.hasNext() && rows.size() < options.getMaxKeys()) {
      Map.Entry<CounterKey, Pending> next = entries.next();
      CounterKey key = next.getKey();
      if (journal != null) {
        recordRoom -= JournalRecords.rowBytesAtMost(key);
        if (recordRoom < 0 && (!rows.isEmpty() || zeroKeys != null)) {
          break;
        }
      }
      entries.remove();
      Pending entry = next.getValue();
      if (entry.delta != 0) {
        rows.add(new FlushRow(key.type(), key.id(), slotFor(key.type()), entry.delta, key.bucket()));
      }
      if (entry.firstLsn >= 0) {
        firstLsn = Math.min(firstLsn, entry.firstLsn);
        if (entry.delta == 0) {
          zeroKeys = zeroKeys == null ? new ArrayList<>() : zeroKeys;
          zeroKeys.add(key);
        }
      }
      if (entry.liveAcks > 0) {
        pendingWaiters -= entry.liveAcks;
        for (Ack ack : entry.acks) {
          if (ack.state() != Ack.State.PENDING) {
            continue; // withdrawn
          }
          if (entry.delta != 0) {
            acks.add(ack); // in flight from now on: its job marks it so
          } else {
            // the deltas cancelled out: nothing to write, "committed" is already true; answered now, so they never
            // ride along with other counters' rows and inherit a refusal after a split
            answeredAtOnce = answeredAtOnce == null ? new ArrayList<>() : answeredAtOnce;
            answeredAtOnce.add(ack);
          }
        }
      }
    }
    firstPendingNanos = nanoClock.getAsLong();
    if (answeredAtOnce != null) {
      for (Ack ack : answeredAtOnce) {
        waiting--;
        ack.committed();
      }
    }
    endSheddingIfRoom();
    if (rows.isEmpty()) {
      if (zeroKeys != null) {
        journal.taken(zeroKeys);
      }
      return;
    }
    Collections.sort(rows);
    inFlight++;
    flushes++;
    flushRows += rows.size();
    countersInFlight += rows.size();
    Flush flush = new Flush(sources.nextId(), rows);
    boolean journaled = firstLsn != Long.MAX_VALUE;
    // journaled increments in it: recorded (and forced) before the first attempt, so a replay resolves it by its id;
    // the segments holding them stay until it is released
    FlushJob job = FlushJob.formed(flush, acks, zeroKeys == null ? List.of() : zeroKeys, journaled ? firstLsn : -1,
      nanoClock.getAsLong());
    if (journaled) {
      jobs.add(job);
    }
    writer.run(job).onComplete(answered -> {
      countersInFlight -= flush.rows().size();
      waiting -= acks.size();
      flushDone();
    });
  }

  private short slotFor(String type) {
    return slots.slot(config.namespace(type).getSlots());
  }

  /** The same flush on the slots of a new round: a retry need not wait on a row lock a dead writer still holds. */
  private Flush reslot(Flush flush) {
    slots.nextRound();
    return flush.reslotted(row -> row.withSlot(slotFor(row.type())));
  }

  private void flushDone() {
    inFlight--;
    endSheddingIfRoom();
    if (drained != null) {
      flushWhilePossible();
      checkDrained();
    } else if (!pending.isEmpty()) {
      scheduleFlush();
    }
  }

  private void checkDrained() {
    if (pending.isEmpty() && inFlight == 0 && writer.heldForReplicas() == 0) {
      timers.cancel(sweepTimerId);
      drained.tryComplete();
    }
  }

  /**
   * Shedding ends once a new counter and a new waiting request would fit again. Checked where room is made (a flush
   * settled, a waiting request withdrawn), not only when the next flush starts: after a shed, no increment may
   * arrive any more (readiness is false, so load balancers send none), and readiness must recover on its own.
   */
  private void endSheddingIfRoom() {
    if (shedding && hasRoomForOne() && !writer.replicasLagging()) {
      setShedding(false);
    }
  }

  private void setShedding(boolean nowShedding) {
    if (shedding != nowShedding) {
      shedding = nowShedding;
      health.writerShedding(nowShedding);
    }
  }
}
