package io.countergateway.internal.model;

/**
 * One counter: its namespace (record type), the id of what is counted, and for a windowed namespace the start of its
 * time bucket (epoch seconds; {@link #PLAIN} otherwise). The bucket is part of the key, so the coalescer sums each
 * bucket apart and one flush may carry many buckets.
 */
public record CounterKey(String type, String id, long bucket) implements Comparable<CounterKey> {
  /** The bucket of a counter of a plain (not windowed) namespace. */
  public static final long PLAIN = Long.MIN_VALUE;

  public CounterKey(String type, String id) {
    this(type, id, PLAIN);
  }

  public boolean windowed() {
    return bucket != PLAIN;
  }

  @Override
  public int compareTo(CounterKey other) {
    int byType = type.compareTo(other.type);
    if (byType != 0) {
      return byType;
    }
    int byId = id.compareTo(other.id);
    return byId != 0 ? byId : Long.compare(bucket, other.bucket);
  }
}
