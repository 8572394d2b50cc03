package io.countergateway.internal.http;

import io.countergateway.internal.bus.BusClient;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.read.LocalReads;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Read and reset routes; the read verticles do the work, reached directly for one plain counter ({@link LocalReads})
 * and over the event bus for the rest.
 */
final class ReadRoutes {
  /** Query parameters of range and top-N reads, passed on to {@code counters.get} as they are. */
  private static final List<String> WINDOW_PARAMETERS = List.of("from", "to", "top", "unique");

  private final BusClient client;
  private final LocalReads local;
  private final GatewayConfig config;

  ReadRoutes(BusClient client, LocalReads local, GatewayConfig config) {
    this.client = client;
    this.local = local;
    this.config = config;
  }

  /** A plain counter's value: from this gateway's read verticles directly when one serves, else over the event bus. */
  private Future<Map<String, Long>> value(String type, String id) {
    return local.takes(type) ? local.read(type, List.of(id)) : client.get(type, List.of(id));
  }

  /**
   * {@code GET /v1/counters/{type}/{id}} → {@code {"type","id","value"}}; on a windowed namespace, optionally
   * {@code ?from=…&to=…}, → {@code {"type","id","bucket","buckets":[{"start","value"}],"total"}}.
   */
  void one(RoutingContext ctx) {
    String type = ctx.pathParam("type");
    String id = ctx.pathParam("id");
    if (isWindowedRead(ctx, type)) {
      windowed(ctx, new JsonObject().put("type", type).put("id", id), reply -> new JsonObject().put("type", type)
        .put("id", id).put("bucket", reply.getString("bucket")).put("from", reply.getString("from"))
        .put("to", reply.getString("to")).put("buckets", reply.getJsonArray("buckets"))
        .put("total", reply.getJsonObject("values").getValue(id)).mergeIn(uniqueFields(reply)));
      return;
    }
    value(type, id).onComplete(result -> {
      if (result.succeeded()) {
        Responses.json(ctx, 200, new JsonObject().put("type", type).put("id", id).put("value", result.result().get(id)));
      } else {
        Responses.error(ctx, result.cause());
      }
    });
  }

  /** {@code GET /v1/counters/{type}?id=a&id=b} → {@code {"type","counters":[{"id","value"}…]}}. */
  void many(RoutingContext ctx) {
    String type = ctx.pathParam("type");
    List<String> ids = ctx.queryParam("id");
    if (!ctx.queryParam("top").isEmpty()) {
      JsonObject request = new JsonObject().put("type", type);
      if (!ids.isEmpty()) {
        request.put("ids", new JsonArray(ids));
      }
      windowed(ctx, request, reply -> reply);
      return;
    }
    if (ids.isEmpty()) {
      Responses.error(ctx, ApiError.badRequest("invalid_ids", "id", "give at least one id: ?id=a&id=b"));
      return;
    }
    if (isWindowedRead(ctx, type)) {
      windowed(ctx, new JsonObject().put("type", type).put("ids", new JsonArray(ids)),
        reply -> {
          JsonArray counters = new JsonArray();
          JsonObject values = reply.getJsonObject("values");
          JsonObject uniques = reply.getJsonObject("uniques", new JsonObject());
          ids.stream().distinct().forEach(id -> counters.add(new JsonObject().put("id", id).put("total", values.getValue(id))
            .mergeIn(uniques.getJsonObject(id, new JsonObject()))));
          reply.remove("values");
          reply.remove("uniques");
          return reply.put("counters", counters);
        });
      return;
    }
    // over the event bus: handed to the reader directly, a multi-get measured no faster
    // (src/bench/results/round5-reads-2026-11-29.md)
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

  /** The distinct visitors of a {@code ?unique=true} read, none otherwise. */
  private static JsonObject uniqueFields(JsonObject reply) {
    JsonObject fields = new JsonObject();
    if (reply.containsKey("unique")) {
      fields.put("unique", reply.getValue("unique")).put("uniqueBounds", reply.getValue("uniqueBounds"));
    }
    return fields;
  }

  /** A read of a windowed namespace, or one that gives a range or top-N (refused with a 400 on a plain namespace). */
  private boolean isWindowedRead(RoutingContext ctx, String type) {
    NamespaceOptions namespace = config.namespace(type);
    if (namespace != null && namespace.isWindowed()) {
      return true;
    }
    return ctx.request().query() != null && WINDOW_PARAMETERS.stream().anyMatch(name -> !ctx.queryParam(name).isEmpty());
  }

  /**
   * {@code ?from=…&to=…} (and {@code top}) into the {@code counters.get} request, each given at most once; the read
   * verticle checks them whole before reading anything.
   */
  private void windowed(RoutingContext ctx, JsonObject request, Function<JsonObject, JsonObject> answer) {
    try {
      for (String name : WINDOW_PARAMETERS) {
        List<String> values = ctx.queryParam(name);
        if (values.size() > 1) {
          throw ApiError.badRequest("invalid_" + name, name, name + " may be given once");
        }
        if (!values.isEmpty()) {
          request.put(name, values.get(0));
        }
      }
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    client.query(request).onComplete(result -> {
      if (result.succeeded()) {
        Responses.json(ctx, 200, answer.apply(result.result()));
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
