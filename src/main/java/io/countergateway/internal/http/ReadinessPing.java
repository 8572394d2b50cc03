package io.countergateway.internal.http;

import io.countergateway.internal.bus.BusClient;
import io.countergateway.internal.time.Timers;
import io.vertx.core.Future;

/**
 * Whether the database answered a readiness ping lately, for {@code /health/ready}: at most one ping in flight, shared
 * by every request that asks meanwhile, and its outcome kept for {@link #CACHE_NANOS}. So a flood of readiness
 * requests (anyone can send them) costs the database one {@code SELECT 1} per event loop and second, and never queues
 * a probe's ping behind a thousand others until it times out and readiness reads 503. How long an answer stands is
 * read on the injected {@link Timers}' clock, so a test moves past it instead of waiting. Confined to one event loop.
 */
final class ReadinessPing {
  /** How long an answer stands: far below a kubelet's probe period (5–10 s), so a probe sees a fresh outcome. */
  static final long CACHE_NANOS = 1_000_000_000L;

  private final BusClient client;
  private final Timers timers;
  private Future<Boolean> inFlight;
  private boolean answered;
  private boolean reachable;
  private long answeredAt;

  /** {@code timers}: whose clock ages an answer ({@link Timers#of} but in tests). */
  ReadinessPing(BusClient client, Timers timers) {
    this.client = client;
    this.timers = timers;
  }

  /** True when the database answered the latest ping. */
  Future<Boolean> reachable() {
    if (inFlight != null) {
      return inFlight;
    }
    if (answered && timers.nanoTime() - answeredAt < CACHE_NANOS) {
      return Future.succeededFuture(reachable);
    }
    Future<Boolean> ping = client.ping().transform(result -> {
      reachable = result.succeeded();
      answered = true;
      answeredAt = timers.nanoTime();
      inFlight = null;
      return Future.succeededFuture(reachable);
    });
    // a ping answered at once (a failure on sending) has already cleared inFlight
    if (!ping.isComplete()) {
      inFlight = ping;
    }
    return ping;
  }
}
