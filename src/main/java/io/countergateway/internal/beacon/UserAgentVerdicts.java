package io.countergateway.internal.beacon;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;

import java.util.Optional;

/**
 * The verdicts of a {@link CrawlerDetector}, decided on the event loop and remembered per loop (src/DESIGN.md §6c):
 * every user agent gets its verdict at once, so none waits and none is dropped for want of time to decide. A user
 * agent longer than {@link #MAX_USER_AGENT_CHARS} is a bot (no browser sends one; it is never matched, never cached):
 * the cap is what bounds the cost of a crafted one. A user agent seen before is answered from a cache bounded in
 * bytes ({@code beacon.userAgentCacheBytes}, Caffeine, weighed by length). Confined to the event loop that created it.
 */
public final class UserAgentVerdicts {
  /** Longer user agents are bots: browsers send 100–300 characters, and the matcher's cost grows with the length. */
  public static final int MAX_USER_AGENT_CHARS = 512;
  private static final Optional<DropReason> PERSON = Optional.empty();

  private final CrawlerDetector detector;
  private final Cache<String, Optional<DropReason>> verdicts;

  /** {@code cacheBytes}: the verdict cache's weight (beacon.userAgentCacheBytes). */
  public UserAgentVerdicts(CrawlerDetector detector, long cacheBytes) {
    this.detector = detector;
    this.verdicts = Caffeine.newBuilder()
      .maximumWeight(cacheBytes)
      // a String's characters (Latin-1: a byte each) and its object, the entry's node and the verdict
      .weigher((String key, Optional<DropReason> verdict) -> key.length() + 120)
      .executor(Runnable::run)
      .build();
  }

  /** Null for a person's browser, else why the beacon is not counted. */
  public DropReason classify(String userAgent) {
    if (userAgent != null && userAgent.length() > MAX_USER_AGENT_CHARS) {
      return DropReason.LONG_USER_AGENT;
    }
    String key = userAgent == null ? "" : userAgent;
    Optional<DropReason> known = verdicts.getIfPresent(key);
    if (known != null) {
      return known.orElse(null);
    }
    DropReason reason = detector.classify(userAgent);
    verdicts.put(key, reason == null ? PERSON : Optional.of(reason));
    return reason;
  }

  /** Verdicts held (for tests). */
  long cached() {
    verdicts.cleanUp();
    return verdicts.estimatedSize();
  }
}
