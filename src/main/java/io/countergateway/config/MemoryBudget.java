package io.countergateway.config;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The heap the gateway's bounded holders take when every one of them is full at once: what a hostile client can make
 * it hold (README "Sizing"). A start whose worst case passes {@link #HEAP_SHARE} of the maximum heap is refused,
 * rather than run until a crowd of addresses or a database outage exhausts the heap and the JVM exits
 * ({@code -XX:+ExitOnOutOfMemoryError}). The rest of the heap is what the allocation rate needs between collections.
 *
 * <p>Entry sizes are estimated from the objects' layout on a 64-bit JVM with compressed pointers (12-byte headers,
 * 4-byte references, Latin-1 strings at one byte a character), ids and keys at their configured longest.
 */
public final class MemoryBudget {
  /** Of the maximum heap, what the bounded holders may take; the rest is garbage between two collections. */
  public static final double HEAP_SHARE = 0.75;

  /** A pending delta: the map's node and table slot, the key (record, namespace reference, id string) and the sum. */
  static final long PENDING_DELTA_BYTES = 140;
  /** A request waiting for its commit: the request, its promise, its future's listener and the waiting-list node. */
  static final long WAITING_REQUEST_BYTES = 200;
  /**
   * An open connection's heap: Netty's channel, pipeline and task queues, Vert.x's connection, decoder and timers.
   * Measured: 9,000 idle connections took 73 MB of live heap (8.1 KB each), 4,000 with a half-sent 7 KB header block
   * 6.9 KB each (the header bytes wait in Netty's direct buffers, not in the heap).
   */
  static final long CONNECTION_BYTES = 8 * 1024;
  /**
   * A client's beacon record: the Caffeine node, the key (namespace + address), the token bucket and its id array.
   * Measured: ~310 bytes a client with one id; ~1.5 KB with ~220 ids (the array grows by doubling, up to the cap).
   */
  static final long BEACON_CLIENT_BYTES = 250;
  /** Each distinct id a beacon client has counted this hour is remembered by a 32-bit hash. */
  static final long BEACON_CLIENT_ID_HASH_BYTES = 4;
  /** An HLL_4 sketch: 2^lgK four-bit registers, plus its object, the map node and the exception table's start. */
  static final long SKETCH_OVERHEAD_BYTES = 128;
  /**
   * Sketches per {@code uniques.maxPendingSketches} while a merge is in flight (uniques.UniqueVisitors): the merge's
   * own (the cap and the quarter set aside, 1.25) and their compact copies for the rows (1.25 more), the new pending
   * ones (1) and a new quarter set aside (0.25).
   */
  static final double SKETCHES_HELD_PER_CAP = 3.75;
  /** A cached read: the key, the value, the map's node. */
  static final long CACHED_READ_BYTES = 150;
  /** A keyed request in flight: its record, promise and map node; the key itself comes on top. */
  static final long IDEMPOTENT_REQUEST_BYTES = 300;
  /** An {@code Idempotency-Key} is at most 255 printable ASCII characters. */
  static final long IDEMPOTENCY_KEY_MAX_CHARS = 255;

  /**
   * One holder full: what it is, the key that bounds it, how many of it the gateway keeps (empty: one), and its bytes.
   */
  public record Holder(String name, String key, String copies, long bytes) {
    /** The key and, when the bound is kept per verticle or event loop, how many: what an operator lowers or changes. */
    String bound() {
      return copies.isEmpty() ? key : key + " (× " + copies + ")";
    }
  }

  private final List<Holder> holders;

  private MemoryBudget(List<Holder> holders) {
    this.holders = List.copyOf(holders);
  }

