package io.countergateway.internal.http;

import io.countergateway.internal.runtime.GatewayServices;
import io.countergateway.internal.bus.BusClient;
import io.countergateway.internal.time.Timers;
import io.countergateway.internal.write.WritePath;
import io.countergateway.config.AuthOptions;
import io.countergateway.config.AuthOptions.Right;
import io.countergateway.config.HttpOptions;
import io.countergateway.config.ManagementOptions;
import io.countergateway.internal.beacon.BeaconFilter;
import io.countergateway.internal.beacon.BeaconOutcomes;
import io.countergateway.internal.beacon.ClientLimits;
import io.countergateway.internal.metrics.HttpRouteMeters;
import io.countergateway.internal.store.CounterStore;
import io.countergateway.internal.store.SqlStores;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.vertx.core.Future;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.countergateway.internal.metrics.PrometheusScrape;
import io.countergateway.internal.uniques.UniqueVisitors;
import io.countergateway.internal.model.ApiError;
import io.countergateway.internal.read.LocalReads;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.CorsHandler;

/** The HTTP contract (written out in {@code src/main/resources/openapi.yaml}), as one router per ingest verticle. */
public final class HttpApi {
  /** The beacon script may change with a release: caches keep it an hour, then revalidate with its ETag. */
  private static final StaticDocument BEACON_SCRIPT = StaticDocument.of("/frontdoor/beacon.js",
    "text/javascript; charset=utf-8", "public, max-age=3600");
  private static final StaticDocument OPENAPI = StaticDocument.of("/openapi.yaml", "application/yaml; charset=utf-8",
    "public, max-age=300");
  /** The dashboard: revalidated on every load (ETag), so a new release shows at once. */
  private static final StaticDocument UI_PAGE = StaticDocument.of("/ui/index.html", "text/html; charset=utf-8", "no-cache");
  private static final StaticDocument UI_SCRIPT = StaticDocument.of("/ui/dashboard.js", "text/javascript; charset=utf-8",
    "no-cache");
  private static final StaticDocument UI_STYLE = StaticDocument.of("/ui/dashboard.css", "text/css; charset=utf-8", "no-cache");
  /** The charting library, from its WebJar (version pinned in pom.xml): served by the gateway, never from a CDN. */
  private static final String UPLOT = "/META-INF/resources/webjars/uplot/1.6.30/dist/";
  private static final StaticDocument UPLOT_SCRIPT = StaticDocument.of(UPLOT + "uPlot.iife.min.js",
    "text/javascript; charset=utf-8", "public, max-age=86400");
  private static final StaticDocument UPLOT_STYLE = StaticDocument.of(UPLOT + "uPlot.min.css", "text/css; charset=utf-8",
    "public, max-age=86400");
  /** The page loads nothing but its own files, and no inline script can run in it. */
  private static final String UI_POLICY = "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'";

  private static final Logger LOG = LoggerFactory.getLogger(HttpApi.class);
  /** Ids read per query when the beacon limits learn which ids exist. */
  private static final int KNOWN_IDS_PAGE = 10_000;

  private HttpApi() {
  }

  /**
   * Makes {@code server} serve the API behind the edge's admission (src/DESIGN.md §10): connections over the caps are
   * closed at accept, connections that do not send their headers in time are closed, then the hot routes and the
   * router. Call on the ingest verticle's event loop, before {@code listen}.
   */
  public static HttpServer serve(HttpServer server, Vertx vertx, GatewayServices services, WritePath writes,
                                 HttpRouteMeters meters, UniqueVisitors uniques) {
    ConnectionGuard guard = new ConnectionGuard(Timers.of(vertx), edgeLimits(services),
      services.config().getHttp().getTrustedProxies(), services.config().getLimits());
    return server.connectionHandler(guard::opened)
      .requestHandler(guard.watching(requestHandler(vertx, services, writes, meters, uniques)))
      .invalidRequestHandler(invalidRequestHandler(meters));
  }

  /** One set of tokens per gateway, reloaded from auth.tokensFile by the first event loop that asks for it. */
  private static LiveTokens liveTokens(Vertx vertx, GatewayServices services) {
    return services.state().shared(LiveTokens.class, () -> new LiveTokens(vertx, services.config().getAuth()));
  }

