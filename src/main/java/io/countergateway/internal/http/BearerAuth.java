package io.countergateway.internal.http;

import io.countergateway.internal.beacon.TokenBucket;
import io.countergateway.config.AuthOptions;
import io.countergateway.config.AuthOptions.Right;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Guards a route with a bearer token that carries a right; a no-op when no tokens are configured. Decided on the
 * headers alone, before any byte of a body is read (src/DESIGN.md §10): a refused request with a body is answered with
 * {@code Connection: close} and its body dropped unread ({@link BodyReader#refuseUnread}). With
 * {@code auth.perTokenPerSecond}, each token's requests to the write routes go through a token bucket of the gateway's
 * (429 {@code rate_limited} with {@code Retry-After} past it).
 */
final class BearerAuth {
  private static final String PREFIX = "Bearer ";
  /** Set on a beacon's routing context when its token carries the {@code beacon} right. */
  static final String BEACON_AUTHORIZED = "cg.beaconAuthorized";

  private BearerAuth() {
  }

  /** The gateway's per-token buckets, shared by its event loops. */
  static final class TokenRates {
    private final AuthOptions auth;
    private final Map<String, TokenBucket> buckets = new ConcurrentHashMap<>();

    TokenRates(AuthOptions auth) {
      this.auth = auth;
    }

    /** 0 when {@code digest}'s token may make a request now, else the seconds to wait. */
    long secondsToWait(String digest) {
      if (auth.getPerTokenPerSecond() == 0) {
        return 0;
      }
      long now = System.nanoTime();
      long wait = buckets.computeIfAbsent(digest,
        d -> new TokenBucket(auth.getPerTokenBurst(), auth.getPerTokenPerSecond(), now)).take(now);
      return wait == 0 ? 0 : Math.max(1, (wait + 999_999_999L) / 1_000_000_000L);
    }
  }

  static Handler<RoutingContext> require(Vertx vertx, LiveTokens tokens, Right right) {
    return require(vertx, tokens, right, null);
  }

  /** As {@link #require(Vertx, LiveTokens, Right)}, each token's requests limited by {@code rates} (may be null). */
  static Handler<RoutingContext> require(Vertx vertx, LiveTokens tokens, Right right, TokenRates rates) {
    return ctx -> {
      AuthOptions auth = tokens.current();
      if (!auth.isEnabled()) {
        ctx.next();
        return;
      }
      String digest = authorized(vertx, ctx.request(), auth, right);
      if (digest == null) {
        return;
      }
      long wait = rates == null ? 0 : rates.secondsToWait(digest);
      if (wait > 0) {
        ctx.response().putHeader("Retry-After", Long.toString(wait));
        refuse(vertx, ctx.request(), new ApiError(429, "rate_limited", "this token made more requests than "
          + "auth.perTokenPerSecond allows; retry after " + wait + " s", "Authorization"));
        return;
      }
      ctx.next();
    };
  }

  /**
   * Reads ({@code GET /v1/counters/…}): with tokens configured they need {@code read} (which {@code write} and
   * {@code admin} carry), except on namespaces marked {@code anonymousReads}.
   */
  static Handler<RoutingContext> requireRead(Vertx vertx, LiveTokens tokens, GatewayConfig config) {
    return ctx -> {
      AuthOptions auth = tokens.current();
      if (!auth.isEnabled()) {
        ctx.next();
        return;
      }
      NamespaceOptions namespace = config.namespace(ctx.pathParam("type"));
      if (namespace != null && namespace.isAnonymousReads() || authorized(vertx, ctx.request(), auth, Right.READ) != null) {
        ctx.next();
      }
    };
  }

  /**
   * Beacons on a namespace that is not {@code public}: with tokens configured, a request that presents one carrying
   * {@code beacon} is let through ({@link #BEACON_AUTHORIZED}); one that presents none goes on to be answered as a
   * beacon on an undeclared namespace is. A presented token is checked whether the namespace is declared or not, so
   * that neither answer tells an anonymous client which namespaces exist. Beacons on public namespaces are anonymous by
   * design and never asked for a token.
   */
  static Handler<RoutingContext> authorizeBeacon(Vertx vertx, LiveTokens tokens, GatewayConfig config) {
    return ctx -> {
      AuthOptions auth = tokens.current();
      NamespaceOptions namespace = config.namespace(ctx.pathParam("type"));
      if (!auth.isEnabled() || namespace != null && namespace.isPublic() || ctx.request().getHeader("Authorization") == null) {
        ctx.next();
        return;
      }
      if (authorized(vertx, ctx.request(), auth, Right.BEACON) != null) {
        ctx.put(BEACON_AUTHORIZED, Boolean.TRUE);
        ctx.next();
      }
    };
  }

  /** The token's digest when it carries {@code right}; else null, and the refusal is answered. */
  private static String authorized(Vertx vertx, HttpServerRequest request, AuthOptions auth, Right right) {
    String header = request.getHeader("Authorization");
    if (header == null || !header.regionMatches(true, 0, PREFIX, 0, PREFIX.length())) {
      unauthorized(vertx, request, "this route needs an Authorization: Bearer <token> header");
      return null;
    }
    String token = header.substring(PREFIX.length()).strip();
    Set<Right> rights = auth.rightsOf(token);
    if (rights == null) {
      unauthorized(vertx, request, "the bearer token is not valid");
      return null;
    }
    if (!rights.contains(right)) {
      refuse(vertx, request, new ApiError(403, "forbidden",
        "the token does not carry the '" + right.name().toLowerCase() + "' right this route needs", "Authorization"));
      return null;
    }
    return auth.knownDigest(token);
  }

  private static void unauthorized(Vertx vertx, HttpServerRequest request, String message) {
    request.response().putHeader("WWW-Authenticate", "Bearer");
    refuse(vertx, request, new ApiError(401, "unauthorized", message, "Authorization"));
  }

  private static void refuse(Vertx vertx, HttpServerRequest request, ApiError error) {
    BodyReader.refuseUnread(vertx, request, error);
  }
}