  /**
   * The worst case of {@code config} with {@code ingestVerticles} coalescers (the resolved {@code http.instances}) and
   * {@code eventLoops} event loops (Vert.x runs two per core).
   */
  public static MemoryBudget of(GatewayConfig config, int ingestVerticles, int eventLoops) {
    List<Holder> holders = new ArrayList<>();
    BatchingOptions batching = config.getBatching();
    LimitsOptions limits = config.getLimits();
    // a namespace may allow longer ids than limits.maxIdLength
    long idBytes = config.getNamespaces().values().stream().map(NamespaceOptions::getMaxIdLength)
      .filter(Objects::nonNull).mapToInt(Integer::intValue).reduce(limits.getMaxIdLength(), Math::max);
    String perIngest = ingestVerticles + " ingest verticles, " + HttpOptions.INSTANCES.name();
    holders.add(new Holder("pending deltas", BatchingOptions.MAX_PENDING_KEYS.name(), perIngest,
      ingestVerticles * (long) batching.getMaxPendingKeys() * (PENDING_DELTA_BYTES + idBytes)));
    holders.add(new Holder("requests waiting for their commit", BatchingOptions.MAX_WAITING_REQUESTS.name(), perIngest,
      ingestVerticles * (long) batching.getMaxWaitingRequests() * WAITING_REQUEST_BYTES));
    holders.add(new Holder("request bodies being read", LimitsOptions.MAX_BODY_BYTES_IN_FLIGHT.name(), "",
      limits.getMaxBodyBytesInFlight()));
    holders.add(new Holder("open connections", LimitsOptions.MAX_CONNECTIONS.name(), "",
      limits.getMaxConnections() * CONNECTION_BYTES));
    holders.add(new Holder("requests with an Idempotency-Key in flight", IdempotencyOptions.MAX_IN_FLIGHT.name(), perIngest,
      ingestVerticles * (long) config.getIdempotency().getMaxInFlight() * (IDEMPOTENT_REQUEST_BYTES + IDEMPOTENCY_KEY_MAX_CHARS)));
    int idsPerClient = config.getNamespaces().values().stream().filter(NamespaceOptions::isPublic)
      .mapToInt(NamespaceOptions::getIdsPerClientPerHour).max().orElse(-1);
    if (idsPerClient >= 0) {
      BeaconOptions beacon = config.getBeacon();
      holders.add(new Holder("per-client beacon limits", BeaconOptions.MAX_TRACKED_CLIENTS.name(), "",
        beacon.getMaxTrackedClients() * (BEACON_CLIENT_BYTES + idsPerClient * BEACON_CLIENT_ID_HASH_BYTES)));
      holders.add(new Holder("user-agent verdicts", BeaconOptions.USER_AGENT_CACHE_BYTES.name(),
        eventLoops + " event loops", eventLoops * (long) beacon.getUserAgentCacheBytes()));
    }
    if (config.hasUniques()) {
      UniquesOptions uniques = config.getUniques();
      long sketchBytes = (1L << uniques.getLgK()) / 2 + SKETCH_OVERHEAD_BYTES;
      holders.add(new Holder("unique-visitor sketches", UniquesOptions.MAX_PENDING_SKETCHES.name(), perIngest,
        (long) (ingestVerticles * uniques.getMaxPendingSketches() * SKETCHES_HELD_PER_CAP) * sketchBytes));
    }
    ReadOptions reads = config.getReads();
    if (reads.getCacheMillis() > 0) {
      holders.add(new Holder("read cache", ReadOptions.CACHE_MAX_COUNTERS.name(),
        reads.getInstances() + " read verticles, " + ReadOptions.INSTANCES.name(),
        reads.getInstances() * (long) reads.getCacheMaxCounters() * (CACHED_READ_BYTES + idBytes)));
    }
    holders.sort(Comparator.comparingLong(Holder::bytes).reversed());
    return new MemoryBudget(holders);
  }

  /** Every holder, the largest first. */
  public List<Holder> holders() {
    return holders;
  }

  /** Bytes of heap every holder full at once takes. */
  public long worstCaseBytes() {
    return holders.stream().mapToLong(Holder::bytes).sum();
  }

  /** Whether the worst case stays within {@link #HEAP_SHARE} of {@code maxHeapBytes}. */
  public boolean fits(long maxHeapBytes) {
    return worstCaseBytes() <= maxHeapBytes * HEAP_SHARE;
  }

  /**
   * Refuses a start whose worst case does not fit {@code maxHeapBytes} ({@code Runtime.maxMemory()}), with the line
   * that names the largest holders' keys and what to do; the first key named is the one to look at first.
   */
  public void requireFits(long maxHeapBytes) {
    if (fits(maxHeapBytes)) {
      return;
    }
    List<Holder> largest = holders.subList(0, Math.min(3, holders.size()));
    String named = largest.stream().map(holder -> holder.bound() + " " + mib(holder.bytes()) + " (" + holder.name() + ")")
      .collect(Collectors.joining(", "));
    throw new ConfigException(largest.get(0).key(), "the bounded holders full at once would take "
      + mib(worstCaseBytes()) + " of heap, more than " + Math.round(HEAP_SHARE * 100) + " % of the maximum heap of "
      + mib(maxHeapBytes) + "; the largest: " + named + "; raise -Xmx (or the container's memory limit with "
      + "-XX:MaxRAMPercentage) or lower those keys (README \"Sizing\")");
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.0f MiB", bytes / (1024.0 * 1024.0));
  }
}
