package io.countergateway.internal.write;

import java.util.PriorityQueue;

/**
 * {@link Timers} on virtual time: nothing runs until the test moves the time past it, and then in the order it falls
 * due. Confined to the event loop of the code under test, like the timers it stands for.
 */
final class VirtualTimers implements Timers {
  private record Due(long at, long id, Runnable action) {
  }

  private final PriorityQueue<Due> due = new PriorityQueue<>((a, b) -> a.at != b.at ? Long.compare(a.at, b.at)
    : Long.compare(a.id, b.id));
  private long now;
  private long nextId;

  @Override
  public long schedule(long delayMs, Runnable action) {
    long id = nextId++;
    due.add(new Due(now + Math.max(1, delayMs), id, action));
    return id;
  }

  @Override
  public void cancel(long id) {
    due.removeIf(timer -> timer.id == id);
  }

  /** Moves the time on by {@code ms}, running every timer due by then (those they set included). */
  void advance(long ms) {
    long until = now + ms;
    while (!due.isEmpty() && due.peek().at <= until) {
      Due next = due.poll();
      now = next.at;
      next.action.run();
    }
    now = until;
  }

  /** Timers set and not yet run. */
  int pending() {
    return due.size();
  }
}
