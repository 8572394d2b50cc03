package io.countergateway.internal.read;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.WindowOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.IncrementRules;
import io.countergateway.internal.store.BucketValue;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.Failures;
import io.countergateway.internal.store.UniqueSketches;
import io.countergateway.internal.uniques.VisitorSketches;
import io.countergateway.internal.uniques.VisitorSketches.Estimate;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.math.BigInteger;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.SortedMap;
import java.util.Map;

/**
 * Reads of windowed namespaces for {@code counters.get}: the buckets and total of one counter, totals of many, and
 * top-N, over a range of buckets. The range is checked before anything is read: a range on a plain namespace, a
 * reversed one or one wider than {@code window.maxRangeBuckets} is a 400 naming the field.
 */
final class WindowedReads {
  private final CounterStore store;
  /** Null when no namespace counts unique visitors. */
  private final UniqueSketches sketches;
  private final GatewayConfig config;
  private final Clock clock;

  /** Buckets starting in [{@code from}, {@code to}) (epoch seconds); {@code explicit}: the request gave the range. */
  record Range(WindowOptions window, long from, long to, boolean explicit) {
    JsonObject describe(String type) {
      return new JsonObject().put("type", type).put("bucket", window.getBucket().label())
        .put("from", Instant.ofEpochSecond(from).toString()).put("to", Instant.ofEpochSecond(to).toString());
    }
  }

  WindowedReads(CounterStore store, UniqueSketches sketches, GatewayConfig config, Clock clock) {
    this.store = store;
    this.sketches = sketches;
    this.config = config;
    this.clock = clock;
  }

  /** True when the request is one for this class: a windowed namespace, or range or top-N fields on any. */
  static boolean applies(NamespaceOptions namespace, JsonObject request) {
    return namespace.isWindowed() || request.containsKey("from") || request.containsKey("to") || request.containsKey("top")
      || request.containsKey("unique");
  }

  /**
   * A top-N of a plain namespace: {@code top} alone, no range (a range or {@code unique} stays refused on a plain
   * namespace by {@link #range}).
   */
  static boolean isPlainTop(NamespaceOptions namespace, JsonObject request) {
    return !namespace.isWindowed() && request.containsKey("top") && !request.containsKey("from")
      && !request.containsKey("to") && !request.containsKey("unique");
  }

  /** {@code unique}: whether the answer adds each counter's distinct visitors; only where the namespace counts them. */
  static boolean unique(NamespaceOptions namespace, JsonObject request) {
    Object raw = request.getValue("unique");
    if (raw == null) {
      return false;
    }
    String text = String.valueOf(raw).trim();
    if (!text.equals("true") && !text.equals("false")) {
      throw ApiError.badRequest("invalid_unique", "unique", "unique must be true or false");
    }
    if (text.equals("true") && !namespace.isUnique()) {
      throw ApiError.badRequest("invalid_unique", "unique", "unique is only taken by namespaces that count unique "
        + "visitors; '" + namespace.getName() + "' does not (namespaces." + namespace.getName() + ".unique)");
    }
    return text.equals("true");
  }

  /** The checked range of a request; the default is the whole retention up to the end of the current bucket. */
  Range range(NamespaceOptions namespace, JsonObject request) {
    WindowOptions window = namespace.getWindow();
    for (String field : List.of("from", "to", "top", "unique")) {
      if (window == null && request.containsKey(field)) {
        throw ApiError.badRequest("invalid_" + field, field, field + " is only taken by windowed namespaces; '"
          + namespace.getName() + "' has no window");
      }
    }
    Instant now = clock.instant();
    long length = window.getBucket().seconds;
    boolean hasFrom = request.getValue("from") != null;
    boolean hasTo = request.getValue("to") != null;
    if (hasFrom != hasTo) {
      String missing = hasFrom ? "to" : "from";
      throw ApiError.badRequest("invalid_" + missing, missing, "from and to go together: give both, or neither for the retention");
    }
    if (!hasFrom) {
      // up to the last bucket an explicit "at" may reach (maxFutureSkew ahead), so the total counts it at once
      return new Range(window, window.oldestKept(now), window.bucketOf(now.plus(window.getMaxFutureSkew())) + length, false);
    }
    long from = window.bucketOf(IncrementRules.instant(request.getValue("from"), "from"));
    long to = IncrementRules.instant(request.getValue("to"), "to").getEpochSecond();
    if (to <= from) {
      throw ApiError.badRequest("invalid_to", "to", "to must be after the start of the bucket holding from");
    }
    long buckets = (to - from + length - 1) / length;
    if (buckets > window.getMaxRangeBuckets()) {
      throw ApiError.badRequest("invalid_range", "to", "the range spans " + buckets + " " + window.getBucket().label()
        + " buckets; at most " + window.getMaxRangeBuckets() + " (namespaces." + namespace.getName()
        + ".window.maxRangeBuckets)");
    }
    return new Range(window, from, to, true);
  }

