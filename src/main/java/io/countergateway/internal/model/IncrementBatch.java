package io.countergateway.internal.model;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A validated batch: every item checked before any is taken, then summed per counter, so the coalescer takes one
 * delta (and at most one waiting request) per counter. Used by the HTTP batch route and the event bus alike.
 */
public record IncrementBatch(List<Increment> perCounter, int increments, long totalDelta) {

  /** How errors name item {@code index}; built only for an error. */
  static String where(int index) {
    return "increments[" + index + "]";
  }

  public static IncrementBatch of(List<?> items, IncrementRules rules, int maxIncrements) {
    if (items.isEmpty()) {
      throw ApiError.badRequest("empty_batch", "body", "the batch holds no increments");
    }
    if (items.size() > maxIncrements) {
      throw new ApiError(413, "batch_too_large", "a batch may hold at most " + maxIncrements + " increments", "body");
    }
    Map<CounterKey, Long> sums = new LinkedHashMap<>();
    long total = 0;
    for (int i = 0; i < items.size(); i++) {
      if (!(items.get(i) instanceof JsonObject json)) {
        String where = where(i);
        throw ApiError.badRequest("invalid_increment", where, where + " must be an object {\"type\",\"id\",\"delta\"}");
      }
      Increment increment = rules.increment(json, i);
      // cannot overflow: the configured batch size and delta range keep every sum far inside a long
      sums.merge(increment.key(), increment.delta(), Long::sum);
      total += increment.delta();
    }
    List<Increment> perCounter = new ArrayList<>(sums.size());
    sums.forEach((key, delta) -> {
      if (delta != 0) {
        perCounter.add(new Increment(key, delta));
      }
    });
    return new IncrementBatch(perCounter, items.size(), total);
  }
}
