package io.countergateway.http;

import io.countergateway.config.HttpOptions;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.metrics.HttpRouteMeters;
import io.countergateway.model.ApiError;
import io.countergateway.model.Increment;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.internal.http.HttpServerRequestInternal;
import io.vertx.ext.web.Router;

import java.util.Set;
import java.util.regex.Pattern;

/**
 * The hottest route, {@code GET /v1/beacon/{type}/{id}}, taken without the router; every other request, and every
 * beacon this class is not sure of, goes to the router, which answers it as before.
 *
 * <p>Why: the router's work per request (matching every route in order, a routing context, the authority check, the
 * CORS handler) cost a beacon about a fifth of its throughput (issue 10's profile). Here a beacon costs one path split
 * and the same validation, filter, count and answer ({@link IncrementRoutes#takeBeacon}) the router path runs. A
 * request goes to the router when its path would need decoding or normalising ({@code %}, empty or dot segments),
 * when it carries a Transfer-Encoding or an authority the router would refuse, when its Origin is not plainly one
 * that {@code http.corsOrigins} allows (the CORS handler then refuses it), and when its type or id is refused (the
 * router then answers the error): so the answers are the router's in every case the router would answer differently.
 */
final class HotRoutes implements Handler<HttpServerRequest> {
  private static final String BEACON_PREFIX = "/v1/beacon/";
  private static final String BEACON_ROUTE = "/v1/beacon/:type/:id";
  private static final Pattern PLAIN_ORIGIN = Pattern.compile("https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?");
  private static final CharSequence VARY = HttpHeaders.createOptimized("Vary");
  private static final CharSequence ORIGIN = HttpHeaders.createOptimized("Origin");
  private static final CharSequence TRANSFER_ENCODING = HttpHeaders.createOptimized("Transfer-Encoding");
  private static final CharSequence ALLOW_ORIGIN = HttpHeaders.createOptimized("Access-Control-Allow-Origin");
  private static final CharSequence ALLOW_CREDENTIALS = HttpHeaders.createOptimized("Access-Control-Allow-Credentials");
  private static final CharSequence TRUE = HttpHeaders.createOptimized("true");

  private final Router router;
  private final IncrementRoutes writes;
  private final HttpRouteMeters meters;
  private final boolean anyOrigin;
  private final Set<String> origins;

  HotRoutes(Router router, IncrementRoutes writes, HttpOptions http, HttpRouteMeters meters) {
    this.router = router;
    this.writes = writes;
    this.meters = meters;
    this.anyOrigin = http.getCorsOrigins().contains("*");
    this.origins = Set.copyOf(http.getCorsOrigins());
  }

  @Override
  public void handle(HttpServerRequest request) {
    if (!takeBeacon(request)) {
      router.handle(request);
    }
  }

  private boolean takeBeacon(HttpServerRequest request) {
    if (request.method() != HttpMethod.GET) {
      return false;
    }
    String path = request.path();
    if (path == null || !path.startsWith(BEACON_PREFIX)) {
      return false;
    }
    int slash = path.indexOf('/', BEACON_PREFIX.length());
    if (slash < 0 || path.indexOf('/', slash + 1) >= 0 || path.indexOf('%') >= 0) {
      return false;
    }
    String type = path.substring(BEACON_PREFIX.length(), slash);
    String id = path.substring(slash + 1);
    if (needsNormalising(type) || needsNormalising(id)) {
      return false;
    }
    MultiMap headers = request.headers();
    String origin = headers.get(ORIGIN);
    if (headers.contains(TRANSFER_ENCODING) || origin != null && !plainlyAllowed(origin) || !validAuthority(request)) {
      return false;
    }
    NamespaceOptions namespace;
    Increment increment;
    try {
      namespace = writes.beaconNamespace(type);
      increment = writes.beaconIncrement(namespace, id);
    } catch (ApiError refused) {
      return false;
    }
    long started = System.nanoTime();
    HttpServerResponse response = request.response();
    // what the router's beacon chain sends: Vary on every answer, the origin echoed with credentials allowed
    response.putHeader(VARY, ORIGIN);
    if (origin != null) {
      response.putHeader(ALLOW_ORIGIN, origin).putHeader(ALLOW_CREDENTIALS, TRUE);
    }
    response.endHandler(ended -> meters.record(BEACON_ROUTE, HttpMethod.GET, response.getStatusCode(),
      System.nanoTime() - started));
    writes.takeBeacon(namespace, increment, request);
    return true;
  }

  /** The router's own check (400 for a Host it cannot parse), which it makes through Vert.x's internal request API. */
  private static boolean validAuthority(HttpServerRequest request) {
    return request instanceof HttpServerRequestInternal internal && internal.isValidAuthority();
  }

  private static boolean needsNormalising(String segment) {
    return segment.isEmpty() || segment.equals(".") || segment.equals("..");
  }

  private boolean plainlyAllowed(String origin) {
    return (anyOrigin || origins.contains(origin)) && PLAIN_ORIGIN.matcher(origin).matches();
  }
}
