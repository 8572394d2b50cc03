package io.countergateway.http;

import io.countergateway.model.ApiError;
import io.countergateway.model.CounterKey;
import io.countergateway.model.Increment;
import io.countergateway.model.IncrementRules;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads a batch body (a JSON array, or NDJSON: one object per line) and validates all of it before anything is taken. */
final class BatchParser {
  private BatchParser() {
  }

  record Batch(List<Increment> perCounter, int increments, long totalDelta) {
  }

  static Batch parse(Buffer body, IncrementRules rules, int maxIncrements) {
    String text = body == null ? "" : body.toString();
    List<Object> items = text.stripLeading().startsWith("[") ? arrayItems(text) : lines(text);
    if (items.isEmpty()) {
      throw ApiError.badRequest("empty_batch", "body", "the batch holds no increments");
    }
    if (items.size() > maxIncrements) {
      throw new ApiError(413, "batch_too_large", "a batch may hold at most " + maxIncrements + " increments", "body");
    }
    Map<CounterKey, Long> sums = new LinkedHashMap<>();
    long total = 0;
    for (int i = 0; i < items.size(); i++) {
      String where = "increments[" + i + "]";
      if (!(items.get(i) instanceof JsonObject json)) {
        throw ApiError.badRequest("invalid_increment", where, where + " must be an object {\"type\",\"id\",\"delta\"}");
      }
      Increment increment = rules.increment(json, where);
      sums.merge(increment.key(), increment.delta(), Math::addExact);
      total += increment.delta();
    }
    List<Increment> perCounter = new ArrayList<>(sums.size());
    sums.forEach((key, delta) -> {
      if (delta != 0) {
        perCounter.add(new Increment(key, delta));
      }
    });
    return new Batch(perCounter, items.size(), total);
  }

  private static List<Object> arrayItems(String text) {
    try {
      List<Object> items = new ArrayList<>();
      JsonBodies.array(text).forEach(items::add);
      return items;
    } catch (DecodeException e) {
      throw ApiError.badRequest("invalid_json", "body", "the body is not a valid JSON array");
    }
  }

  private static List<Object> lines(String text) {
    List<Object> items = new ArrayList<>();
    String[] lines = text.split("\r?\n");
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].isBlank()) {
        continue;
      }
      try {
        items.add(JsonBodies.object(lines[i]));
      } catch (DecodeException e) {
        throw ApiError.badRequest("invalid_json", "body", "line " + (i + 1) + " is not a JSON object");
      }
    }
    return items;
  }
}
