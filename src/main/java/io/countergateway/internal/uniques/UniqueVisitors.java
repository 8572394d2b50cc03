package io.countergateway.internal.uniques;

import io.countergateway.config.BatchingOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.UniquesOptions;
import io.countergateway.internal.model.CounterKey;
import io.countergateway.internal.store.UniqueSketches;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import org.apache.datasketches.hll.HllSketch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;

/**
 * The distinct visitors of one ingest verticle's counted beacons, held as one sketch per counter and bucket and merged
 * into the database every {@code uniques.flushInterval}. A visitor is the keyed hash HMAC-SHA256(salt of the UTC day,
 * IP address, User-Agent, namespace): the same visitor gives the same value all day on every replica, and nothing that
 * is stored or kept in memory longer than the hash takes leads back to the address once the salt is gone (48 hours).
 * The IP address, the User-Agent and the salt are never written anywhere, and never logged.
 *
 * <p>Confined to its verticle's event loop, like the coalescer. Writes are separate from the counts' flushes and
 * at least once: a union merged twice is the same union, so a failed or timed-out merge is retried with the writes'
 * backoff, its sketches folded back into the pending ones. Memory is bounded by {@code uniques.maxPendingSketches}
 * counter-buckets (src/DESIGN.md §10): when full, the least recently used sketch is set aside to be merged early (a
 * flush starts at once) and the newcomer takes its place, so a flood of made-up ids cannot blank the sketches of real
 * pages; only while a merge is in flight and a quarter of the cap is set aside already is a newcomer left out (counted
 * in {@code gateway_uniques_dropped_total{reason="full"}}). No client is capped here: many visitors share one
 * address, and the counter-buckets a client can open are those of the ids it may have counted, which the beacons'
 * budgets of new ids bound already (beacon.ClientLimits; past them its views join the sketch of {@code (other)}).
 */
public final class UniqueVisitors {
  private static final Logger LOG = LoggerFactory.getLogger(UniqueVisitors.class);
  private static final long SECONDS_PER_DAY = 86_400;
  private static final int SALT_BYTES = 32;
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Vertx vertx;
  private final SketchStore store;
  private final UniquesOptions options;
  /** Counter-buckets it holds sketches for between merges (derived from the heap); full, the eldest merges early. */
  private final int maxPendingSketches;
  private final BatchingOptions retries;
  private final Clock clock;
  private final IntSupplier lane;
  private final Thread eventLoop;
  /** The keyed hash of each day whose salt this verticle has (at most today and yesterday), or is fetching. */
  private final Map<Long, Future<VisitorHash>> hashByDay = new HashMap<>();
  /** The latest day whose hash is ready, and that hash: a beacon of that day is hashed at once, with no lookup. */
  private long readyDay = Long.MIN_VALUE;
  private VisitorHash readyHash;
  private LinkedHashMap<CounterKey, HllSketch> pending = accessOrdered();
  /** Least recently used sketches pushed out of a full {@link #pending}, merged by the next flush. */
  private LinkedHashMap<CounterKey, HllSketch> setAside = new LinkedHashMap<>();
  private final Map<String, Integer> slotsByNamespace = new HashMap<>();
  private final Counter droppedFull;
  private final Counter droppedNoSalt;
  private long merges;
  private int failedAttempts;
  private boolean inFlight;
  private long notBeforeNanos;
  private long timerId = -1;
  /** Visits answered while their day's salt is being fetched: a drain waits for them, as they are visits it answered. */
  private int waitingForSalt;
  private Promise<Void> drained;

  public UniqueVisitors(Vertx vertx, UniqueSketches store, GatewayConfig config, Clock clock, IntSupplier lane,
                        MeterRegistry registry, int index) {
    this(vertx, SketchStore.of(store), config, clock, lane, registry, index);
  }