  private static EdgeLimits edgeLimits(GatewayServices services) {
    return services.state().shared(EdgeLimits.class, () -> new EdgeLimits(services.config().getLimits(),
      services.config().getMemoryBounds(), services.registry()));
  }

  /** The router alone, without the hot routes in front of it. */
  public static Router router(Vertx vertx, GatewayServices services, WritePath writes) {
    return router(vertx, services, writes, Timers.of(vertx));
  }

  /** {@link #router(Vertx, GatewayServices, WritePath)} whose readiness answers age on {@code timers}' clock. */
  public static Router router(Vertx vertx, GatewayServices services, WritePath writes, Timers timers) {
    return routes(vertx, services, writes, new HttpRouteMeters(services.registry()), null, timers).router();
  }

  /**
   * What an ingest verticle's server serves: the hot beacon route without the router, all else through it.
   * {@code uniques}: the verticle's unique-visitor sketches, null when no namespace counts unique visitors.
   */
  public static Handler<HttpServerRequest> requestHandler(Vertx vertx, GatewayServices services, WritePath writes,
                                                          HttpRouteMeters meters, UniqueVisitors uniques) {
    Routes routes = routes(vertx, services, writes, meters, uniques, Timers.of(vertx));
    return new HotRoutes(routes.router(), routes.writes(), routes.bodies(), localReads(services), services.config(),
      meters);
  }

  /** The gateway's one way to its read verticles' readers without the event bus. */
  private static LocalReads localReads(GatewayServices services) {
    return LocalReads.of(services);
  }

  private record Routes(Router router, IncrementRoutes writes, BodyReader bodies) {
  }

