package io.countergateway.internal.http;

import io.countergateway.internal.bus.BusErrors;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Writes JSON answers; every refusal has the {@code {"error","message","field"}} body. */
final class Responses {
  static final String JSON = "application/json";
  private static final CharSequence CONTENT_TYPE = HttpHeaders.createOptimized("Content-Type");
  private static final CharSequence JSON_VALUE = HttpHeaders.createOptimized(JSON);

  private Responses() {
  }

  static void json(RoutingContext ctx, int status, JsonObject body) {
    json(ctx, status, body.encode());
  }

  static void json(RoutingContext ctx, int status, String body) {
    json(ctx.response(), status, body);
  }

  static void json(HttpServerResponse response, int status, String body) {
    if (response.ended() || response.closed()) {
      return;
    }
    response.setStatusCode(status).putHeader(CONTENT_TYPE, JSON_VALUE).end(body);
  }

  static void error(RoutingContext ctx, Throwable failure) {
    error(ctx.response(), failure);
  }

  static void error(HttpServerResponse response, Throwable failure) {
    errorWritten(response, failure);
  }

  /** As {@link #error(HttpServerResponse, Throwable)}; the future completes once the answer is written out. */
  static Future<Void> errorWritten(HttpServerResponse response, Throwable failure) {
    ApiError error = BusErrors.toApiError(failure);
    if (response.ended() || response.closed()) {
      return Future.succeededFuture();
    }
    if (error.status() == 503) {
      response.putHeader("Retry-After", "1");
    }
    return response.setStatusCode(error.status()).putHeader(CONTENT_TYPE, JSON_VALUE).end(error.toJson().encode());
  }
}