  UniqueVisitors(Vertx vertx, SketchStore store, GatewayConfig config, Clock clock, IntSupplier lane,
                 MeterRegistry registry, int index) {
    this.vertx = vertx;
    this.store = store;
    this.options = config.getUniques();
    this.maxPendingSketches = config.getMemoryBounds().maxPendingSketches();
    this.retries = config.getBatching();
    this.clock = clock;
    this.lane = lane;
    this.eventLoop = Thread.currentThread();
    for (NamespaceOptions namespace : config.getNamespaces().values()) {
      slotsByNamespace.put(namespace.getName(), namespace.getSlots());
    }
    Tags tags = Tags.of("verticle", Integer.toString(index));
    droppedFull = Counter.builder("gateway.uniques.dropped").tags(tags.and("reason", "full"))
      .description("counted beacons left out of the unique-visitor sketches").register(registry);
    droppedNoSalt = Counter.builder("gateway.uniques.dropped").tags(tags.and("reason", "no_salt"))
      .description("counted beacons left out of the unique-visitor sketches").register(registry);
    FunctionCounter.builder("gateway.uniques.merges", this, u -> u.merges).tags(tags)
      .description("sketch merges committed to the database").register(registry);
    Gauge.builder("gateway.uniques.pending", this, UniqueVisitors::pendingSketches).tags(tags)
      .description("counter-buckets whose visitor sketch waits to be merged").register(registry);
  }

  public void start() {
    timerId = vertx.setPeriodic(options.getFlushIntervalMs(), id -> flush());
  }

  /**
   * A counted beacon of a {@code unique: true} namespace, by the visitor at {@code address} with {@code userAgent}: one
   * visitor of its page ({@code page}) and of its site ({@code site}, the page's bucket of the site total). Each
   * sketch gets the visitor's value for its own record type, as a beacon of either alone would give it.
   */
  public void record(CounterKey page, CounterKey site, String address, String userAgent) {
    if (Thread.currentThread() != eventLoop) {
      throw new IllegalStateException("unique visitors must be recorded on the event loop of the verticle that created them");
    }
    long day = Math.floorDiv(clock.millis(), SECONDS_PER_DAY * 1000);
    byte[] visitor = VisitorHash.visitor(address, userAgent);
    if (day == readyDay) {
      add(page, site, readyHash, visitor);
      return;
    }
    waitingForSalt++;
    hashOf(day).onComplete(hash -> {
      waitingForSalt--;
      if (hash.succeeded()) {
        add(page, site, hash.result(), visitor);
      } else {
        droppedNoSalt.increment(2);
      }
      if (drained != null) {
        continueDrain();
      }
    });
  }

  private void add(CounterKey page, CounterKey site, VisitorHash hash, byte[] visitor) {
    add(page, hash.of(visitor, page.type()));
    add(site, hash.of(visitor, site.type()));
  }

  private Future<VisitorHash> hashOf(long day) {
    Future<VisitorHash> known = hashByDay.get(day);
    if (known != null) {
      return known;
    }
    hashByDay.keySet().removeIf(other -> other < day - 1);
    byte[] candidate = new byte[SALT_BYTES];
    RANDOM.nextBytes(candidate);
    Future<VisitorHash> fetched = store.salt(day, candidate).map(VisitorHash::new);
    hashByDay.put(day, fetched);
    fetched.onSuccess(hash -> {
      // a later day's hash stays ready while a beacon stamped the day before (a clock stepped back) fetches its own
      if (day >= readyDay && hashByDay.get(day) == fetched) {
        readyDay = day;
        readyHash = hash;
      }
    });
    fetched.onFailure(e -> {
      // the visits of this moment go uncounted as visitors; the next one asks the database again
      hashByDay.remove(day, fetched);
      LOG.warn("could not get the visitor salt of day {}: {}", day, e.toString());
    });
    return fetched;
  }

  private void add(CounterKey key, long visitor) {
    HllSketch sketch = pending.get(key);
    if (sketch == null) {
      sketch = setAside.remove(key);
    }
    if (sketch == null) {
      if (pending.size() >= maxPendingSketches && !setAsideEldest()) {
        droppedFull.increment();
        return;
      }
      sketch = VisitorSketches.empty(options.getLgK());
    }
    pending.put(key, sketch);
    sketch.update(visitor);
  }