  private static Routes routes(Vertx vertx, GatewayServices services, WritePath writes, HttpRouteMeters meters,
                               UniqueVisitors uniques, Timers timers) {
    Router router = Router.router(vertx);
    router.route().handler(HttpApi::headAsGet).handler(HttpApi::literalPercentInBeacon).handler(meters::begin)
      .handler(HttpApi::refuseUnknownFraming);
    AllowedHosts hosts = AllowedHosts.of(services.config());
    if (hosts.checks()) {
      router.route().handler(hosts.guard(vertx));
    }
    BusClient client = BusClient.inProcess(vertx, services.config().getLimits().getRequestTimeoutMs());
    BodyReader bodies = new BodyReader(vertx, edgeLimits(services), services.config().getLimits().getBodyTimeoutMs());
    ClientLimits clients = services.state().shared(ClientLimits.class, () -> clientLimits(vertx, services.config()));
    IncrementRoutes increments = new IncrementRoutes(services.config(), services.rules(), writes,
      new BeaconFilter(clients, beaconOutcomes(services), services.config()), uniques, bodies,
      services.state().shared(ForwardedPeers.class, ForwardedPeers::new));
    ReadRoutes reads = new ReadRoutes(client, localReads(services), services.config());

    LiveTokens tokens = liveTokens(vertx, services);
    router.route("/v1/beacon/*").handler(HttpApi::varyByOrigin);
    router.route("/v1/beacon/*").handler(beaconCors(services.config().getHttp()));
    // no query guard: a beacon ignores the parameters it does not use, and names them (BeaconQuery)
    router.route(HttpMethod.GET, "/v1/beacon/:type/:id").handler(BearerAuth.authorizeBeacon(vertx, tokens, services.config()))
      .handler(increments::beacon);
    router.route(HttpMethod.POST, "/v1/beacon/:type/:id").handler(BearerAuth.authorizeBeacon(vertx, tokens, services.config()))
      .handler(increments::beacon);
    // reached only by an OPTIONS that is not a preflight (the CORS handler answers those)
    router.options("/v1/beacon/:type/:id").handler(ctx -> ctx.response().putHeader("Allow", "GET, POST, OPTIONS")
      .setStatusCode(204).end());
    // the trackers' endpoints are beacons too: the same CORS, so each script reads its answer on any allowed origin
    // (a route of its own for the CORS handler: Vert.x refuses a security handler after a plain one on one route)
    for (String path : List.of(TrackerRoutes.GOATCOUNTER, TrackerRoutes.UMAMI, TrackerRoutes.PLAUSIBLE)) {
      router.route(path).handler(HttpApi::varyByOrigin);
      router.route(path).handler(beaconCors(services.config().getHttp()));
    }
    new TrackerRoutes(increments, bodies, services.config()).mount(router);
    router.get("/v1/beacon.js").handler(BEACON_SCRIPT::serve);
    router.get("/v1/openapi.yaml").handler(OPENAPI::serve);

    AuthOptions auth = services.config().getAuth();
    // authorization on the headers, then the cross-site checks, then the body (BodyReader): a refused client never
    // gets a byte of it buffered
    BearerAuth.TokenRates rates = services.state().shared(BearerAuth.TokenRates.class, () -> new BearerAuth.TokenRates(auth));
    Handler<RoutingContext> crossSite = CrossSiteWrites.guard(vertx, services.config().getHttp());
    router.post("/v1/counters/:type/:id/increments").handler(BearerAuth.require(vertx, tokens, Right.WRITE, rates))
      .handler(crossSite).handler(QueryParameters.only(vertx, "ack", "return")).handler(increments::single);
    router.post("/v1/increments").handler(BearerAuth.require(vertx, tokens, Right.WRITE, rates)).handler(crossSite)
      .handler(QueryParameters.only(vertx, "ack")).handler(increments::batch);
    router.get("/v1/counters/:type/:id").handler(BearerAuth.requireRead(vertx, tokens, services.config()))
      .handler(QueryParameters.only(vertx, "from", "to", "top", "unique")).handler(reads::one);
    router.get("/v1/counters/:type").handler(BearerAuth.requireRead(vertx, tokens, services.config()))
      .handler(QueryParameters.only(vertx, "id", "from", "to", "top", "unique")).handler(reads::many);
    router.delete("/v1/counters/:type/:id").handler(BearerAuth.require(vertx, tokens, Right.ADMIN)).handler(crossSite)
      .handler(QueryParameters.only(vertx)).handler(reads::reset);

    OverviewRoutes overview = new OverviewRoutes(services.config(), services.state(), services.registry(),
      beaconOutcomes(services), services.state().shared(ForwardedPeers.class, ForwardedPeers::new));
    // what the namespaces took is a read too: with tokens configured it needs the read right (the dashboard asks)
    router.get("/v1/namespaces").handler(BearerAuth.requireRead(vertx, tokens, services.config()))
      .handler(QueryParameters.only(vertx)).handler(overview::namespaces);
    router.get("/ui/").handler(ctx -> {
      ctx.response().putHeader("Content-Security-Policy", UI_POLICY).putHeader("X-Content-Type-Options", "nosniff");
      UI_PAGE.serve(ctx);
    });
    // after /ui/, which the router would otherwise also give to this route: the page's links are relative to /ui/
    router.get("/ui").handler(ctx -> ctx.redirect("/ui/"));
    // the gateway's address, opened in a browser, shows the dashboard
    router.get("/").handler(ctx -> ctx.redirect("/ui/"));
    router.get("/ui/dashboard.js").handler(UI_SCRIPT::serve);
    router.get("/ui/dashboard.css").handler(UI_STYLE::serve);
    router.get("/ui/vendor/uPlot.iife.min.js").handler(UPLOT_SCRIPT::serve);
    router.get("/ui/vendor/uPlot.min.css").handler(UPLOT_STYLE::serve);

    if (services.config().getManagement().isEnabled()) {
      elsewhere(router, services.config().getManagement().getPort());
    } else {
      healthAndMetrics(router, vertx, services, client, tokens, timers);
    }
    errorPages(router);
    return new Routes(router, increments, bodies);
  }

  private static final java.util.List<String> MANAGEMENT_ROUTES = java.util.List.of("/health/live", "/health/ready",
    "/health/accepting", "/metrics");

