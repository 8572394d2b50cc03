package io.countergateway.config;

import io.countergateway.config.MemoryBounds.Bound;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongUnaryOperator;
import java.util.stream.Collectors;

/**
 * The heap the gateway's bounded holders take when every one of them is full at once: what a hostile client can make
 * it hold (docs/operations.md "Sizing"). Their bounds are derived here ({@link #derive}) rather than configured: each
 * holder gets a fixed share ({@link #SHARES}) of {@link #HEAP_SHARE} of the maximum heap, divided among the copies the
 * gateway keeps of it (one per ingest verticle, event loop or read verticle), so a larger heap holds more and more
 * cores do not multiply the total. A start whose worst case still passes {@link #HEAP_SHARE} of the heap (a bound
 * set by hand, or one held up by the key it may not go below) is refused ({@link #requireFits}), rather than run until
 * a crowd of addresses or a database outage exhausts the heap and the JVM exits ({@code -XX:+ExitOnOutOfMemoryError}).
 * The rest of the heap is what the allocation rate needs between collections.
 *
 * <p>Entry sizes are estimated from the objects' layout on a 64-bit JVM with compressed pointers (12-byte headers,
 * 4-byte references, Latin-1 strings at one byte a character), ids and keys at their configured longest.
 */
public final class MemoryBudget {
  /** Of the maximum heap, what the bounded holders may take; the rest is garbage between two collections. */
  public static final double HEAP_SHARE = 0.75;

  /**
   * Each bound's share of the holders' part of the heap; they add up to 1. In the containers' 247 MiB heap on 2 cores
   * they give ~37,000 pending counters and ~24,000 waiting requests per ingest verticle, 28 MiB of bodies, ~3,500
   * connections, ~71,000 beacon clients and ~485,000 known page ids (docs/operations.md "Sizing").
   */
  static final Map<Bound, Double> SHARES = new EnumMap<>(Map.of(
    Bound.PENDING_KEYS, 0.15, Bound.WAITING_REQUESTS, 0.05, Bound.BODY_BYTES_IN_FLIGHT, 0.15,
    Bound.CONNECTIONS, 0.15, Bound.IDEMPOTENT_IN_FLIGHT, 0.05, Bound.TRACKED_CLIENTS, 0.12,
    Bound.KNOWN_IDS, 0.08, Bound.USER_AGENT_CACHE_BYTES, 0.05, Bound.PENDING_SKETCHES, 0.15,
    Bound.READ_CACHE_COUNTERS, 0.05));

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
   * A beacon limits record (a client's, a network's or a (client, page)'s): its table slot (two long keys and a
   * reference, 20 bytes) and the record with its two token buckets (56); counted at 100. A record pushed out is
   * reused, so a crowd of new addresses makes no garbage.
   */
  static final long BEACON_RECORD_BYTES = 100;
  /** Networks' records kept at least, whatever the clients' bound. */
  static final long MIN_TRACKED_NETWORKS = 100;
  /** A known id: 64 bits of its hash in an open-addressing table between a quarter and half full. */
  static final long KNOWN_ID_BYTES = 32;
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
   * One holder full: what it is, the key or knob that fixed its bound (empty: derived from the heap), how many of it
   * the gateway keeps (empty: one), and its bytes.
   */
  public record Holder(String name, String key, String copies, long bytes) {
    /** The key and, when the bound is kept per verticle or event loop, how many: what an operator lowers or changes. */
    String bound() {
      String what = key.isEmpty() ? name + " (derived from the heap)" : key + " (" + name + ")";
      return copies.isEmpty() ? what : what + " × " + copies;
    }
  }

  /**
   * What each bound's one entry takes in a configuration, and how many copies of the bound it keeps: the bytes of a
   * bound at a given value.
   */
  private record Shape(int ingestVerticles, int eventLoops, int readVerticles, long idBytes, long sketchBytes) {
    static Shape of(GatewayConfig config, int ingestVerticles, int eventLoops) {
      LimitsOptions limits = config.getLimits();
      // a namespace may allow longer ids than limits.maxIdLength
      long idBytes = config.getNamespaces().values().stream().map(NamespaceOptions::getMaxIdLength)
        .filter(Objects::nonNull).mapToInt(Integer::intValue).reduce(limits.getMaxIdLength(), Math::max);
      long sketchBytes = (1L << config.getUniques().getLgK()) / 2 + SKETCH_OVERHEAD_BYTES;
      return new Shape(ingestVerticles, eventLoops, config.getReads().getInstances(), idBytes, sketchBytes);
    }

