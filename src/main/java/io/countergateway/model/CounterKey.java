package io.countergateway.model;

/** One counter: its namespace (record type) and the id of what is counted. */
public record CounterKey(String type, String id) implements Comparable<CounterKey> {
  @Override
  public int compareTo(CounterKey other) {
    int byType = type.compareTo(other.type);
    return byType != 0 ? byType : id.compareTo(other.id);
  }
}
