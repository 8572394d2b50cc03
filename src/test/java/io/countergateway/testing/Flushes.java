package io.countergateway.testing;

import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.Flush;
import io.countergateway.internal.store.FlushId;
import io.countergateway.internal.store.FlushRow;
import io.countergateway.internal.store.WriteOutcome;
import io.vertx.core.Future;

import java.util.List;
import java.util.UUID;

/** Flushes written straight to a store, as a flush writer would: its source's row first, then the flush. */
public final class Flushes {
  private Flushes() {
  }

  /** A fresh source named {@code <prefix><random>-0}, within the 64 characters of the source column. */
  public static String source(String prefix) {
    return prefix + UUID.randomUUID().toString().substring(0, 8) + "-0";
  }

  /** The {@code sequence}-th flush of {@code source}. */
  public static Flush of(String source, long sequence, List<FlushRow> rows) {
    return new Flush(FlushId.formed(source, sequence), rows);
  }

  /** Makes the flush's source row (nothing when it is there), then writes the flush. */
  public static Future<WriteOutcome> write(CounterStore store, Flush flush) {
    return store.registerSource(flush.id().source()).compose(registered -> store.write(flush));
  }
}
