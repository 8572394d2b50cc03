package io.countergateway.bench;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the writers were told, per counter: increments acknowledged, and increments whose outcome is unknown
 * (a counter's true value must lie between the two bounds). Written from every event loop.
 */
final class CounterBook {
  private final AtomicLongArray acknowledged;
  private final AtomicLongArray unknown;
  private final LongAdder acknowledgedTotal = new LongAdder();
  private final LongAdder unknownTotal = new LongAdder();
  private final LongAdder failedTotal = new LongAdder();

  CounterBook(int counters) {
    acknowledged = new AtomicLongArray(counters);
    unknown = new AtomicLongArray(counters);
  }

  int counters() {
    return acknowledged.length();
  }

  void acknowledged(int[] counters) {
    for (int counter : counters) {
      acknowledged.incrementAndGet(counter);
    }
    acknowledgedTotal.add(counters.length);
  }

  void unknown(int[] counters) {
    for (int counter : counters) {
      unknown.incrementAndGet(counter);
    }
    unknownTotal.add(counters.length);
  }

  void failed(int[] counters) {
    failedTotal.add(counters.length);
  }

  long acknowledged(int counter) {
    return acknowledged.get(counter);
  }

  long unknown(int counter) {
    return unknown.get(counter);
  }

  long acknowledgedTotal() {
    return acknowledgedTotal.sum();
  }

  long unknownTotal() {
    return unknownTotal.sum();
  }

  long failedTotal() {
    return failedTotal.sum();
  }
}
