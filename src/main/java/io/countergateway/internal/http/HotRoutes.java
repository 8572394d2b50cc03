package io.countergateway.internal.http;

import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.write.IdempotentIncrements;
import io.countergateway.internal.metrics.HttpRouteMeters;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.read.LocalReads;
import io.countergateway.internal.write.AckMode;
import io.vertx.core.Handler;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.Router;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The hottest routes, {@code GET /v1/beacon/{type}/{id}}, {@code POST /v1/counters/{type}/{id}/increments} and
 * {@code GET /v1/counters/{type}/{id}} of a plain counter, taken without the router; every other request, and every
 * one of these this class is not sure of, goes to the router, which answers it.
 *
 * <p>Why: the router's work per request (matching every route in order, a routing context, the authority check, the
 * CORS and body handlers) cost a beacon about a fifth of its throughput (measured with a profiler). Here a request costs one
 * path split and the same validation, count and answer the router path runs ({@link IncrementRoutes#takeBeacon},
 * {@link IncrementRoutes#single(String, String, AckMode, Buffer, HttpServerResponse)}). A request goes to the router
 * when its path would need normalising (empty or dot segments, even written {@code %2E}; a {@code %} anywhere but in
 * a beacon's id, which both decode alike with {@link PathSegments}), when it carries a Transfer-Encoding or an
 * authority the router would refuse; a beacon also when its Origin is not plainly one that {@code http.corsOrigins}
 * allows (the CORS handler then refuses it), when it announces a body, and when its type is refused (the router then
 * answers the error); its query is read alike by both ({@link BeaconQuery}); an
 * increment also when authentication is on, when it has a query other than the ack, an
 * idempotency key, an Expect header, an Origin, a body not declared JSON, or no Content-Length within
 * {@code limits.maxBodyBytes}. So the
 * answers are the router's in every case the router would answer differently.
 */
final class HotRoutes implements Handler<HttpServerRequest> {
  private static final String BEACON_PREFIX = IncrementRoutes.BEACON_PREFIX;
  private static final String BEACON_ROUTE = "/v1/beacon/:type/:id";
  private static final String COUNTERS_PREFIX = "/v1/counters/";
  private static final String INCREMENTS_SUFFIX = "/increments";
  private static final String INCREMENT_ROUTE = "/v1/counters/:type/:id/increments";
  private static final String READ_ROUTE = "/v1/counters/:type/:id";
  private static final Buffer NO_BODY = Buffer.buffer(0);
  private static final CharSequence EXPECT = HttpHeaders.createOptimized("Expect");
  private static final CharSequence CONTENT_LENGTH = HttpHeaders.createOptimized("Content-Length");
  private static final CharSequence CONTENT_TYPE = HttpHeaders.createOptimized("Content-Type");
  private static final CharSequence IDEMPOTENCY_KEY = HttpHeaders.createOptimized(IdempotentIncrements.HEADER);
  private static final Pattern PLAIN_ORIGIN = Pattern.compile("https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?");
  private static final CharSequence VARY = HttpHeaders.createOptimized("Vary");
  private static final CharSequence ORIGIN = HttpHeaders.createOptimized("Origin");
  private static final CharSequence TRANSFER_ENCODING = HttpHeaders.createOptimized("Transfer-Encoding");
  private static final CharSequence ALLOW_ORIGIN = HttpHeaders.createOptimized("Access-Control-Allow-Origin");
  private static final CharSequence ALLOW_CREDENTIALS = HttpHeaders.createOptimized("Access-Control-Allow-Credentials");
  private static final CharSequence TRUE = HttpHeaders.createOptimized("true");
  private static final CharSequence EXPOSE_HEADERS = HttpHeaders.createOptimized("Access-Control-Expose-Headers");
  private static final CharSequence EXPOSED = HttpHeaders.createOptimized(IncrementRoutes.DROPPED_HEADER + ","
    + IncrementRoutes.FOLDED_HEADER + "," + BeaconQuery.IGNORED_HEADER);

  private final Router router;
  private final IncrementRoutes writes;
  private final BodyReader bodies;
  private final HttpRouteMeters meters;
  private final boolean anyOrigin;
  private final Set<String> origins;
  private final boolean authenticates;
  private final long maxBodyBytes;
  private final AllowedHosts hosts;
  private final LocalReads reads;

  HotRoutes(Router router, IncrementRoutes writes, BodyReader bodies, LocalReads reads, GatewayConfig config,
            HttpRouteMeters meters) {
    this.router = router;
    this.writes = writes;
    this.bodies = bodies;
    this.reads = reads;
    this.meters = meters;
    this.anyOrigin = config.getHttp().getCorsOrigins().contains("*");
    this.origins = Set.copyOf(config.getHttp().getCorsOrigins());
    this.authenticates = config.getAuth().isEnabled();
    this.maxBodyBytes = config.getLimits().getMaxBodyBytes();
    this.hosts = AllowedHosts.of(config);
  }

  @Override
  public void handle(HttpServerRequest request) {
    if (!takeBeacon(request) && !takeIncrement(request) && !takeRead(request)) {
      router.handle(request);
    }
  }

  private boolean takeIncrement(HttpServerRequest request) {
    if (request.method() != HttpMethod.POST || authenticates) {
      return false;
    }
    String path = request.path();
    if (path == null || !path.startsWith(COUNTERS_PREFIX) || !path.endsWith(INCREMENTS_SUFFIX) || path.indexOf('%') >= 0) {
      return false;
    }
    int typeEnd = path.indexOf('/', COUNTERS_PREFIX.length());
    int idEnd = path.length() - INCREMENTS_SUFFIX.length();
    if (typeEnd < 0 || typeEnd >= idEnd || path.indexOf('/', typeEnd + 1) != idEnd) {
      return false;
    }
    String type = path.substring(COUNTERS_PREFIX.length(), typeEnd);
    String id = path.substring(typeEnd + 1, idEnd);
    AckMode ack = AckQuery.ofPlainQuery(request.query());
    if (ack == null || needsNormalising(type) || needsNormalising(id)) {
      return false;
    }
    MultiMap headers = request.headers();
    String contentType = headers.get(CONTENT_TYPE);
    long length = contentLength(headers.get(CONTENT_LENGTH));
    // an Origin or a body not declared JSON is the cross-site check's to decide (CrossSiteWrites, in the router)
    if (length < 0 || length > maxBodyBytes || headers.contains(TRANSFER_ENCODING) || headers.contains(EXPECT)
      || headers.contains(IDEMPOTENCY_KEY) || headers.contains(ORIGIN) || !CrossSiteWrites.acceptedBody(contentType, length > 0)
      || !validAuthority(request)) {
      return false;
    }
    HttpServerResponse response = request.response();
    meters.recordWhenEnded(response, INCREMENT_ROUTE, HttpMethod.POST);
    if (length == 0) {
      writes.single(type, id, ack, NO_BODY, response);
    } else {
      // the same admission as the router's: the body budget, the body deadline (src/DESIGN.md §10)
      bodies.read(request, maxBodyBytes, true, body -> writes.single(type, id, ack, body, response));
    }
    return true;
  }

  /**
   * {@code GET /v1/counters/{type}/{id}} of a plain namespace, without a query: the router's read route
   * ({@link ReadRoutes#one}) without the router. Not when authentication is on (the read right is the router's to
   * check), when the path has an escape or a segment to normalise, when the request announces a body or has an
   * authority the router would refuse, nor when no read verticle serves here yet.
   */
  private boolean takeRead(HttpServerRequest request) {
    if (request.method() != HttpMethod.GET || authenticates || request.query() != null) {
      return false;
    }
    String path = request.path();
    if (path == null || !path.startsWith(COUNTERS_PREFIX) || path.indexOf('%') >= 0) {
      return false;
    }
    int slash = path.indexOf('/', COUNTERS_PREFIX.length());
    if (slash < 0 || path.indexOf('/', slash + 1) >= 0) {
      return false;
    }
    String type = path.substring(COUNTERS_PREFIX.length(), slash);
    String id = path.substring(slash + 1);
    MultiMap headers = request.headers();
    String length = headers.get(CONTENT_LENGTH);
    if (needsNormalising(type) || needsNormalising(id) || headers.contains(TRANSFER_ENCODING)
      || length != null && !length.equals("0") || !reads.takes(type) || !validAuthority(request)) {
      return false;
    }
    HttpServerResponse response = request.response();
    meters.recordWhenEnded(response, READ_ROUTE, HttpMethod.GET);
    reads.read(type, List.of(id)).onComplete(result -> {
      if (result.succeeded()) {
        Responses.json(response, 200, new JsonObject().put("type", type).put("id", id).put("value", result.result().get(id))
          .encode());
      } else {
        Responses.error(response, result.cause());
      }
    });
    return true;
  }

  /** 0 when absent (no Transfer-Encoding either: no body), -1 when not plain digits. */
  private static long contentLength(String header) {
    if (header == null) {
      return 0;
    }
    if (header.isEmpty() || header.length() > 18) {
      return -1;
    }
    for (int i = 0; i < header.length(); i++) {
      if (header.charAt(i) < '0' || header.charAt(i) > '9') {
        return -1;
      }
    }
    return Long.parseLong(header);
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
    if (slash < 0 || path.indexOf('/', slash + 1) >= 0) {
      return false;
    }
    String type = path.substring(BEACON_PREFIX.length(), slash);
    String id = path.substring(slash + 1);
    // the id is decoded once where it is taken (IncrementRoutes#beaconId); a dot segment, even written %2E (6
    // characters at most), is the router's to normalise, as is any escape in the type
    if (needsNormalising(type) || type.indexOf('%') >= 0 || needsNormalising(id)
      || id.length() <= 6 && id.indexOf('%') >= 0 && isDotSegment(PathSegments.decode(id))) {
      return false;
    }
    MultiMap headers = request.headers();
    String origin = headers.get(ORIGIN);
    String length = headers.get(CONTENT_LENGTH);
    // a body, even on a GET, is read within beacon.maxBodyBytes by the router's route (413 past it)
    if (headers.contains(TRANSFER_ENCODING) || length != null && !length.equals("0")
      || origin != null && !plainlyAllowed(origin) || !validAuthority(request)) {
      return false;
    }
    NamespaceOptions namespace;
    IncrementRoutes.BeaconId beacon;
    try {
      // a beacon on a namespace that is not public goes to the router, which checks its token (BearerAuth)
      namespace = writes.beaconNamespace(type, false);
      beacon = writes.beaconId(namespace, id);
    } catch (ApiError refused) {
      return false;
    }
    HttpServerResponse response = request.response();
    // what the router's beacon chain sends: Vary on every answer, the origin echoed with credentials allowed
    response.putHeader(VARY, ORIGIN);
    if (origin != null) {
      response.putHeader(ALLOW_ORIGIN, origin).putHeader(ALLOW_CREDENTIALS, TRUE).putHeader(EXPOSE_HEADERS, EXPOSED);
    }
    meters.recordWhenEnded(response, BEACON_ROUTE, HttpMethod.GET);
    writes.takeBeacon(namespace, beacon.increment(), beacon.folded(), BeaconQuery.of(request.query()), request);
    return true;
  }

  /**
   * Whether the router would accept the request's authority without a word. The router asks Vert.x's internal request
   * API (a missing or unparseable Host is a 400 there, except on HTTP/1.0); the public {@code authority()} parses the
   * same Host header and is null exactly when that check fails, so anything doubtful goes to the router; and a name
   * {@code http.allowedHosts} does not pass is the router's to refuse (421).
   */
  private boolean validAuthority(HttpServerRequest request) {
    HostAndPort authority = request.authority();
    return authority != null && hosts.allows(authority);
  }

  private static boolean isDotSegment(String decoded) {
    return ".".equals(decoded) || "..".equals(decoded);
  }

  private static boolean needsNormalising(String segment) {
    return segment.isEmpty() || segment.equals(".") || segment.equals("..");
  }

  private boolean plainlyAllowed(String origin) {
    return (anyOrigin || origins.contains(origin)) && PLAIN_ORIGIN.matcher(origin).matches();
  }
}
