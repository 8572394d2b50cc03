package io.countergateway.internal.write;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Increments taken per namespace since start, and the sum of their deltas, for the whole gateway: what a dashboard
 * turns into a live rate and a total, and what {@code gateway_namespace_increments_total} exports. Written by every
 * ingest verticle's write path, two adders per namespace, so the hot path pays a map read and uncontended adds.
 */
public final class NamespaceTally {
  private final Map<String, LongAdder> taken = new ConcurrentHashMap<>();
  private final Map<String, LongAdder> values = new ConcurrentHashMap<>();

  void add(String namespace, long increments, long value) {
    taken.computeIfAbsent(namespace, n -> new LongAdder()).add(increments);
    values.computeIfAbsent(namespace, n -> new LongAdder()).add(value);
  }

  /** The sum of the deltas taken into {@code namespace} so far: what its counters grew by since start. */
  public long values(String namespace) {
    LongAdder adder = values.get(namespace);
    return adder == null ? 0 : adder.sum();
  }

  /** Increments taken into {@code namespace} so far (a batch counts once per counter it changes). */
  public long taken(String namespace) {
    LongAdder adder = taken.get(namespace);
    return adder == null ? 0 : adder.sum();
  }
}
