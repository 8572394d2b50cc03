package io.countergateway.internal.http;

import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.model.IncrementBatch;
import io.countergateway.internal.model.IncrementRules;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/** Reads a batch body (a JSON array, or NDJSON: one object per line) and validates all of it before anything is taken. */
final class BatchParser {
  private BatchParser() {
  }

  static IncrementBatch parse(Buffer body, IncrementRules rules, int maxIncrements) {
    String text = body == null ? "" : body.toString();
    List<Object> items = text.stripLeading().startsWith("[") ? arrayItems(text) : lines(text);
    return IncrementBatch.of(items, rules, maxIncrements);
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
