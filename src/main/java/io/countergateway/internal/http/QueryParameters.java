package io.countergateway.internal.http;

import io.countergateway.internal.model.ApiError;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.ext.web.RoutingContext;

import java.util.Set;

/**
 * The query parameters a route takes; any other is refused with 400 {@code unknown_parameter} naming it, before the
 * route does anything, as a body's unknown field is ({@code unknown_field}). A misspelt {@code ?retrun=value} or a
 * {@code ?delta=5} that was meant for the body would otherwise be ignored, and the request answered as if it had
 * been understood. Static documents are not guarded: a query there is a cache buster or the dashboard's own address;
 * nor are beacons, which ignore what they do not use and name it ({@link BeaconQuery}).
 */
final class QueryParameters {
  private QueryParameters() {
  }

  /** A handler that lets a request through when its query names nothing but {@code allowed}. */
  static Handler<RoutingContext> only(Vertx vertx, String... allowed) {
    Set<String> names = Set.of(allowed);
    String takes = allowed.length == 0 ? "this route takes no query parameters"
      : "this route takes " + String.join(", ", allowed);
    return ctx -> {
      if (ctx.request().query() != null) {
        for (String name : ctx.queryParams().names()) {
          if (!names.contains(name)) {
            String shown = name.length() > 64 ? name.substring(0, 64) : name;
            BodyReader.refuseUnread(vertx, ctx.request(), ApiError.badRequest("unknown_parameter", shown,
              "unknown query parameter '" + shown.replaceAll("\\p{Cntrl}", "?") + "': " + takes));
            return;
          }
        }
      }
      ctx.next();
    };
  }
}
