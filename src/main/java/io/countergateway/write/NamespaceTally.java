package io.countergateway.write;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Increments taken per namespace since start, for the whole gateway: what a dashboard turns into a live rate and what
 * {@code gateway_namespace_increments_total} exports. Written by every ingest verticle's write path, one adder per
 * namespace, so the hot path pays a map read and an uncontended add.
 */
public final class NamespaceTally {
  private final Map<String, LongAdder> taken = new ConcurrentHashMap<>();

  void add(String namespace, long increments) {
    taken.computeIfAbsent(namespace, n -> new LongAdder()).add(increments);
  }

  /** Increments taken into {@code namespace} so far (a batch counts once per counter it changes). */
  public long taken(String namespace) {
    LongAdder adder = taken.get(namespace);
    return adder == null ? 0 : adder.sum();
  }
}
