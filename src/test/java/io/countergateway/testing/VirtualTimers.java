package io.countergateway.testing;

import io.countergateway.internal.time.Timers;
import io.vertx.core.Context;
import io.vertx.core.Vertx;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * {@link Timers} on time that moves only when the test says: {@link #advance} runs every action that falls due, in
 * the order of its time, each on the event loop that set it (as Vert.x does), and waits for it; an action that sets a
 * timer due before the end of the advance runs in the same advance. The clocks read the virtual time.
 */
public final class VirtualTimers implements Timers {
  private static final class Entry {
    final long id;
    final long periodNanos;
    final Runnable action;
    final Context context;
    long dueNanos;
    volatile boolean cancelled;

    Entry(long id, long dueNanos, long periodNanos, Runnable action, Context context) {
      this.id = id;
      this.dueNanos = dueNanos;
      this.periodNanos = periodNanos;
      this.action = action;
      this.context = context;
    }
  }

  private final long epochMillis;
  private final PriorityQueue<Entry> queue = new PriorityQueue<>(
    Comparator.<Entry>comparingLong(entry -> entry.dueNanos).thenComparingLong(entry -> entry.id));
  private final Map<Long, Entry> live = new HashMap<>();
  private long nowNanos = TimeUnit.HOURS.toNanos(1);
  private long nextId = 1;

  /** Wall time starting at {@code start}. */
  public VirtualTimers(Instant start) {
    this.epochMillis = start.toEpochMilli() - TimeUnit.NANOSECONDS.toMillis(nowNanos);
  }

  public VirtualTimers() {
    this(Instant.parse("2026-01-01T00:00:00Z"));
  }

  @Override
  public long schedule(long delayMs, Runnable action) {
    return add(delayMs, 0, action);
  }

  @Override
  public long periodic(long periodMs, Runnable action) {
    return add(periodMs, TimeUnit.MILLISECONDS.toNanos(Math.max(1, periodMs)), action);
  }

  private synchronized long add(long delayMs, long periodNanos, Runnable action) {
    Entry entry = new Entry(nextId++, nowNanos + TimeUnit.MILLISECONDS.toNanos(Math.max(1, delayMs)), periodNanos,
      action, Vertx.currentContext());
    queue.add(entry);
    live.put(entry.id, entry);
    return entry.id;
  }

  @Override
  public synchronized void cancel(long id) {
    Entry entry = live.remove(id);
    if (entry != null) {
      entry.cancelled = true;
      queue.remove(entry);
    }
  }

  @Override
  public synchronized long nanoTime() {
    return nowNanos;
  }

  @Override
  public synchronized long currentTimeMillis() {
    return epochMillis + TimeUnit.NANOSECONDS.toMillis(nowNanos);
  }

  /** How many timers are set and not yet run out (a periodic one stays until cancelled). */
  public synchronized int pending() {
    return live.size();
  }

  /**
   * Moves time on by {@code by}, running each action due on the way at its time, and returns once they have run. Call
   * it from the test's thread, not from an event loop an action runs on.
   */
  public void advance(Duration by) {
    long target;
    synchronized (this) {
      target = nowNanos + by.toNanos();
    }
    while (true) {
      Entry next;
      synchronized (this) {
        next = queue.peek();
        if (next == null || next.dueNanos > target) {
          nowNanos = target;
          return;
        }
        queue.poll();
        nowNanos = next.dueNanos;
        if (next.periodNanos > 0) {
          next.dueNanos += next.periodNanos;
          queue.add(next);
        } else {
          live.remove(next.id);
        }
      }
      run(next);
    }
  }

  /**
   * Moves time on by {@code step} at each look until {@code condition} holds, for what comes of timers and of other
   * threads together (a retry every second that succeeds once a worker thread made room); fails naming {@code what}
   * when it does not hold within {@link Eventually#WITHIN} of real time.
   */
  public void advanceUntil(String what, Duration step, BooleanSupplier condition) {
    Eventually.until(what, () -> {
      if (condition.getAsBoolean()) {
        return true;
      }
      advance(step);
      return condition.getAsBoolean();
    });
  }

  private void run(Entry entry) {
    if (entry.context == null || entry.context == Vertx.currentContext()) {
      entry.action.run();
      return;
    }
    // a cancel that comes between the pick and the turn of the loop still holds
    CompletableFuture<Void> ran = new CompletableFuture<>();
    entry.context.runOnContext(v -> {
      try {
        if (!entry.cancelled) {
          entry.action.run();
        }
        ran.complete(null);
      } catch (Throwable e) {
        ran.completeExceptionally(e);
      }
    });
    try {
      ran.get(TestBounds.millis(20), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