  /** {@code top}: how many ids the answer ranks, 1 to {@code limits.maxReadIds}. */
  int top(JsonObject request) {
    Object raw = request.getValue("top");
    int most = config.getLimits().getMaxReadIds();
    long top;
    try {
      top = raw instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue()) ? number.longValue()
        : Long.parseLong(String.valueOf(raw).trim());
    } catch (NumberFormatException e) {
      top = 0;
    }
    if (top < 1 || top > most) {
      throw ApiError.badRequest("invalid_top", "top", "top must be a whole number between 1 and " + most);
    }
    if (request.containsKey("id") || request.containsKey("ids")) {
      throw ApiError.badRequest("invalid_top", "top", "top ranks the whole namespace; give no id with it");
    }
    return (int) top;
  }

  /**
   * One counter: its non-empty buckets in the range and their total. Without a range, the current bucket and the
   * total over the retention.
   */
  Future<JsonObject> one(String type, String id, Range range, boolean unique) {
    Future<JsonObject> counts = one(type, id, range);
    if (!unique) {
      return counts;
    }
    Future<SortedMap<Long, List<byte[]>>> visitors = sketches.readByBucket(type, id, range.from(), range.to());
    return Future.all(counts, visitors).map(both -> {
      int lgK = config.getUniques().getLgK();
      JsonObject answer = counts.result();
      // each listed bucket gets its own distinct visitors: the second line of a chart over time
      for (Object item : answer.getJsonArray("buckets")) {
        JsonObject bucket = (JsonObject) item;
        List<byte[]> stored = visitors.result().get(Instant.parse(bucket.getString("start")).getEpochSecond());
        bucket.put("unique", VisitorSketches.estimate(stored == null ? List.of() : stored, lgK).unique());
      }
      return withUnique(answer, VisitorSketches.estimate(visitors.result().values().stream().flatMap(List::stream)
        .toList(), lgK));
    });
  }

  private Future<JsonObject> one(String type, String id, Range range) {
    long current = range.window().bucketOf(clock.instant());
    Future<List<BucketValue>> buckets = range.explicit() ? store.windowBuckets(type, id, range.from(), range.to())
      : store.windowBuckets(type, id, current, current + range.window().getBucket().seconds);
    Future<Map<String, BigInteger>> total = range.explicit() ? null : store.windowTotals(type, List.of(id), range.from(), range.to());
    return (total == null ? buckets.map(list -> (Object) null) : Future.all(buckets, total).map(all -> (Object) null))
      .map(done -> {
        JsonArray listed = new JsonArray();
        BigInteger sum = BigInteger.ZERO;
        for (BucketValue bucket : buckets.result()) {
          listed.add(new JsonObject().put("start", Instant.ofEpochSecond(bucket.start()).toString())
            .put("value", Failures.exactLong(bucket.value())));
          sum = sum.add(bucket.value());
        }
        BigInteger totalValue = total == null ? sum : total.result().getOrDefault(id, BigInteger.ZERO);
        return range.describe(type).put("values", new JsonObject().put(id, Failures.exactLong(totalValue)))
          .put("buckets", listed);
      });
  }

  /** Several counters: their totals over the range; with {@code unique}, their distinct visitors under "uniques". */
  Future<JsonObject> totals(String type, List<String> ids, Range range, boolean unique) {
    Future<JsonObject> counts = store.windowTotals(type, ids, range.from(), range.to()).map(sums -> {
      JsonObject values = new JsonObject();
      for (String id : ids) {
        values.put(id, Failures.exactLong(sums.getOrDefault(id, BigInteger.ZERO)));
      }
      return range.describe(type).put("values", values);
    });
    if (!unique) {
      return counts;
    }
    List<String> distinct = ids.stream().distinct().toList();
    List<Future<Estimate>> visitors = distinct.stream().map(id -> uniques(type, id, range)).toList();
    return Future.all(counts, Future.all(visitors)).map(all -> {
      JsonObject perId = new JsonObject();
      for (int i = 0; i < distinct.size(); i++) {
        perId.put(distinct.get(i), withUnique(new JsonObject(), visitors.get(i).result()));
      }
      return counts.result().put("uniques", perId);
    });
  }

  /**
   * The distinct visitors of one counter over the range: the union of its sketches over every slot and bucket. The
   * visitor hash is keyed by a salt that changes every UTC day, so over several days this is the sum of each day's
   * distinct visitors (a visitor who came on two days counts twice), and within one day it is exact union.
   */
  private Future<Estimate> uniques(String type, String id, Range range) {
    return sketches.read(type, id, range.from(), range.to())
      .map(stored -> VisitorSketches.estimate(stored, config.getUniques().getLgK()));
  }

  /** {@code "unique": n, "uniqueBounds": {"lower", "upper"}} (two sigmas) on {@code answer}. */
  static JsonObject withUnique(JsonObject answer, Estimate estimate) {
    return answer.put("unique", estimate.unique())
      .put("uniqueBounds", new JsonObject().put("lower", estimate.lower()).put("upper", estimate.upper()));
  }

  /** The ids of a plain namespace with the largest values (SUM over their slots), largest first: {@code {"type","top"}}. */
  Future<JsonObject> plainTop(String type, int count) {
    return store.plainTop(type, count).map(ranked -> new JsonObject().put("type", type).put("top", ranked(ranked)));
  }

  private static JsonArray ranked(List<Map.Entry<String, BigInteger>> ranked) {
    JsonArray top = new JsonArray();
    ranked.forEach(entry -> top.add(new JsonObject().put("id", entry.getKey()).put("total", Failures.exactLong(entry.getValue()))));
    return top;
  }

  /** The ids with the largest totals over the range, largest first. */
  Future<JsonObject> top(String type, int count, Range range, boolean unique) {
    return store.windowTop(type, range.from(), range.to(), count).compose(ranked -> {
      JsonArray top = ranked(ranked);
      if (!unique) {
        return Future.succeededFuture(range.describe(type).put("top", top));
      }
      List<Future<Estimate>> visitors = ranked.stream().map(entry -> uniques(type, entry.getKey(), range)).toList();
      return Future.all(visitors).map(all -> {
        for (int i = 0; i < ranked.size(); i++) {
          withUnique(top.getJsonObject(i), visitors.get(i).result());
        }
        return range.describe(type).put("top", top);
      });
    });
  }
}
