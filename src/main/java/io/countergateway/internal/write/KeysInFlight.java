package io.countergateway.internal.write;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Idempotency keys whose request this gateway is writing now, on any of its event loops: one set per gateway, so a
 * repeat that lands on another ingest verticle while the first is in flight is refused (409) as on the same one.
 */
public final class KeysInFlight {
  private final Set<String> keys = ConcurrentHashMap.newKeySet();

  /** False when a request with this key is in flight here already. */
  boolean claim(String key) {
    return keys.add(key);
  }

  void release(String key) {
    keys.remove(key);
  }
}
