package io.countergateway.config;

import io.vertx.core.VertxOptions;

/**
 * What the gateway's memory bounds are derived from ({@link MemoryBudget#derive}): the maximum heap, the cores (one
 * ingest verticle per core unless {@code http.instances} says otherwise) and Vert.x's event loops (two per core).
 */
public record Machine(long maxHeapBytes, int processors, int eventLoops) {
  public Machine {
    if (maxHeapBytes <= 0 || processors < 1 || eventLoops < 1) {
      throw new IllegalArgumentException("a machine has a heap, a core and an event loop: " + maxHeapBytes + ", "
        + processors + ", " + eventLoops);
    }
  }

  /** This JVM: {@code Runtime.maxMemory()}, its processors and Vert.x's default number of event loops. */
  public static Machine current() {
    return new Machine(Runtime.getRuntime().maxMemory(), Math.max(1, Runtime.getRuntime().availableProcessors()),
      VertxOptions.DEFAULT_EVENT_LOOP_POOL_SIZE);
  }

  /** A machine of {@code processors} cores with a heap of {@code maxHeapBytes} and two event loops per core. */
  public static Machine of(long maxHeapBytes, int processors) {
    return new Machine(maxHeapBytes, processors, 2 * processors);
  }
}