  /** Health and metrics, on the API's router or the management port's. */
  private static void healthAndMetrics(Router router, Vertx vertx, GatewayServices services, BusClient client,
                                       LiveTokens tokens, Timers timers) {
    Handler<RoutingContext> noQuery = QueryParameters.only(vertx);
    router.get("/health/live").handler(noQuery).handler(ctx -> Responses.json(ctx, 200, new JsonObject().put("status", "live")));
    ReadinessPing ping = new ReadinessPing(client, timers);
    router.get("/health/ready").handler(noQuery).handler(ctx -> ready(ctx, services, ping));
    router.get("/health/accepting").handler(noQuery).handler(ctx -> accepting(ctx, services));
    Handler<RoutingContext> scrape = PrometheusScrape.handlerOrNull(services.registry());
    if (scrape != null) {
      // with tokens, a scrape needs the read right (Prometheus: authorization.credentials_file, docs/security.md)
      router.get("/metrics").handler(BearerAuth.require(vertx, tokens, Right.READ)).handler(noQuery).handler(scrape);
    }
  }

  /** With management.port, the API's port answers health and metrics with a 404 that says where they are. */
  private static void elsewhere(Router router, int managementPort) {
    for (String path : MANAGEMENT_ROUTES) {
      router.get(path).handler(ctx -> Responses.error(ctx, new ApiError(404, "not_found", path + " is served on the "
        + "management port (" + ManagementOptions.PORT.name() + ": " + managementPort + "), not on this one", PATH_FIELD)));
    }
  }

  /**
   * The management port's router ({@code management.port}): health and metrics alone, behind the same Host check,
   * query check and error pages as the API's.
   */
  public static Router managementRouter(Vertx vertx, GatewayServices services) {
    Router router = Router.router(vertx);
    HttpRouteMeters meters = new HttpRouteMeters(services.registry());
    router.route().handler(HttpApi::headAsGet).handler(meters::begin).handler(HttpApi::refuseUnknownFraming);
    AllowedHosts hosts = AllowedHosts.of(services.config());
    if (hosts.checks()) {
      router.route().handler(hosts.guard(vertx));
    }
    BusClient client = BusClient.inProcess(vertx, services.config().getLimits().getRequestTimeoutMs());
    healthAndMetrics(router, vertx, services, client, liveTokens(vertx, services), Timers.of(vertx));
    errorPages(router);
    return router;
  }

  /**
   * Beacons are sent with credentials (sendBeacon always includes them), and a browser drops the answer to a
   * credentialed request unless it names the page's exact origin and allows credentials: so the origin is echoed
   * (every valid one when corsOrigins is '*'), and preflights allow whatever headers the browser asks for.
   */
  /**
   * The gateway's beacon limits, and the ids of each public namespace that exist in the table made known to them, a
   * page of {@value #KNOWN_IDS_PAGE} at a time over one connection of their own: until an id is read it is new to the
   * budgets, which a view of it then spends once. A read that fails is logged and given up; the ids become known as
   * they are counted.
   */
  private static ClientLimits clientLimits(Vertx vertx, GatewayConfig config) {
    List<NamespaceOptions> publicNamespaces = config.getNamespaces().values().stream()
      .filter(NamespaceOptions::isPublic).toList();
    ClientLimits limits = new ClientLimits(config.getMemoryBounds().maxTrackedClients(),
      config.getLimits().getClientsPerNetwork(),
      config.getMemoryBounds().maxKnownIds() / Math.max(1, publicNamespaces.size()), System::nanoTime);
    if (publicNamespaces.stream().noneMatch(namespace -> namespace.getIdsPerClientPerHour() > 0
      || namespace.getNewIdsPerHour() > 0)) {
      return limits;
    }
    CounterStore store = SqlStores.create(vertx, config.getDatabase(), "known-ids", 1,
      config.getBatching().getWriteTimeoutMs());
    Future<Void> loaded = Future.succeededFuture();
    for (NamespaceOptions namespace : publicNamespaces) {
      loaded = loaded.compose(previous -> limits.load(namespace.getName(),
          after -> store.distinctIds(namespace.getName(), after, KNOWN_IDS_PAGE))
        .onSuccess(ids -> LOG.info("beacon limits: namespace {} knows {} existing ids", namespace.getName(), ids))
        .otherwise(failure -> {
          LOG.warn("beacon limits: the existing ids of namespace {} could not be read ({}); each becomes known when "
            + "it is next counted", namespace.getName(), failure.toString());
          return 0;
        })
        .mapEmpty());
    }
    loaded.onComplete(done -> store.close());
    return limits;
  }

