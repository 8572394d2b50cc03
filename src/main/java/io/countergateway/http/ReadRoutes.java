package io.countergateway.http;

import io.countergateway.bus.CounterClient;
import io.countergateway.model.ApiError;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.util.List;

/** Read and reset routes; the read verticles do the work behind the event bus. */
final class ReadRoutes {
  private final CounterClient client;

  ReadRoutes(CounterClient client) {
    this.client = client;
  }

  /** {@code GET /v1/counters/{type}/{id}} → {@code {"type","id","value"}}. */
  void one(RoutingContext ctx) {
    String type = ctx.pathParam("type");
    String id = ctx.pathParam("id");
    client.get(type, id).onComplete(result -> {
      if (result.succeeded()) {
        Responses.json(ctx, 200, new JsonObject().put("type", type).put("id", id).put("value", result.result()));
      } else {
        Responses.error(ctx, result.cause());
      }
    });
  }

  /** {@code GET /v1/counters/{type}?id=a&id=b} → {@code {"type","counters":[{"id","value"}…]}}. */
  void many(RoutingContext ctx) {
    String type = ctx.pathParam("type");
    List<String> ids = ctx.queryParam("id");
    if (ids.isEmpty()) {
      Responses.error(ctx, ApiError.badRequest("invalid_ids", "id", "give at least one id: ?id=a&id=b"));
      return;
    }
    client.get(type, ids).onComplete(result -> {
      if (result.succeeded()) {
        JsonArray counters = new JsonArray();
        ids.stream().distinct().forEach(id -> counters.add(new JsonObject().put("id", id).put("value", result.result().get(id))));
        Responses.json(ctx, 200, new JsonObject().put("type", type).put("counters", counters));
      } else {
        Responses.error(ctx, result.cause());
      }
    });
  }

  /** {@code DELETE /v1/counters/{type}/{id}} → 204. */
  void reset(RoutingContext ctx) {
    client.reset(ctx.pathParam("type"), ctx.pathParam("id")).onComplete(result -> {
      if (result.succeeded()) {
        ctx.response().setStatusCode(204).end();
      } else {
        Responses.error(ctx, result.cause());
      }
    });
  }
}
