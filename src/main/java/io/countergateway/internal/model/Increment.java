package io.countergateway.internal.model;

/** A validated increment: the namespace is declared, the id and delta are within limits. */
public record Increment(CounterKey key, long delta) {
}
