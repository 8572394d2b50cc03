package io.countergateway;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What readiness is made of, shared by all verticles of one gateway: whether it is shutting down, how many
 * coalescers currently fail to write, and how many are shedding load. Written from several event loops.
 */
public final class GatewayState {
  private volatile boolean draining;
  private final AtomicInteger failingWriters = new AtomicInteger();
  private final AtomicInteger sheddingWriters = new AtomicInteger();
  /** Idempotency keys whose request this gateway is writing now, on any of its event loops. */
  private final Set<String> keysInFlight = ConcurrentHashMap.newKeySet();

  /** False when a request with this key is in flight here already (the repeat gets 409). */
  public boolean claimKey(String key) {
    return keysInFlight.add(key);
  }

  public void releaseKey(String key) {
    keysInFlight.remove(key);
  }

  public boolean isDraining() {
    return draining;
  }

  public void startDraining() {
    draining = true;
  }

  public boolean writersHealthy() {
    return failingWriters.get() == 0 && sheddingWriters.get() == 0;
  }

  public void writerFailing(boolean nowFailing) {
    failingWriters.addAndGet(nowFailing ? 1 : -1);
  }

  public void writerShedding(boolean nowShedding) {
    sheddingWriters.addAndGet(nowShedding ? 1 : -1);
  }
}