    long bytes(Bound bound, long value) {
      return switch (bound) {
        case PENDING_KEYS -> ingestVerticles * value * (PENDING_DELTA_BYTES + idBytes);
        case WAITING_REQUESTS -> ingestVerticles * value * WAITING_REQUEST_BYTES;
        case BODY_BYTES_IN_FLIGHT -> value;
        case CONNECTIONS -> value * CONNECTION_BYTES;
        case IDEMPOTENT_IN_FLIGHT -> ingestVerticles * value * (IDEMPOTENT_REQUEST_BYTES + IDEMPOTENCY_KEY_MAX_CHARS);
        case TRACKED_CLIENTS -> clientBytes(value) + networkBytes(value) + pageBytes(value);
        case KNOWN_IDS -> value * KNOWN_ID_BYTES;
        case USER_AGENT_CACHE_BYTES -> eventLoops * value;
        case PENDING_SKETCHES -> (long) (ingestVerticles * value * SKETCHES_HELD_PER_CAP) * sketchBytes;
        case READ_CACHE_COUNTERS -> readVerticles * value * (CACHED_READ_BYTES + idBytes);
      };
    }

    long clientBytes(long clients) {
      return clients * BEACON_RECORD_BYTES;
    }

    /** A quarter as many networks as clients are kept (beacon.ClientLimits). */
    long networkBytes(long clients) {
      return Math.max(MIN_TRACKED_NETWORKS, clients / 4) * BEACON_RECORD_BYTES;
    }

    /** Twice as many (client, page) pairs as clients are kept (beacon.ClientLimits). */
    long pageBytes(long clients) {
      return 2 * clients * BEACON_RECORD_BYTES;
    }
  }

  /** The least and most a bound may be, and the key that holds it up when the heap would give less. */
  private record Range(long min, long max, long floor, String floorKey) {
  }

  private final List<Holder> holders;

  private MemoryBudget(List<Holder> holders) {
    this.holders = List.copyOf(holders);
  }

  /**
   * The bounds of {@code config} on {@code machine}: each the largest whose holder, full, takes no more than its share
   * of {@link #HEAP_SHARE} of the heap; {@code limits.maxConnections} when set, a knob when a test set one
   * ({@link Knobs#bound}); never below what the configuration needs (a whole batch must fit a coalescer, a whole body
   * the body budget).
   */
  static MemoryBounds derive(GatewayConfig config, Machine machine) {
    int ingestVerticles = config.getHttp().getInstances() > 0 ? config.getHttp().getInstances() : machine.processors();
    Shape shape = Shape.of(config, ingestVerticles, machine.eventLoops());
    LimitsOptions limits = config.getLimits();
    int batch = limits.getMaxBatchIncrements();
    int flush = config.getBatching().getMaxKeys();
    String batchKey = LimitsOptions.MAX_BATCH_INCREMENTS.name();
    Map<Bound, Range> ranges = new EnumMap<>(Bound.class);
    ranges.put(Bound.PENDING_KEYS, new Range(1, 10_000_000, Math.max(batch, flush),
      batch >= flush ? batchKey : BatchingOptions.MAX_KEYS.name()));
    ranges.put(Bound.WAITING_REQUESTS, new Range(1, 10_000_000, batch, batchKey));
    ranges.put(Bound.BODY_BYTES_IN_FLIGHT, new Range(65_536, 1L << 30, limits.getMaxBodyBytes(),
      LimitsOptions.MAX_BODY_BYTES.name()));
    ranges.put(Bound.CONNECTIONS, new Range(1, 10_000_000, 1, ""));
    ranges.put(Bound.IDEMPOTENT_IN_FLIGHT, new Range(1, 1_000_000, 1, ""));
    ranges.put(Bound.TRACKED_CLIENTS, new Range(100, 10_000_000, 100, ""));
    ranges.put(Bound.KNOWN_IDS, new Range(1_000, 100_000_000, 1_000, ""));
    ranges.put(Bound.USER_AGENT_CACHE_BYTES, new Range(0, 256 * 1024 * 1024, 0, ""));
    ranges.put(Bound.PENDING_SKETCHES, new Range(1, 1_000_000, 1, ""));
    ranges.put(Bound.READ_CACHE_COUNTERS, new Range(1, 10_000_000, 1, ""));
    double holders = machine.maxHeapBytes() * HEAP_SHARE;
    Map<Bound, Long> values = new EnumMap<>(Bound.class);
    Map<Bound, String> setBy = new EnumMap<>(Bound.class);
    for (Bound bound : Bound.values()) {
      Range range = ranges.get(bound);
      Long knob = Knobs.bound(bound.label(), range.min(), range.max());
      if (knob != null) {
        values.put(bound, knob);
        setBy.put(bound, "-D" + Knobs.PREFIX + bound.label());
      } else if (bound == Bound.CONNECTIONS && limits.getMaxConnections() != null) {
        values.put(bound, (long) limits.getMaxConnections());
        setBy.put(bound, LimitsOptions.MAX_CONNECTIONS.name());
      } else {
        long share = (long) (holders * SHARES.get(bound));
        long derived = largest(range.min(), range.max(), value -> shape.bytes(bound, value), share);
        values.put(bound, Math.max(derived, range.floor()));
        setBy.put(bound, derived < range.floor() ? range.floorKey() : "");
      }
    }
    return new MemoryBounds(values, setBy);
  }