  /** Moves the least recently used pending sketch aside for an early merge; false when the room for that is full too. */
  private boolean setAsideEldest() {
    if (setAside.size() >= Math.max(16, maxPendingSketches / 4)) {
      return false;
    }
    var eldest = pending.entrySet().iterator();
    if (eldest.hasNext()) {
      var entry = eldest.next();
      eldest.remove();
      setAside.put(entry.getKey(), entry.getValue());
    }
    if (!inFlight && drained == null) {
      vertx.runOnContext(v -> flush());
    }
    return true;
  }

  private static LinkedHashMap<CounterKey, HllSketch> accessOrdered() {
    return new LinkedHashMap<>(1024, 0.75f, true);
  }

  private void flush() {
    if (inFlight || pending.isEmpty() && setAside.isEmpty() || System.nanoTime() - notBeforeNanos < 0) {
      return;
    }
    LinkedHashMap<CounterKey, HllSketch> taken = pending;
    pending = accessOrdered();
    setAside.forEach((key, sketch) -> taken.merge(key, sketch, (a, b) -> HllSketch.heapify(
      VisitorSketches.union(a.toCompactByteArray(), b.toCompactByteArray(), options.getLgK()))));
    setAside = new LinkedHashMap<>();
    int slotLane = lane.getAsInt();
    List<UniqueSketches.SketchRow> rows = new ArrayList<>(taken.size());
    taken.forEach((key, sketch) -> rows.add(new UniqueSketches.SketchRow(key,
      (short) Math.floorMod(slotLane, slotsByNamespace.getOrDefault(key.type(), 1)), sketch.toCompactByteArray())));
    inFlight = true;
    int lgK = options.getLgK();
    store.merge(rows, (stored, incoming) -> VisitorSketches.union(stored, incoming, lgK)).onComplete(merged -> {
      inFlight = false;
      if (merged.succeeded()) {
        merges++;
        failedAttempts = 0;
      } else {
        LOG.warn("merging {} visitor sketches failed (attempt {}), will retry: {}", taken.size(), failedAttempts + 1,
          merged.cause().toString());
        foldBack(taken);
        notBeforeNanos = System.nanoTime() + retries.retryDelayMs(failedAttempts++) * 1_000_000L;
      }
      if (drained != null) {
        continueDrain();
      }
    });
  }

  /** A failed merge's sketches join the pending ones; past the cap too, since they were taken within it. */
  private void foldBack(Map<CounterKey, HllSketch> failed) {
    failed.forEach((key, sketch) -> {
      HllSketch current = pending.get(key);
      if (current == null) {
        pending.put(key, sketch);
      } else {
        byte[] union = VisitorSketches.union(current.toCompactByteArray(), sketch.toCompactByteArray(), options.getLgK());
        pending.put(key, HllSketch.heapify(union));
      }
    });
  }

  /**
   * Merges everything held, the visits still waiting for their day's salt included, and completes once none is left.
   * The caller calls it once no beacon is answered any more (the HTTP server closed) and bounds the wait; a merge that
   * fails meanwhile is retried with the writes' backoff.
   */
  public Future<Void> drain() {
    if (drained == null) {
      drained = Promise.promise();
      vertx.cancelTimer(timerId);
      continueDrain();
    }
    return drained.future();
  }

  private void continueDrain() {
    if (inFlight || waitingForSalt > 0) {
      return;
    }
    if (pending.isEmpty() && setAside.isEmpty()) {
      drained.tryComplete();
      return;
    }
    long waitMs = Math.max(1, (notBeforeNanos - System.nanoTime()) / 1_000_000L);
    vertx.setTimer(waitMs, id -> flush());
  }

  public int pendingSketches() {
    return pending.size() + setAside.size();
  }
}