  private static BeaconOutcomes beaconOutcomes(GatewayServices services) {
    return services.state().shared(BeaconOutcomes.class, () -> new BeaconOutcomes(services.config(), services.registry()));
  }

  private static Handler<RoutingContext> beaconCors(HttpOptions http) {
    CorsHandler cors = CorsHandler.create().allowedMethod(HttpMethod.GET).allowedMethod(HttpMethod.POST)
      .allowCredentials(true).maxAgeSeconds(http.getCorsMaxAgeSeconds()).exposedHeader(IncrementRoutes.DROPPED_HEADER)
      .exposedHeader(IncrementRoutes.FOLDED_HEADER).exposedHeader(BeaconQuery.IGNORED_HEADER);
    http.getCorsOrigins().forEach(cors::addOrigin);
    if (!http.getCorsOrigins().contains("*")) {
      return cors;
    }
    // with '*', an opaque origin (Origin: null: a sandboxed frame, a file, a redirect across origins) is not echoed:
    // any page can make its requests opaque, so echoing it with credentials would grant every page the answer. Its
    // beacon is still counted, as one without an Origin is
    return ctx -> {
      String origin = ctx.request().getHeader("Origin");
      if ("null".equals(origin)) {
        ctx.next();
      } else {
        cors.handle(ctx);
      }
    };
  }

  /**
   * The answer depends on the Origin, so caches must key on it, even with one allowed origin (where the CORS handler
   * leaves it out) and on preflights (where it adds only Access-Control-Request-Headers). The CORS handler adds its
   * own Origin where it names one, so Origin is added as the headers are written, to what the handlers put there, and
   * the answer carries one Vary naming each header once.
   */
  private static void varyByOrigin(RoutingContext ctx) {
    ctx.addHeadersEndHandler(v -> varyOnce(ctx.response(), "Origin"));
    ctx.next();
  }

  /**
   * One {@code Vary} header naming each request header once (compared without case, as header names are), {@code name}
   * among them.
   */
  static void varyOnce(HttpServerResponse response, String name) {
    Map<String, String> names = new LinkedHashMap<>();
    for (String line : response.headers().getAll(HttpHeaders.VARY)) {
      for (String token : line.split(",")) {
        String header = token.strip();
        if (!header.isEmpty()) {
          names.putIfAbsent(header.toLowerCase(Locale.ROOT), header);
        }
      }
    }
    names.put(name.toLowerCase(Locale.ROOT), name); // spelt as the gateway's other answers spell it
    response.headers().set(HttpHeaders.VARY, String.join(", ", names.values()));
  }

  private static void ready(RoutingContext ctx, GatewayServices services, ReadinessPing ping) {
    if (services.state().isDraining()) {
      Responses.json(ctx, 503, new JsonObject().put("status", "not_ready").put("reason", "shutting down"));
      return;
    }
    if (!services.state().writersHealthy()) {
      Responses.json(ctx, 503, new JsonObject().put("status", "not_ready")
        .put("reason", "writes are failing or shedding load"));
      return;
    }
    ping.reachable().onSuccess(reachable -> Responses.json(ctx, reachable ? 200 : 503, reachable
      ? new JsonObject().put("status", "ready")
      : new JsonObject().put("status", "not_ready").put("reason", "database unreachable")));
  }

  /**
   * HEAD is answered as the GET of the same URI would be, without its body (Vert.x writes none on a HEAD, but keeps the
   * GET's Content-Length): the request is routed again as a GET, marked so that the beacon counts nothing for it.
   */
  private static void headAsGet(RoutingContext ctx) {
    String path = ctx.request().path();
    if (ctx.request().method() == HttpMethod.HEAD && path != null && path.startsWith("/")) {
      ctx.put(HttpRouteMeters.HEAD_AS_GET, Boolean.TRUE);
      // path and query, not uri(): a request line in absolute form (http://host/path) is valid HTTP too
      String query = ctx.request().query();
      ctx.reroute(HttpMethod.GET, path + (query == null ? "" : "?" + query));
      return;
    }
    ctx.next();
  }

