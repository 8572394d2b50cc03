package io.countergateway.internal.beacon;

/**
 * A token bucket: {@code capacity} tokens, refilled at {@code perSecond}; one token per request. Time is passed in
 * (nanoseconds), so tests move it. Thread-safe: buckets are shared by the gateway's event loops, and a lock held for a
 * few arithmetic operations on one client's bucket is never contended by another client.
 *
 * <p>Why not Bucket4j's local bucket: a bucket per API token is a few arithmetic operations under its own lock; a
 * Bucket4j bucket is an object graph (state, configuration reference, synchronisation strategy) for the same. The
 * beacon limits keep their buckets as fields of their records instead ({@link ClientLimits}), allocated once.
 */
public final class TokenBucket {
  private final double capacity;
  private final double perNano;
  private double tokens;
  private long lastNanos;

  public TokenBucket(double capacity, double perSecond, long nowNanos) {
    this.capacity = capacity;
    this.perNano = perSecond / 1e9;
    this.tokens = capacity;
    this.lastNanos = nowNanos;
  }

  /** 0 when a token was taken; else how many nanoseconds until one is there (nothing taken). */
  public synchronized long take(long nowNanos) {
    refill(nowNanos);
    if (tokens >= 1) {
      tokens -= 1;
      return 0;
    }
    return perNano <= 0 ? Long.MAX_VALUE : (long) Math.ceil((1 - tokens) / perNano);
  }

  private void refill(long nowNanos) {
    long elapsed = nowNanos - lastNanos;
    if (elapsed > 0) {
      tokens = Math.min(capacity, tokens + elapsed * perNano);
      lastNanos = nowNanos;
    }
  }
}
