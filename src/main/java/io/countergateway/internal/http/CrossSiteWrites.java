package io.countergateway.internal.http;

import io.countergateway.config.HttpOptions;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.RoutingContext;

import java.util.Locale;
import java.util.Set;

/**
 * Keeps web pages from writing through their visitors' browsers (cross-site request forgery) on the JSON write routes
 * (increments, batches, resets). A page can make a browser send a POST without asking the server first only with a
 * form's media types ({@code text/plain}, {@code application/x-www-form-urlencoded}, {@code multipart/form-data}) or a
 * body of no type; a body must therefore be declared JSON or NDJSON (415 otherwise). And a browser names the page's
 * origin in {@code Origin} on every such request: one that is neither the gateway's own nor in
 * {@code http.allowedOrigins} is refused (403). Clients that are not browsers send no Origin and are not concerned.
 * Both are decided on the headers, before a byte of the body is read. Beacons are cross-site by nature and are not
 * guarded here (they count 1 on public namespaces only, under CORS of their own).
 */
final class CrossSiteWrites {
  private static final Set<String> JSON_TYPES = Set.of("application/json", "application/x-ndjson", "application/ndjson");

  private CrossSiteWrites() {
  }

  static Handler<RoutingContext> guard(Vertx vertx, HttpOptions http) {
    boolean anyOrigin = http.getAllowedOrigins().contains("*");
    Set<String> allowed = Set.copyOf(http.getAllowedOrigins().stream().map(o -> o.toLowerCase(Locale.ROOT)).toList());
    return ctx -> {
      HttpServerRequest request = ctx.request();
      String origin = request.getHeader("Origin");
      if (origin != null && !anyOrigin && !allowed.contains(origin.toLowerCase(Locale.ROOT)) && !sameOrigin(request, origin)) {
        BodyReader.refuseUnread(vertx, request, new ApiError(403, "origin_not_allowed", "requests from the page at '"
          + (origin.length() > 100 ? origin.substring(0, 100) : origin)
          + "' are not allowed to write (http.allowedOrigins)", "Origin"));
        return;
      }
      if (request.method() != HttpMethod.DELETE && !acceptedBody(request.getHeader("Content-Type"), BodyReader.hasBody(request))) {
        BodyReader.refuseUnread(vertx, request, new ApiError(415, "unsupported_media_type",
          "the body must be JSON: Content-Type application/json (or application/x-ndjson for a batch)", "Content-Type"));
        return;
      }
      ctx.next();
    };
  }

  /** Whether a write's body may be taken: declared JSON or NDJSON, or no body at all (an increment of 1). */
  static boolean acceptedBody(String contentType, boolean hasBody) {
    if (contentType == null) {
      return !hasBody;
    }
    int parameters = contentType.indexOf(';');
    String mediaType = (parameters < 0 ? contentType : contentType.substring(0, parameters)).strip().toLowerCase(Locale.ROOT);
    return JSON_TYPES.contains(mediaType);
  }

  /** The page was served by this gateway, at the address the request names (RFC 6454 §4: scheme, host and port). */
  private static boolean sameOrigin(HttpServerRequest request, String origin) {
    HostAndPort authority = request.authority();
    if (authority == null) {
      return false;
    }
    String scheme = request.isSSL() ? "https" : "http";
    int defaultPort = request.isSSL() ? 443 : 80;
    String host = authority.host();
    String self = scheme + "://" + host + (authority.port() < 0 || authority.port() == defaultPort ? "" : ":" + authority.port());
    return self.equalsIgnoreCase(origin);
  }
}
