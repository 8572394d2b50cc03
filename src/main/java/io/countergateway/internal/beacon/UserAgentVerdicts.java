package io.countergateway.internal.beacon;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.vertx.core.Future;
import io.vertx.core.WorkerExecutor;

import java.util.Optional;

/**
 * The verdicts of a {@link CrawlerDetector}, remembered per event loop, and a filter that fails closed (src/DESIGN.md
 * §6c). A user agent longer than {@link #MAX_USER_AGENT_CHARS} is a bot (no browser sends one; it is never matched,
 * never cached). A user agent seen before is answered from a cache bounded in bytes ({@code beacon.userAgentCacheBytes},
 * Caffeine, weighed by length). A new one is decided on the loop by {@link CrawlerDetector#quick} (a handful of regular
 * expressions); the few the quick check cannot decide go to a dedicated single-thread executor, at most
 * {@link #MAX_IN_FLIGHT} at a time per loop. Past that the beacon is dropped as {@code filter_busy}: a flood of
 * made-up user agents costs the flood its count, not the gateway its CPU or memory, and is never counted unclassified.
 * Confined to the event loop that created it.
 */
public final class UserAgentVerdicts {
  /** Longer user agents are bots: browsers send 100–300 characters, and the matcher's cost grows with the length. */
  public static final int MAX_USER_AGENT_CHARS = 512;
  /** Undecided user agents being classified at once by one loop; past this, beacons are dropped as filter_busy. */
  static final int MAX_IN_FLIGHT = 16;
  private static final Optional<DropReason> PERSON = Optional.empty();

  private final WorkerExecutor executor;
  private final CrawlerDetector detector;
  private int inFlight;
  private final Cache<String, Optional<DropReason>> verdicts;

  /**
   * {@code executor}: where the undecided user agents are classified (one thread shared by the loops);
   * {@code cacheBytes}: the verdict cache's weight (beacon.userAgentCacheBytes).
   */
  public UserAgentVerdicts(WorkerExecutor executor, CrawlerDetector detector, long cacheBytes) {
    this.executor = executor;
    this.detector = detector;
    this.verdicts = Caffeine.newBuilder()
      .maximumWeight(cacheBytes)
      // a String's characters (Latin-1: a byte each) and its object, the entry's node and the verdict
      .weigher((String key, Optional<DropReason> verdict) -> key.length() + 120)
      .executor(Runnable::run)
      .build();
  }

  /** Null for a person's browser, else why the beacon is not counted. */
  public Future<DropReason> classify(String userAgent) {
    if (userAgent != null && userAgent.length() > MAX_USER_AGENT_CHARS) {
      return Future.succeededFuture(DropReason.LONG_USER_AGENT);
    }
    String key = userAgent == null ? "" : userAgent;
    Optional<DropReason> known = verdicts.getIfPresent(key);
    if (known != null) {
      return Future.succeededFuture(known.orElse(null));
    }
    Object quick = detector.quick(userAgent);
    if (quick != CrawlerDetector.UNDECIDED) {
      DropReason reason = (DropReason) quick;
      verdicts.put(key, reason == null ? PERSON : Optional.of(reason));
      return Future.succeededFuture(reason);
    }
    if (inFlight >= MAX_IN_FLIGHT) {
      return Future.succeededFuture(DropReason.FILTER_BUSY);
    }
    inFlight++;
    return executor.executeBlocking(() -> detector.full(userAgent), false).transform(result -> {
      inFlight--;
      if (result.failed()) {
        return Future.succeededFuture(DropReason.FILTER_BUSY);
      }
      verdicts.put(key, result.result() == null ? PERSON : Optional.of(result.result()));
      return Future.succeededFuture(result.result());
    });
  }

  /** Verdicts held (for tests). */
  long cached() {
    verdicts.cleanUp();
    return verdicts.estimatedSize();
  }
}
