package io.countergateway.http;

import io.countergateway.config.AuthOptions;
import io.countergateway.model.ApiError;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;

import java.util.Set;

/** Guards a route with a bearer token that carries a right; a no-op when no tokens are configured. */
final class BearerAuth {
  private static final String PREFIX = "Bearer ";

  private BearerAuth() {
  }

  static Handler<RoutingContext> require(AuthOptions auth, AuthOptions.Right right) {
    return ctx -> {
      if (!auth.isEnabled()) {
        ctx.next();
        return;
      }
      String header = ctx.request().getHeader("Authorization");
      if (header == null || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
        unauthorized(ctx, "this route needs an Authorization: Bearer <token> header");
        return;
      }
      Set<AuthOptions.Right> rights = auth.rightsOf(header.substring(PREFIX.length()).strip());
      if (rights == null) {
        unauthorized(ctx, "the bearer token is not valid");
      } else if (!rights.contains(right)) {
        Responses.error(ctx, new ApiError(403, "forbidden",
          "the token does not carry the '" + right.name().toLowerCase() + "' right this route needs", "Authorization"));
      } else {
        ctx.next();
      }
    };
  }

  private static void unauthorized(RoutingContext ctx, String message) {
    ctx.response().putHeader("WWW-Authenticate", "Bearer");
    Responses.error(ctx, new ApiError(401, "unauthorized", message, "Authorization"));
  }
}
