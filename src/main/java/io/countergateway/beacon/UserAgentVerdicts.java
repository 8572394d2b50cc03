package io.countergateway.beacon;

import io.vertx.core.Context;
import io.vertx.core.Future;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The verdicts of a {@link CrawlerDetector}, remembered per event loop: a user agent seen before is answered from
 * this cache on the loop; a new one is classified on a worker thread, since the detector's regular expressions
 * take about a millisecond. Confined to the event loop that created it, so it needs no lock.
 */
public final class UserAgentVerdicts {
  /** Visitors of one site share few distinct user agents; this holds the working set of a busy one. */
  static final int CAPACITY = 10_000;
  /**
   * New user agents being classified at once. Past this (a flood of made-up user agents) a beacon is counted
   * unclassified, as it would be without the filter, rather than queueing without bound.
   */
  static final int MAX_IN_FLIGHT = 256;
  private static final Optional<DropReason> PERSON = Optional.empty();

  private final Context loop;
  private final CrawlerDetector detector;
  private int inFlight;
  private final Map<String, Optional<DropReason>> verdicts = new LinkedHashMap<>(1024, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Optional<DropReason>> eldest) {
      return size() > CAPACITY;
    }
  };

  /** {@code loop} is the event loop this cache lives on; answers are delivered there. */
  public UserAgentVerdicts(Context loop, CrawlerDetector detector) {
    this.loop = loop;
    this.detector = detector;
  }

  /** Null for a person's browser, else why the beacon is not counted. */
  public Future<DropReason> classify(String userAgent) {
    String key = userAgent == null ? "" : userAgent;
    Optional<DropReason> known = verdicts.get(key);
    if (known != null) {
      return Future.succeededFuture(known.orElse(null));
    }
    if (inFlight >= MAX_IN_FLIGHT) {
      return Future.succeededFuture();
    }
    inFlight++;
    return loop.executeBlocking(() -> detector.classify(userAgent), false).andThen(result -> {
      inFlight--;
      if (result.succeeded()) {
        verdicts.put(key, result.result() == null ? PERSON : Optional.of(result.result()));
      }
    });
  }
}
