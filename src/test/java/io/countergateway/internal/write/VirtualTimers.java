package io.countergateway.internal.write;

import io.countergateway.internal.time.Timers;

import java.util.HashMap;
import java.util.Map;
import java.util.PriorityQueue;

/**
 * {@link Timers} on virtual time: nothing runs until the test moves the time past it, and then in the order it falls
 * due. Its clock reads the same virtual time ({@link #nanoTime}, {@link #currentTimeMillis}) for the code that measures it. Confined
 * to the event loop of the code under test, like the timers it stands for.
 */
final class VirtualTimers implements Timers {
  private record Due(long at, long id, long period, Runnable action) {
  }

  private final PriorityQueue<Due> due = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
    : Long.compare(a.id, b.id));
  /** The timers set and not cancelled, by id. */
  private final Map<Long, Due> live = new HashMap<>();
  private long now;
  private long nextId;

  /** Time starting at 0 ms. */
  VirtualTimers() {
    this(0);
  }

  /** Time starting at {@code startMs}: where another run's clock left it, for what outlives a run. */
  VirtualTimers(long startMs) {
    this.now = startMs;
  }

  @Override
  public long schedule(long delayMs, Runnable action) {
    return add(new Due(now + Math.max(1, delayMs), nextId++, 0, action));
  }

  @Override
  public long periodic(long periodMs, Runnable action) {
    long period = Math.max(1, periodMs);
    return add(new Due(now + period, nextId++, period, action));
  }

  private long add(Due timer) {
    due.add(timer);
    live.put(timer.id, timer);
    return timer.id;
  }

  @Override
  public void cancel(long id) {
    Due timer = live.remove(id);
    if (timer != null) {
      due.remove(timer);
    }
  }

  /** Moves the time on by {@code ms}, running every timer due by then (those they set included). */
  void advance(long ms) {
    long until = now + ms;
    while (!due.isEmpty() && due.peek().at <= until) {
      Due next = due.poll();
      now = next.at;
      if (next.period == 0) {
        live.remove(next.id);
      }
      next.action.run();
      if (next.period > 0 && live.containsKey(next.id)) {
        add(new Due(now + next.period, next.id, next.period, next.action));
      }
    }
    now = until;
  }

  /** When the next timer falls due, in this clock's milliseconds; {@link Long#MAX_VALUE} with none set. */
  long nextDue() {
    return due.isEmpty() ? Long.MAX_VALUE : due.peek().at;
  }

  /** Virtual time as {@link System#nanoTime()} reads. */
  @Override
  public long nanoTime() {
    return now * 1_000_000;
  }

  /** Virtual time in milliseconds, as a wall clock reads. */
  @Override
  public long currentTimeMillis() {
    return now;
  }
}