  /** The largest value from {@code min} to {@code max} whose bytes are at most {@code budget}; {@code min} if none. */
  private static long largest(long min, long max, LongUnaryOperator bytes, long budget) {
    long low = min;
    long high = max;
    while (low < high) {
      long middle = low + (high - low + 1) / 2;
      if (bytes.applyAsLong(middle) <= budget) {
        low = middle;
      } else {
        high = middle - 1;
      }
    }
    return low;
  }

  /**
   * The worst case of {@code config}'s bounds with {@code ingestVerticles} coalescers (the resolved
   * {@code http.instances}) and {@code eventLoops} event loops (Vert.x runs two per core).
   */
  public static MemoryBudget of(GatewayConfig config, int ingestVerticles, int eventLoops) {
    Shape shape = Shape.of(config, ingestVerticles, eventLoops);
    MemoryBounds bounds = config.getMemoryBounds();
    String perIngest = ingestVerticles + " ingest verticles";
    List<Holder> holders = new ArrayList<>();
    holders.add(holder("pending deltas", bounds, Bound.PENDING_KEYS, perIngest, shape));
    holders.add(holder("requests waiting for their commit", bounds, Bound.WAITING_REQUESTS, perIngest, shape));
    holders.add(holder("request bodies being read", bounds, Bound.BODY_BYTES_IN_FLIGHT, "", shape));
    holders.add(holder("open connections", bounds, Bound.CONNECTIONS, "", shape));
    holders.add(holder("requests with an Idempotency-Key in flight", bounds, Bound.IDEMPOTENT_IN_FLIGHT, perIngest, shape));
    if (config.getNamespaces().values().stream().anyMatch(NamespaceOptions::isPublic)) {
      long clients = bounds.get(Bound.TRACKED_CLIENTS);
      String key = bounds.setBy(Bound.TRACKED_CLIENTS);
      holders.add(new Holder("per-client beacon limits", key, "", shape.clientBytes(clients)));
      holders.add(new Holder("per-network beacon limits", key, "", shape.networkBytes(clients)));
      holders.add(new Holder("per-page beacon limits", key, "", shape.pageBytes(clients)));
      holders.add(holder("known page ids", bounds, Bound.KNOWN_IDS, "", shape));
      holders.add(holder("user-agent verdicts", bounds, Bound.USER_AGENT_CACHE_BYTES, eventLoops + " event loops", shape));
    }
    if (config.hasUniques()) {
      holders.add(holder("unique-visitor sketches", bounds, Bound.PENDING_SKETCHES, perIngest, shape));
    }
    if (config.getReads().getCacheMillis() > 0) {
      holders.add(holder("read cache", bounds, Bound.READ_CACHE_COUNTERS, config.getReads().getInstances()
        + " read verticles", shape));
    }
    holders.sort(Comparator.comparingLong(Holder::bytes).reversed());
    return new MemoryBudget(holders);
  }

  private static Holder holder(String name, MemoryBounds bounds, Bound bound, String copies, Shape shape) {
    return new Holder(name, bounds.setBy(bound), copies, shape.bytes(bound, bounds.get(bound)));
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
   * that names the largest holders, the keys that fixed their bounds and what to do; the key of the error is the
   * first of them that a key fixed ({@code -Xmx} when the heap itself is all there is to change).
   */
  public void requireFits(long maxHeapBytes) {
    if (fits(maxHeapBytes)) {
      return;
    }
    List<Holder> largest = holders.subList(0, Math.min(3, holders.size()));
    String named = largest.stream().map(holder -> holder.bound() + " " + mib(holder.bytes()))
      .collect(Collectors.joining(", "));
    List<String> keys = largest.stream().map(Holder::key).filter(key -> !key.isEmpty()).distinct().toList();
    throw new ConfigException(keys.isEmpty() ? "-Xmx" : keys.get(0), "the bounded holders full at once would take "
      + mib(worstCaseBytes()) + " of heap, more than " + Math.round(HEAP_SHARE * 100) + " % of the maximum heap of "
      + mib(maxHeapBytes) + "; the largest: " + named + "; raise -Xmx (or the container's memory limit with "
      + "-XX:MaxRAMPercentage)" + (keys.isEmpty() ? "" : " or lower " + String.join(", ", keys))
      + " (docs/operations.md \"Sizing\")");
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%.0f MiB", bytes / (1024.0 * 1024.0));
  }
}