  /**
   * A beacon whose path or query holds a {@code %} not followed by two hex digits is routed again with it written
   * {@code %25}: the router would refuse it (400) before any route, and a page's path may hold one, as may a parameter
   * the beacon ignores (src/DESIGN.md, page ids). Runs before any handler that reads the path or the query; the hot
   * path and {@link BeaconQuery} take the same {@code %} literally.
   */
  private static void literalPercentInBeacon(RoutingContext ctx) {
    String path = ctx.request().path();
    String query = ctx.request().query();
    if (path != null && path.startsWith(IncrementRoutes.BEACON_PREFIX)
      && (PathSegments.hasStrayPercent(path) || query != null && PathSegments.hasStrayPercent(query))) {
      ctx.reroute(ctx.request().method(), PathSegments.escapeStrayPercents(path)
        + (query == null ? "" : "?" + PathSegments.escapeStrayPercents(query)));
      return;
    }
    ctx.next();
  }

  /** Whether this request is a HEAD routed as its GET: it gets the GET's answer, and changes nothing. */
  static boolean isHead(RoutingContext ctx) {
    return Boolean.TRUE.equals(ctx.get(HttpRouteMeters.HEAD_AS_GET));
  }

  /**
   * Whether an increment would be taken now: not draining, no coalescer shedding (pending counters or the journal
   * full). Unlike readiness it ignores a database outage, which the journal rides out (`ack=accepted` is answered
   * 202 meanwhile): the readiness of a web pod whose sidecar gateway stands in for the counter database must not
   * follow that database (docs/operations.md "The sidecar pattern").
   */
  private static void accepting(RoutingContext ctx, GatewayServices services) {
    if (services.state().isDraining()) {
      Responses.json(ctx, 503, new JsonObject().put("status", "not_accepting").put("reason", "shutting down"));
    } else if (services.state().sheddingWriters() > 0) {
      Responses.json(ctx, 503, new JsonObject().put("status", "not_accepting")
        .put("reason", "pending counters or the journal are full"));
    } else {
      Responses.json(ctx, 200, new JsonObject().put("status", "accepting"));
    }
  }

  /**
   * A Transfer-Encoding whose last coding is not chunked leaves the body's length unknown (RFC 9112 §6.3: 400 and
   * close). Netty reads such a request as having no body, which an increment takes as delta 1, and would read the
   * body's bytes as the next request.
   */
  private static void refuseUnknownFraming(RoutingContext ctx) {
    String codings = String.join(",", ctx.request().headers().getAll("Transfer-Encoding"));
    if (!codings.isEmpty() && !codings.substring(codings.lastIndexOf(',') + 1).strip().equalsIgnoreCase("chunked")) {
      // what follows on this connection cannot be framed: close it once the answer is out
      ctx.response().putHeader("Connection", "close").endHandler(ended -> ctx.request().connection().close());
      Responses.error(ctx, ApiError.badRequest("malformed_request", "Transfer-Encoding",
        "the body's length is unknown: the last transfer coding must be chunked"));
      return;
    }
    ctx.next();
  }

  /**
   * Requests the HTTP decoder itself rejects (request line or headers too long, broken syntax) also get a JSON
   * error; the server then closes the connection.
   */
  public static Handler<HttpServerRequest> invalidRequestHandler(HttpRouteMeters meters) {
    return request -> {
      long started = System.nanoTime();
      invalidRequest(request);
      meters.record(HttpRouteMeters.UNMATCHED, request.method(), request.response().getStatusCode(),
        System.nanoTime() - started);
    };
  }

