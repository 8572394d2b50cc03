package io.countergateway.internal.read;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Top-N and range reads scan many rows, so one read verticle runs at most {@code reads.maxHeavyPerNamespace} of them
 * per namespace at once (src/DESIGN.md §10: reads cannot hurt writes): the same read asked again while it runs shares
 * its answer (single-flight), an answer is reused for {@code reads.cacheMaxAge}, and a read past the cap is refused at
 * once with 503 {@code reads_busy} and {@code Retry-After}, instead of queueing for the connections every other read
 * and the readiness check need. Confined to the read verticle's event loop.
 */
final class HeavyReads {
  /** Answers kept at once: a top-N answer is at most limits.maxReadIds ids, some 300 KB. */
  static final int MAX_CACHED = 64;

  private final int maxPerNamespace;
  private final long cacheNanos;
  private final LongSupplier nanos;
  private final Map<String, Integer> running = new HashMap<>();
  private final Map<String, Future<JsonObject>> inFlight = new HashMap<>();
  private final LinkedHashMap<String, Cached> cache = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
      return size() > MAX_CACHED;
    }
  };

  private record Cached(JsonObject answer, long atNanos) {
  }

  HeavyReads(int maxPerNamespace, int cacheMillis, LongSupplier nanos) {
    this.maxPerNamespace = maxPerNamespace;
    this.cacheNanos = cacheMillis * 1_000_000L;
    this.nanos = nanos;
  }

  /** Whether a read is heavy: it ranks the namespace or gives a range. */
  static boolean isHeavy(JsonObject request) {
    return request.containsKey("top") || request.getValue("from") != null || request.getValue("to") != null;
  }

  /** {@code query}'s answer, shared by identical requests ({@code request} names it) of {@code type}. */
  Future<JsonObject> read(String type, JsonObject request, Supplier<Future<JsonObject>> query) {
    String key = type + '\n' + request.encode();
    if (cacheNanos > 0) {
      Cached cached = cache.get(key);
      if (cached != null && nanos.getAsLong() - cached.atNanos < cacheNanos) {
        return Future.succeededFuture(cached.answer.copy());
      }
    }
    Future<JsonObject> joined = inFlight.get(key);
    if (joined != null) {
      return joined.map(JsonObject::copy);
    }
    int now = running.getOrDefault(type, 0);
    if (now >= maxPerNamespace) {
      return Future.failedFuture(ApiError.unavailable("reads_busy", "namespace '" + type + "' has "
        + maxPerNamespace + " top-N or range reads running (reads.maxHeavyPerNamespace); retry later"));
    }
    running.put(type, now + 1);
    Future<JsonObject> answer = query.get();
    inFlight.put(key, answer);
    return answer.andThen(done -> {
      inFlight.remove(key);
      running.computeIfPresent(type, (t, count) -> count <= 1 ? null : count - 1);
      if (done.succeeded() && cacheNanos > 0) {
        cache.put(key, new Cached(done.result(), nanos.getAsLong()));
      }
    }).map(JsonObject::copy);
  }
}
