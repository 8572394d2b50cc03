package io.countergateway.batch;

import io.countergateway.GatewayState;
import io.countergateway.config.BatchingOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.model.Increment;
import io.countergateway.store.CounterStore;
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
import java.util.function.IntSupplier;

/**
 * Sums deltas per counter and turns them into few, large, ordered flushes (DESIGN §3). Confined to one event
 * loop: every method must be called on the owning verticle's context, so there are no locks.
 *
 * <p>A flush starts when the oldest pending delta is {@code maxDelayMs} old, when {@code maxKeys} counters are
 * pending, or at once when a request waits for a commit and no flush is in flight. While {@code maxInFlight}
 * flushes run, the next batch grows: batch size follows load (group commit).
 */
public final class Coalescer {
  private final Vertx vertx;
  private final FlushWriter writer;
  private final GatewayConfig config;
  private final BatchingOptions options;
  private final GatewayState state;
  private final SlotPicker slots;
  private final String flushIdPrefix;
  private final long timeoutNanos;

  private LinkedHashMap<CounterKey, Pending> pending = new LinkedHashMap<>();
  private int pendingWaiters;
  private int waiting;
  private long incrementsTaken;
  private long incrementsRefused;
  private long flushes;
  private long flushRows;
  private int inFlight;
  private long flushSeq;
  private long timerId = -1;
  private long sweepTimerId = -1;
  private long firstPendingNanos;
  private final ArrayDeque<Ack> deadlines = new ArrayDeque<>();
  private boolean shedding;
  private Promise<Void> drained;

  private static final class Pending {
    long delta;
    List<Ack> acks;
  }

  /** {@code lane}: the replica lane this coalescer writes (see {@link SlotPicker}); read at every flush. */
  public Coalescer(Vertx vertx, CounterStore store, GatewayConfig config, GatewayState state, int instanceIndex, IntSupplier lane) {
    this.vertx = vertx;
    this.writer = new FlushWriter(vertx, store, config.getBatching(), state);
    this.config = config;
    this.options = config.getBatching();
    this.state = state;
    this.slots = new SlotPicker(lane, config.getBatching().getMaxInFlight());
    this.flushIdPrefix = Long.toUnsignedString(java.util.concurrent.ThreadLocalRandom.current().nextLong(), 36) + "-" + instanceIndex + "-";
    this.timeoutNanos = config.getLimits().getRequestTimeoutMs() * 1_000_000L;
  }

  /** Exposes this coalescer's counters; they are read by the scrape thread, a little stale at worst. */
  public void registerMetrics(MeterRegistry registry, int index) {
    Tags tags = Tags.of("verticle", Integer.toString(index));
    FunctionCounter.builder("gateway.increments.taken", this, c -> c.incrementsTaken).tags(tags)
      .description("increments taken into the coalescer").register(registry);
    FunctionCounter.builder("gateway.increments.refused", this, c -> c.incrementsRefused).tags(tags)
      .description("increments refused with 503 because the coalescer was full or draining").register(registry);
    FunctionCounter.builder("gateway.flushes", this, c -> c.flushes).tags(tags).register(registry);
    FunctionCounter.builder("gateway.flush.rows", this, c -> c.flushRows).tags(tags).register(registry);
    Gauge.builder("gateway.pending.counters", this, c -> c.pending.size()).tags(tags).register(registry);
    Gauge.builder("gateway.waiting.requests", this, c -> c.waiting).tags(tags).register(registry);
    writer.registerMetrics(registry, tags);
  }

  /** Starts the deadline sweep; waiting requests share one timeout, so they expire in arrival order. */
  public void start() {
    long period = Math.max(5, Math.min(100, config.getLimits().getRequestTimeoutMs() / 10));
    sweepTimerId = vertx.setPeriodic(period, id -> expireOverdue());
  }

  private void expireOverdue() {
    long now = System.nanoTime();
    while (!deadlines.isEmpty() && (deadlines.peekFirst().state == Ack.State.DONE || deadlines.peekFirst().deadline - now <= 0)) {
      Ack ack = deadlines.pollFirst();
      if (ack.state != Ack.State.DONE) {
        expire(ack);
      }
    }
  }

  /**
   * Takes an increment. Returns the {@link Ack} to wait on when {@code waitForCommit}, else null once the delta is
   * held. Throws {@link ApiError} 503 when the coalescer is full or shutting down: then nothing was taken.
   */
  public Ack add(Increment increment, boolean waitForCommit) {
    checkOpen();
    Pending entry = pending.get(increment.key());
    checkRoom(entry == null ? 1 : 0, waitForCommit ? 1 : 0);
    checkSum(entry, increment);
    return take(entry, increment, waitForCommit);
  }

  /**
   * Takes increments of distinct counters all together or none of them (a batch request is all or nothing).
   */
  public List<Ack> addAll(List<Increment> increments, boolean waitForCommit) {
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
    return acks;
  }

  private void checkOpen() {
    if (drained != null) {
      incrementsRefused++;
      throw ApiError.unavailable("shutting_down", "the gateway is shutting down; retry on another instance");
    }
  }

