package io.countergateway.internal.store;

import io.countergateway.internal.model.CounterKey;

/**
 * One slot row of a flush: the summed delta of one counter, written to the slot chosen for this flush. A windowed
 * counter's row also names its bucket (epoch seconds) and goes to the windows table; {@link CounterKey#PLAIN} otherwise.
 */
public record FlushRow(String type, String id, short slot, long delta, long bucket) implements Comparable<FlushRow> {
  public FlushRow(String type, String id, short slot, long delta) {
    this(type, id, slot, delta, CounterKey.PLAIN);
  }

  public boolean windowed() {
    return bucket != CounterKey.PLAIN;
  }

  public FlushRow withSlot(short newSlot) {
    return new FlushRow(type, id, newSlot, delta, bucket);
  }

  /** The one lock order every flush follows (the primary key's), so concurrent flushes cannot deadlock. */
  @Override
  public int compareTo(FlushRow other) {
    int byType = type.compareTo(other.type);
    if (byType != 0) {
      return byType;
    }
    int byId = id.compareTo(other.id);
    if (byId != 0) {
      return byId;
    }
    int byBucket = Long.compare(bucket, other.bucket);
    return byBucket != 0 ? byBucket : Short.compare(slot, other.slot);
  }
}
