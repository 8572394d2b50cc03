package io.countergateway.testing;

import io.countergateway.config.Knobs;
import io.countergateway.config.MemoryBounds.Bound;

import java.util.Map;
import java.util.function.Supplier;

/**
 * Memory bounds pinned for a test that fills a holder on purpose (a coalescer of 2 counters, a body budget of 2 MiB):
 * the knobs of {@link Knobs#bound} set while {@code action} reads its configuration, and cleared after, so no other
 * test sees them.
 */
public final class PinnedBounds {
  private PinnedBounds() {
  }

  public static <T> T with(Map<Bound, Long> bounds, Supplier<T> action) {
    bounds.forEach((bound, value) -> System.setProperty(Knobs.PREFIX + bound.label(), String.valueOf(value)));
    try {
      return action.get();
    } finally {
      bounds.keySet().forEach(bound -> System.clearProperty(Knobs.PREFIX + bound.label()));
    }
  }
}
