package io.countergateway.http;

import io.countergateway.bus.BusErrors;
import io.countergateway.model.ApiError;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/** Writes JSON answers; every refusal has the {@code {"error","message","field"}} body. */
final class Responses {
  static final String JSON = "application/json";

  private Responses() {
  }

  static void json(RoutingContext ctx, int status, JsonObject body) {
    if (ctx.response().ended() || ctx.response().closed()) {
      return;
    }
    ctx.response().setStatusCode(status).putHeader("Content-Type", JSON).end(body.encode());
  }

  static void error(RoutingContext ctx, Throwable failure) {
    ApiError error = BusErrors.toApiError(failure);
    HttpServerResponse response = ctx.response();
    if (response.ended() || response.closed()) {
      return;
    }
    if (error.status() == 503) {
      response.putHeader("Retry-After", "1");
    }
    json(ctx, error.status(), error.toJson());
  }
}
