package io.countergateway.config;

import java.util.EnumMap;
import java.util.Map;

/**
 * How many of each thing the gateway's bounded holders keep at most: derived from the heap by {@link MemoryBudget}
 * so that all of them full at once stay within {@link MemoryBudget#HEAP_SHARE} of it, not configured one by one.
 * Only {@code limits.maxConnections} may be set (the open-files limit is a reason of its own); a test may pin any of
 * them with a knob ({@link Knobs#bound}).
 */
public final class MemoryBounds {
  /** One bound, by the name it goes by: its knob {@code -Dcountergateway.<name>} and the log's start line. */
  public enum Bound {
    /** Counters one ingest verticle holds pending; new ones get 503 past it. */
    PENDING_KEYS("batching.maxPendingKeys"),
    /** Committing requests one ingest verticle holds waiting; more get 503. */
    WAITING_REQUESTS("batching.maxWaitingRequests"),
    /** Request body bytes the whole gateway holds at once; a body past it gets 503 and a close. */
    BODY_BYTES_IN_FLIGHT("limits.maxBodyBytesInFlight"),
    /** Open client connections of the whole gateway; more are closed at accept. */
    CONNECTIONS("limits.maxConnections"),
    /** Requests with an Idempotency-Key one ingest verticle writes at once; more get 503. */
    IDEMPOTENT_IN_FLIGHT("idempotency.maxInFlight"),
    /** Client addresses whose beacon limits are remembered (those holding no limit forgotten first). */
    TRACKED_CLIENTS("beacon.maxTrackedClients"),
    /** Ids the public namespaces remember as existing, all together (each an equal share): never folded by a budget. */
    KNOWN_IDS("beacon.maxKnownIds"),
    /** Bytes of user-agent verdicts each event loop remembers (least recently used forgotten first). */
    USER_AGENT_CACHE_BYTES("beacon.userAgentCacheBytes"),
    /** Counter-buckets one ingest verticle holds sketches for between merges (full: the eldest merges early). */
    PENDING_SKETCHES("uniques.maxPendingSketches"),
    /** Counters each read verticle's cache holds (with {@code reads.cacheMaxAge} > 0); past it the cache starts afresh. */
    READ_CACHE_COUNTERS("reads.cacheMaxCounters");

    private final String label;

    Bound(String label) {
      this.label = label;
    }

    /** E.g. {@code batching.maxPendingKeys}. */
    public String label() {
      return label;
    }
  }

  private final Map<Bound, Long> values;
  private final Map<Bound, String> setBy;

  MemoryBounds(Map<Bound, Long> values, Map<Bound, String> setBy) {
    this.values = new EnumMap<>(values);
    this.setBy = new EnumMap<>(setBy);
  }

  public long get(Bound bound) {
    return values.get(bound);
  }

  /**
   * What fixed {@code bound}: empty when it is derived from the heap, else the key or knob that set it, or the key
   * whose value it may not go below (e.g. {@code limits.maxBatchIncrements}): what an operator changes.
   */
  public String setBy(Bound bound) {
    return setBy.getOrDefault(bound, "");
  }

  public int maxPendingKeys() {
    return (int) get(Bound.PENDING_KEYS);
  }

  public int maxWaitingRequests() {
    return (int) get(Bound.WAITING_REQUESTS);
  }

  public int maxBodyBytesInFlight() {
    return (int) get(Bound.BODY_BYTES_IN_FLIGHT);
  }

  public int maxConnections() {
    return (int) get(Bound.CONNECTIONS);
  }

  public int maxIdempotentInFlight() {
    return (int) get(Bound.IDEMPOTENT_IN_FLIGHT);
  }

  public int maxTrackedClients() {
    return (int) get(Bound.TRACKED_CLIENTS);
  }

  public int maxKnownIds() {
    return (int) get(Bound.KNOWN_IDS);
  }

  public int userAgentCacheBytes() {
    return (int) get(Bound.USER_AGENT_CACHE_BYTES);
  }

  public int maxPendingSketches() {
    return (int) get(Bound.PENDING_SKETCHES);
  }

  public int readCacheMaxCounters() {
    return (int) get(Bound.READ_CACHE_COUNTERS);
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder();
    for (Bound bound : Bound.values()) {
      text.append(text.isEmpty() ? "" : ", ").append(bound.label()).append('=').append(get(bound));
    }
    return text.toString();
  }
}