  public static void invalidRequest(HttpServerRequest request) {
    Throwable cause = request.decoderResult().cause();
    ApiError error;
    if (cause instanceof TooLongHttpLineException) {
      error = new ApiError(414, "uri_too_long", "the request line is longer than allowed", "uri");
    } else if (cause instanceof TooLongHttpHeaderException) {
      error = new ApiError(431, "headers_too_large", "the request headers exceed limits.maxHeaderBytes", "headers");
    } else if (cause != null && cause.getMessage() != null
      && cause.getMessage().toLowerCase(java.util.Locale.ROOT).matches(".*(transfer coding|transfer-encoding).*")) {
      // Netty 4.2.15+ refuses such framing in its decoder (request smuggling): the same answer refuseUnknownFraming gives
      error = ApiError.badRequest("malformed_request", "Transfer-Encoding",
        "the body's length is unknown: the last transfer coding must be chunked");
    } else {
      error = ApiError.badRequest("malformed_request", null, "the request is not valid HTTP/1.1");
    }
    request.response().setStatusCode(error.status()).putHeader("Content-Type", Responses.JSON)
      .putHeader("Connection", "close").end(error.toJson().encode());
  }

  /** The methods {@code router}'s routes take on {@code path}, as an {@code Allow} header lists them (RFC 9110 §15.5.6). */
  static String allowedMethods(Router router, String path) {
    java.util.Set<HttpMethod> methods = new java.util.HashSet<>();
    for (io.vertx.ext.web.Route route : router.getRoutes()) {
      String template = route.getPath();
      if (template == null || route.methods() == null || route.methods().isEmpty() || path == null) {
        continue;
      }
      String regex = java.util.Arrays.stream(template.split("/", -1))
        .map(segment -> segment.startsWith(":") ? "[^/]+" : java.util.regex.Pattern.quote(segment))
        .collect(java.util.stream.Collectors.joining("/"));
      if (path.matches(regex)) {
        methods.addAll(route.methods());
      }
    }
    if (methods.contains(HttpMethod.GET)) {
      methods.add(HttpMethod.HEAD); // every GET is answered to a HEAD too (headAsGet)
    }
    return java.util.stream.Stream.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.POST, HttpMethod.PUT, HttpMethod.PATCH,
        HttpMethod.DELETE, HttpMethod.OPTIONS).filter(methods::contains).map(HttpMethod::name)
      .collect(java.util.stream.Collectors.joining(", "));
  }

  /** The {@code field} of a 404 for an unknown route: the request's path. */
  static final String PATH_FIELD = "path";
  /** The {@code field} of a 405: the request's method. */
  static final String METHOD_FIELD = "method";

  /** Refusals from the router itself also carry the JSON error body. */
  private static void errorPages(Router router) {
    router.errorHandler(400, ctx -> Responses.error(ctx, ApiError.badRequest("bad_request", null, "the request is malformed")));
    // the CORS handler refuses an Origin that http.corsOrigins does not list with a bare-text 403
    router.errorHandler(403, ctx -> Responses.error(ctx, new ApiError(403, "origin_not_allowed",
      "the Origin is not allowed by http.corsOrigins", "Origin")));
    // the part at fault, as every refusal names one: the path for a route that does not exist, the method for one
    // that does not take it
    router.errorHandler(404, ctx -> Responses.error(ctx, new ApiError(404, "not_found", "no such route", PATH_FIELD)));
    router.errorHandler(405, ctx -> {
      String allow = allowedMethods(router, ctx.request().path());
      if (!allow.isEmpty()) {
        ctx.response().putHeader("Allow", allow);
      }
      Responses.error(ctx, new ApiError(405, "method_not_allowed",
        "this route does not take " + (isHead(ctx) ? HttpMethod.HEAD : ctx.request().method())
          + (allow.isEmpty() ? "" : "; it takes " + allow), METHOD_FIELD));
    });
    router.errorHandler(413, ctx -> Responses.error(ctx, new ApiError(413, "body_too_large",
      "the body exceeds limits.maxBodyBytes", "body")));
    // the body handler refuses any Expect other than 100-continue with a bare-text 417
    router.errorHandler(417, ctx -> Responses.error(ctx, new ApiError(417, "expectation_failed",
      "the only expectation supported is Expect: 100-continue", "Expect")));
    router.errorHandler(500, ctx -> Responses.error(ctx, ctx.failure() instanceof ApiError api ? api
      : new ApiError(500, "internal_error", "unexpected error", null)));
  }
}
