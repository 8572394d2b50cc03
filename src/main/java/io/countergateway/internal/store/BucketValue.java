package io.countergateway.internal.store;

import java.math.BigInteger;

/** One bucket of a windowed counter: its start (epoch seconds, UTC) and the sum of its slots. */
public record BucketValue(long start, BigInteger value) {
}