  private void checkRoom(int newKeys, int newWaiters) {
    if (pending.size() + newKeys > options.getMaxPendingKeys()) {
      incrementsRefused++;
      setShedding(true);
      throw ApiError.unavailable("overloaded", "too many counters are waiting to be written; retry shortly");
    }
    if (waiting + newWaiters > options.getMaxWaitingRequests()) {
      incrementsRefused++;
      setShedding(true);
      throw ApiError.unavailable("overloaded", "too many requests are waiting for a commit; retry shortly");
    }
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
        firstPendingNanos = System.nanoTime();
      }
      entry = new Pending();
      pending.put(increment.key(), entry);
    }
    entry.delta += increment.delta();
    Ack ack = null;
    if (waitForCommit) {
      ack = new Ack(increment.key(), increment.delta(), System.nanoTime() + timeoutNanos);
      deadlines.add(ack);
      if (entry.acks == null) {
        entry.acks = new ArrayList<>(4);
      }
      entry.acks.add(ack);
      pendingWaiters++;
      waiting++;
    }
    scheduleFlush();
    return ack;
  }

  /**
   * A waiting request timed out. If its delta is still pending it is withdrawn (not counted): 503. If it is in a
   * flush under way the outcome is unknown: 504.
   */
  private void expire(Ack ack) {
    switch (ack.state) {
      case PENDING -> {
        Pending entry = pending.get(ack.key);
        entry.delta -= ack.delta;
        entry.acks.remove(ack);
        if (entry.delta == 0 && entry.acks.isEmpty()) {
          pending.remove(ack.key);
        }
        pendingWaiters--;
        settle(ack);
        endSheddingIfRoom();
        ack.promise.tryFail(ApiError.unavailable("timeout_withdrawn",
          "the database did not commit in time; the increment was withdrawn and not counted"));
      }
      case IN_FLIGHT -> ack.promise.tryFail(new ApiError(504, "outcome_unknown",
        "the increment was being written when the request timed out; it may or may not be counted", null));
      default -> {
        // already settled
      }
    }
  }

  /** Stops intake and flushes everything pending; completes when nothing is left. */
  public Future<Void> drain() {
    if (drained == null) {
      drained = Promise.promise();
      flushWhilePossible();
      checkDrained();
    }
    return drained.future();
  }

  public int pendingKeys() {
    return pending.size();
  }

  private void scheduleFlush() {
    if (inFlight >= options.getMaxInFlight()) {
      return;
    }
    long waitedMs = (System.nanoTime() - firstPendingNanos) / 1_000_000;
    if (pending.size() >= options.getMaxKeys() || pendingWaiters > 0 && inFlight == 0 || waitedMs >= options.getMaxDelayMs()) {
      flushNow();
    } else if (timerId < 0) {
      timerId = vertx.setTimer(Math.max(1, options.getMaxDelayMs() - waitedMs), id -> {
        timerId = -1;
        flushNow();
      });
    }
  }

  private void flushWhilePossible() {
    while (!pending.isEmpty() && inFlight < options.getMaxInFlight()) {
      flushNow();
    }
  }

  private void flushNow() {
    if (timerId >= 0) {
      vertx.cancelTimer(timerId);
      timerId = -1;
    }
    if (pending.isEmpty() || inFlight >= options.getMaxInFlight()) {
      return;
    }
    slots.nextRound();
    List<FlushRow> rows = new ArrayList<>(Math.min(pending.size(), options.getMaxKeys()));
    List<Ack> acks = new ArrayList<>();
    Iterator<Map.Entry<CounterKey, Pending>> entries = pending.entrySet().iterator();
    while (entries.hasNext() && rows.size() < options.getMaxKeys()) {
      Map.Entry<CounterKey, Pending> next = entries.next();
      entries.remove();
      CounterKey key = next.getKey();
      Pending entry = next.getValue();
      if (entry.delta != 0) {
        rows.add(new FlushRow(key.type(), key.id(), slots.slot(config.namespace(key.type()).getSlots()), entry.delta));
      }
      if (entry.acks != null) {
        for (Ack ack : entry.acks) {
          ack.state = Ack.State.IN_FLIGHT;
          acks.add(ack);
        }
        pendingWaiters -= entry.acks.size();
      }
    }
    firstPendingNanos = System.nanoTime();
    if (pending.size() < options.getMaxPendingKeys()) {
      setShedding(false);
    }
    if (rows.isEmpty()) {
      // the deltas cancelled out: nothing to write, and "committed" is already true
      for (Ack ack : acks) {
        settle(ack);
        ack.promise.tryComplete();
      }
      return;
    }
    Collections.sort(rows);
    inFlight++;
    flushes++;
    flushRows += rows.size();
    writer.write(new Flush(flushIdPrefix + Long.toString(flushSeq++, 36), rows), acks).onComplete(settled -> {
      waiting -= acks.size();
      flushDone();
    });
  }

  private void settle(Ack ack) {
    ack.state = Ack.State.DONE;
    waiting--;
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
    if (pending.isEmpty() && inFlight == 0) {
      vertx.cancelTimer(sweepTimerId);
      drained.tryComplete();
    }
  }

  /**
   * Shedding ends once a new counter and a new waiting request would fit again. Checked where room is made (a flush
   * settled, a waiting request withdrawn), not only when the next flush starts: after a shed, no increment may
   * arrive any more (readiness is false, so load balancers send none), and readiness must recover on its own.
   */
  private void endSheddingIfRoom() {
    if (shedding && pending.size() < options.getMaxPendingKeys() && waiting < options.getMaxWaitingRequests()) {
      setShedding(false);
    }
  }

  private void setShedding(boolean nowShedding) {
    if (shedding != nowShedding) {
      shedding = nowShedding;
      state.writerShedding(nowShedding);
    }
  }
}
