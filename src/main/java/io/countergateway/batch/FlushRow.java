package io.countergateway.batch;

/** One slot row of a flush: the summed delta of one counter, written to the slot chosen for this flush. */
public record FlushRow(String type, String id, short slot, long delta) implements Comparable<FlushRow> {
  FlushRow withSlot(short newSlot) {
    return new FlushRow(type, id, newSlot, delta);
  }

  /** The one lock order every flush follows, so concurrent flushes cannot deadlock. */
  @Override
  public int compareTo(FlushRow other) {
    int byType = type.compareTo(other.type);
    if (byType != 0) {
      return byType;
    }
    int byId = id.compareTo(other.id);
    return byId != 0 ? byId : Short.compare(slot, other.slot);
  }
}
