package io.countergateway.http;

import io.countergateway.runtime.GatewayServices;
import io.countergateway.write.Ack;
import io.countergateway.beacon.BeaconFilter;
import io.countergateway.write.Coalescer;
import io.countergateway.bus.CounterClient;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.config.TrustedProxies;
import io.countergateway.write.IdempotentIncrements;
import io.countergateway.model.ApiError;
import io.countergateway.model.Increment;
import io.countergateway.model.IncrementBatch;
import io.countergateway.model.IncrementRules;
import io.countergateway.uniques.UniqueVisitors;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

import java.util.Base64;
import java.util.List;
import java.util.Locale;

/** The write routes: single increment, batch, beacon. They run on the ingest verticle's event loop. */
final class IncrementRoutes {
  /** The smallest transparent GIF, for beacons embedded as images. */
  private static final Buffer PIXEL = Buffer.buffer(Base64.getDecoder().decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"));
  private static final CharSequence CACHE_CONTROL = HttpHeaders.createOptimized("Cache-Control");
  private static final CharSequence NO_STORE = HttpHeaders.createOptimized("no-store");

  private final Coalescer coalescer;
  private final CounterClient counters;
  private final IdempotentIncrements keyed;
  private final BeaconFilter beaconFilter;
  /** Null when no namespace counts unique visitors. */
  private final UniqueVisitors uniques;
  private final TrustedProxies trustedProxies;
  private final IncrementRules rules;
  private final int maxBatchIncrements;

  IncrementRoutes(GatewayServices services, Coalescer coalescer, CounterClient counters, IdempotentIncrements keyed,
                  BeaconFilter beaconFilter, UniqueVisitors uniques) {
    this.coalescer = coalescer;
    this.counters = counters;
    this.keyed = keyed;
    this.beaconFilter = beaconFilter;
    this.uniques = uniques;
    this.trustedProxies = services.config().getHttp().getTrustedProxies();
    this.rules = services.rules();
    this.maxBatchIncrements = services.config().getLimits().getMaxBatchIncrements();
  }

  /** {@code POST /v1/counters/{type}/{id}/increments}, body {@code {"delta": n}} or empty for 1. */
  void single(RoutingContext ctx) {
    Increment increment;
    AckMode ack;
    boolean returnsValue;
    String idempotencyKey;
    try {
      refuseFormData(ctx);
      ack = AckMode.of(ctx);
      // add-and-get: ?return=value; the query is only decoded when there is one (the hot path has none)
      returnsValue = ctx.request().query() != null
        && rules.returnsValue(singleQueryValue(ctx, "return"), ack == AckMode.COMMIT);
      JsonObject body = singleBody(ctx.body().buffer());
      increment = rules.increment(ctx.pathParam("type"), ctx.pathParam("id"),
        body == null ? null : body.getValue("delta"), body == null ? null : body.getValue("at"));
      idempotencyKey = IdempotentIncrements.key(ctx.request().getHeader(IdempotentIncrements.HEADER), IdempotentIncrements.HEADER);
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    if (idempotencyKey != null) {
      Future<IdempotentIncrements.Answer> answer = keyed.submit(idempotencyKey, List.of(increment), ack == AckMode.COMMIT,
        ack == AckMode.COMMIT ? 200 : 202, incrementAnswer(increment, ack));
      keyedAnswer(ctx, answer, returnsValue
        ? answer.compose(done -> counters.valueAfterCommit(increment.key().type(), increment.key().id())) : null);
      return;
    }
    if (returnsValue) {
      submit(increment, ack).onComplete(result -> {
        if (result.succeeded()) {
          counters.valueAfterCommit(increment.key().type(), increment.key().id()).onComplete(value -> Responses.json(ctx,
            200, new JsonObject(incrementAnswer(increment, ack)).put("value", value.result())));
        } else {
          Responses.error(ctx, result.cause());
        }
      });
      return;
    }
    takeSingle(increment, ack, ctx.response());
  }

  /**
   * The hot path's single increment: {@code body} (may be empty) already read within the body limit, no query but
   * the ack, no idempotency key, no form data. Refusals are answered here, as the router path answers them.
   */
  void single(String type, String id, AckMode ack, Buffer body, HttpServerResponse response) {
    Increment increment;
    try {
      JsonObject fields = singleBody(body);
      increment = rules.increment(type, id, fields == null ? null : fields.getValue("delta"),
        fields == null ? null : fields.getValue("at"));
    } catch (ApiError e) {
      Responses.error(response, e);
      return;
    }
    takeSingle(increment, ack, response);
  }

  private void takeSingle(Increment increment, AckMode ack, HttpServerResponse response) {
    submit(increment, ack).onComplete(result -> {
      if (result.succeeded()) {
        Responses.json(response, ack == AckMode.COMMIT ? 200 : 202, incrementAnswer(increment, ack));
      } else {
        Responses.error(response, result.cause());
      }
    });
  }

  private static String singleQueryValue(RoutingContext ctx, String name) {
    List<String> values = ctx.queryParam(name);
    if (values.size() > 1) {
      throw ApiError.badRequest("invalid_" + name, name, name + " may be given once");
    }
    return values.isEmpty() ? null : values.get(0);
  }

  /** {@code {"type","id","delta","ack"}}, written directly: this answer is on the hottest path. */
  private static String incrementAnswer(Increment increment, AckMode ack) {
    StringBuilder json = new StringBuilder(96).append("{\"type\":");
    quote(json, increment.key().type()).append(",\"id\":");
    quote(json, increment.key().id()).append(",\"delta\":").append(increment.delta())
      .append(",\"ack\":\"").append(ack.label).append("\"}");
    return json.toString();
  }

  private static StringBuilder quote(StringBuilder json, String text) {
    json.append('"');
    JsonStringEncoder.getInstance().quoteAsString(text, json);
    return json.append('"');
  }

  /** {@code POST /v1/increments}: a JSON array or NDJSON of {@code {"type","id","delta"}}; all or nothing. */
  void batch(RoutingContext ctx) {
    IncrementBatch batch;
    AckMode ack;
    List<Ack> acks;
    try {
      refuseFormData(ctx);
      ack = AckMode.of(ctx);
      batch = BatchParser.parse(ctx.body().buffer(), rules, maxBatchIncrements);
      String idempotencyKey = IdempotentIncrements.key(ctx.request().getHeader(IdempotentIncrements.HEADER),
        IdempotentIncrements.HEADER);
      if (idempotencyKey != null) {
        keyedAnswer(ctx, keyed.submit(idempotencyKey, batch.perCounter(), ack == AckMode.COMMIT,
          ack == AckMode.COMMIT ? 200 : 202, batchAnswer(batch, ack).encode()), null);
        return;
      }
      acks = coalescer.addAll(batch.perCounter(), ack == AckMode.COMMIT);
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    JsonObject answer = batchAnswer(batch, ack);
    if (acks.isEmpty()) {
      Responses.json(ctx, ack == AckMode.COMMIT ? 200 : 202, answer);
      return;
    }
    whenAllSettled(acks, () -> {
      if (acks.stream().allMatch(waiter -> waiter.future().succeeded())) {
        Responses.json(ctx, 200, answer);
      } else {
        Responses.error(ctx, batchFailure(acks));
      }
    });
  }

  /**
   * Runs {@code then} once every ack is settled. A count rather than {@code Future.join}: a batch holds up to a
   * thousand counters, and the composite future cost a batch request a twelfth of its time. Acks settle on this
   * event loop (the coalescer's), so the count needs no lock.
   */
  private static void whenAllSettled(List<Ack> acks, Runnable then) {
    int[] unsettled = {acks.size()};
    for (Ack ack : acks) {
      ack.future().onComplete(settled -> {
        if (--unsettled[0] == 0) {
          then.run();
        }
      });
    }
  }

  private static JsonObject batchAnswer(IncrementBatch batch, AckMode ack) {
    return new JsonObject().put("increments", batch.increments())
      .put("counters", batch.perCounter().size()).put("delta", batch.totalDelta()).put("ack", ack.label);
  }

  /**
   * The answer of a request with an idempotency key: the stored answer of the first request when this is a repeat,
   * marked {@code Idempotent-Replayed: true}; with add-and-get, the value read after the commit.
   */
  private static void keyedAnswer(RoutingContext ctx, Future<IdempotentIncrements.Answer> answer, Future<Long> value) {
    answer.onComplete(result -> {
      if (result.failed()) {
        Responses.error(ctx, result.cause());
        return;
      }
      IdempotentIncrements.Answer done = result.result();
      if (done.replayed()) {
        ctx.response().putHeader("Idempotent-Replayed", "true");
      }
      if (value == null || done.status() != 200) {
        Responses.json(ctx, done.status(), done.body());
      } else {
        value.onComplete(read -> Responses.json(ctx, 200, new JsonObject(done.body()).put("value", read.result())));
      }
    });
  }

  /**
   * A batch is withdrawn (503) only if every counter was withdrawn; if any part may have been written the
   * honest answer is 504: some of it may be counted, and a retry with an idempotency key is safe.
   */
  private static ApiError batchFailure(List<Ack> acks) {
    ApiError first = null;
    boolean allWithdrawn = true;
    for (Ack ack : acks) {
      if (ack.future().failed()) {
        ApiError error = ack.future().cause() instanceof ApiError api ? api
          : new ApiError(500, "write_failed", String.valueOf(ack.future().cause().getMessage()), null);
        first = first == null ? error : first;
        allWithdrawn &= error.status() == 503;
      } else {
        allWithdrawn = false;
      }
    }
    if (allWithdrawn || first.status() == 500 && acks.stream().allMatch(a -> a.future().failed())) {
      return first;
    }
    return new ApiError(504, "outcome_unknown", "part of the batch may have been counted when the request ended", null);
  }

  /**
   * {@code GET|POST /v1/beacon/{type}/{id}}: public namespaces only, delta 1, answered once taken. A body (any type,
   * up to beacon.maxBodyBytes) is read and ignored. A beacon the namespace's filters drop gets the same answer. A
   * counted beacon of a {@code unique: true} namespace also joins its counter-bucket's sketch of distinct visitors.
   */
  void beacon(RoutingContext ctx) {
    NamespaceOptions namespace;
    Increment increment;
    try {
      namespace = beaconNamespace(ctx.pathParam("type"));
      increment = beaconIncrement(namespace, ctx.pathParam("id"));
    } catch (ApiError e) {
      Responses.error(ctx, e);
      return;
    }
    takeBeacon(namespace, increment, ctx.request());
  }

  /** The namespace of a beacon: declared and public, else the error to answer. */
  NamespaceOptions beaconNamespace(String type) {
    NamespaceOptions namespace = rules.namespace(type);
    if (!namespace.isPublic()) {
      throw new ApiError(403, "namespace_not_public", "namespace '" + namespace.getName()
        + "' does not take beacons", "type");
    }
    return namespace;
  }

  Increment beaconIncrement(NamespaceOptions namespace, String id) {
    return rules.beacon(namespace, id);
  }

  /** A valid beacon, from the router or the hot path: filtered, counted unless dropped, answered either way. */
  void takeBeacon(NamespaceOptions namespace, Increment increment, HttpServerRequest request) {
    beaconFilter.check(namespace, request.headers()).onComplete(verdict -> {
      // a verdict that could not be reached counts the beacon, as it would be counted without the filter
      if (verdict.failed() || verdict.result() == null) {
        try {
          coalescer.add(increment, false);
        } catch (ApiError e) {
          Responses.error(request.response(), e);
          return;
        }
        if (uniques != null && namespace.isUnique()) {
          uniques.record(increment.key(), ClientAddress.of(request, trustedProxies),
            request.getHeader("User-Agent"));
        }
      }
      answerBeacon(request);
    });
  }

  private static void answerBeacon(HttpServerRequest request) {
    HttpServerResponse response = request.response();
    if (response.ended() || response.closed()) {
      return;
    }
    response.putHeader(CACHE_CONTROL, NO_STORE);
    if (request.query() != null && "gif".equals(request.getParam("format"))) {
      response.setStatusCode(200).putHeader("Content-Type", "image/gif").end(PIXEL);
    } else {
      response.setStatusCode(204).end();
    }
  }

  private Future<Void> submit(Increment increment, AckMode ack) {
    try {
      Ack waiter = coalescer.add(increment, ack == AckMode.COMMIT);
      return waiter == null ? Future.succeededFuture() : waiter.future();
    } catch (ApiError e) {
      return Future.failedFuture(e);
    }
  }

  /**
   * The body handler keeps no body for multipart/form-data (it expects file uploads), so such a request would
   * look like an empty body, which means delta 1, whatever it carried.
   */
  private static void refuseFormData(RoutingContext ctx) {
    String contentType = ctx.request().getHeader("Content-Type");
    if (contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
      throw new ApiError(415, "unsupported_media_type", "the body must be JSON (or NDJSON), not multipart/form-data",
        "Content-Type");
    }
  }

  /** The body of a single increment, {@code {"delta": n, "at": "…"}} (both optional); null when empty. */
  private static JsonObject singleBody(Buffer body) {
    if (body == null || body.length() == 0) {
      return null;
    }
    JsonObject json;
    try {
      json = JsonBodies.object(body);
    } catch (DecodeException e) {
      throw ApiError.badRequest("invalid_json", "body", "the body must be a JSON object like {\"delta\": 1}");
    }
    for (String field : json.fieldNames()) {
      if (!field.equals("delta") && !field.equals("at")) {
        throw ApiError.badRequest("unknown_field", field.length() > 64 ? field.substring(0, 64) : field,
          "only 'delta' and 'at' may be given in the body");
      }
    }
    if (json.containsKey("delta") && json.getValue("delta") == null) {
      throw ApiError.badRequest("invalid_delta", "delta", "delta must be a whole number");
    }
    if (json.containsKey("at") && json.getValue("at") == null) {
      throw ApiError.badRequest("invalid_at", "at", "at must be an ISO-8601 date-time with an offset");
    }
    return json;
  }
}
