package io.countergateway.internal.http;

import io.countergateway.config.BeaconOptions;
import io.countergateway.config.GatewayConfig;
import io.countergateway.config.NamespaceOptions;
import io.countergateway.internal.beacon.FoldReason;
import io.countergateway.internal.model.ApiError;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.net.HostAndPort;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

import java.util.Map;
import java.util.function.Function;

/**
 * The collection endpoints of the trackers sites already run, at the paths their unmodified scripts send to:
 * GoatCounter's {@code count.js} ({@code GET|POST /count}), Umami's {@code script.js} ({@code POST /api/send}) and
 * Plausible's script ({@code POST /api/event}). Each hit is read ({@link TrackerHit}), mapped to a public namespace by
 * its site ({@code beacon.trackerSites}, else {@code beacon.trackerNamespace}) and taken as a beacon of its page's path
 * is taken ({@link IncrementRoutes#takeBeacon}): the same id rules, filters, limits, journal, windows and unique
 * visitors as {@code /v1/beacon}. What the script marks as no page view (GoatCounter's bot score and events, Umami's
 * named events, Plausible's engagement and custom events) is answered as a counted view is and not counted, with
 * {@code X-Counter-Dropped} naming why. Each answer is what its script reads: GoatCounter a 1x1 GIF (GET) or an empty
 * 200 (POST), Umami {@code {}} (no {@code cache} token, so the script sends no {@code x-umami-cache} header), Plausible
 * {@code 202 ok}.
 */
final class TrackerRoutes {
  static final String GOATCOUNTER = "/count";
  static final String UMAMI = "/api/send";
  static final String PLAUSIBLE = "/api/event";
  private static final CharSequence CACHE_CONTROL = HttpHeaders.createOptimized("Cache-Control");
  private static final CharSequence NO_STORE = HttpHeaders.createOptimized("no-store");
  private static final CharSequence CONTENT_TYPE = HttpHeaders.createOptimized("Content-Type");

  private final IncrementRoutes writes;
  private final BodyReader bodies;
  private final GatewayConfig config;
  private final Map<String, String> sites;
  private final String defaultNamespace;
  private final long maxBodyBytes;

  TrackerRoutes(IncrementRoutes writes, BodyReader bodies, GatewayConfig config) {
    this.writes = writes;
    this.bodies = bodies;
    this.config = config;
    this.sites = config.getBeacon().getTrackerSites();
    this.defaultNamespace = config.getBeacon().getTrackerNamespace();
    this.maxBodyBytes = config.getBeacon().getMaxBodyBytes();
  }

  /** The three endpoints on {@code router}; their CORS is the beacon's, added before by the caller. */
  void mount(Router router) {
    router.get(GOATCOUNTER).handler(this::goatCounter);
    router.post(GOATCOUNTER).handler(this::goatCounter);
    router.post(UMAMI).handler(ctx -> fromBody(ctx, TrackerHit::umami, "payload.website", TrackerRoutes::answerUmami));
    router.post(PLAUSIBLE).handler(ctx -> fromBody(ctx, TrackerHit::plausible, "d", TrackerRoutes::answerPlausible));
  }

  /** GoatCounter sends everything in the query; a sendBeacon POST's body (empty) is read within the beacon's bound. */
  private void goatCounter(RoutingContext ctx) {
    HttpServerRequest request = ctx.request();
    IncrementRoutes.BeaconAnswer answer = request.method() == HttpMethod.GET ? TrackerRoutes::answerPixel
      : TrackerRoutes::answerEmpty;
    TrackerHit hit;
    NamespaceOptions namespace;
    try {
      HostAndPort authority = request.authority();
      hit = TrackerHit.goatCounter(request.query(), authority == null ? null : authority.host());
      namespace = namespace(hit.site(), authority == null ? null : authority.toString(), "Host");
    } catch (ApiError e) {
      refuse(ctx, e);
      return;
    }
    bodies.read(request, maxBodyBytes, false, body -> take(ctx, hit, namespace, answer));
  }

  private void fromBody(RoutingContext ctx, Function<Buffer, TrackerHit> reader, String siteField,
                        IncrementRoutes.BeaconAnswer answer) {
    HttpServerRequest request = ctx.request();
    long announced = BodyReader.contentLength(request.getHeader("Content-Length"));
    if (announced > maxBodyBytes) {
      bodies.refuse(request, tooLarge());
      return;
    }
    bodies.read(request, maxBodyBytes, true, body -> {
      TrackerHit hit;
      NamespaceOptions namespace;
      try {
        hit = reader.apply(body);
        namespace = namespace(hit.site(), null, siteField);
      } catch (ApiError e) {
        Responses.error(ctx, e);
        return;
      }
      take(ctx, hit, namespace, answer);
    });
  }

  private ApiError tooLarge() {
    return new ApiError(413, "body_too_large", "the body exceeds " + BeaconOptions.MAX_BODY_BYTES.name() + " ("
      + maxBodyBytes + " bytes)", "body");
  }

  /**
   * The public namespace the site counts in: the one {@code beacon.trackerSites} names for it ({@code site}, or
   * {@code siteWithPort} when that is named), else {@code beacon.trackerNamespace}.
   */
  private NamespaceOptions namespace(String site, String siteWithPort, String field) {
    String name = siteWithPort != null && sites.containsKey(siteWithPort.toLowerCase(java.util.Locale.ROOT))
      ? sites.get(siteWithPort.toLowerCase(java.util.Locale.ROOT))
      : site != null && sites.containsKey(site) ? sites.get(site) : defaultNamespace;
    NamespaceOptions namespace = config.namespace(name);
    if (namespace == null || !namespace.isPublic()) {
      // only the default can be missing: a named one is checked at start
      throw new ApiError(404, "unknown_site", "no public namespace takes this site's views: "
        + BeaconOptions.TRACKER_SITES.name() + " does not name it and " + BeaconOptions.TRACKER_NAMESPACE.name() + " ('"
        + name + "') is not a declared public namespace", field);
    }
    return namespace;
  }

  private void take(RoutingContext ctx, TrackerHit hit, NamespaceOptions namespace, IncrementRoutes.BeaconAnswer answer) {
    if (hit.skipped() != null) {
      answer.answer(ctx.request(), hit.skipped(), null);
      return;
    }
    if (HttpApi.isHead(ctx)) {
      answer.answer(ctx.request(), "head", null); // what the GET would answer, and nothing counted
      return;
    }
    IncrementRoutes.BeaconId id = writes.beaconId(namespace, hit.path());
    writes.takeBeacon(namespace, id.increment(), id.folded(), hit.visit(), ctx.request(), answer);
  }

  private void refuse(RoutingContext ctx, ApiError error) {
    if (ctx.request().isEnded()) {
      Responses.error(ctx, error);
    } else {
      bodies.refuse(ctx.request(), error);
    }
  }

  private static void answerPixel(HttpServerRequest request, String dropped, FoldReason folded) {
    HttpServerResponse response = answering(request, dropped, folded);
    if (response != null) {
      response.setStatusCode(200).putHeader(CONTENT_TYPE, "image/gif").end(IncrementRoutes.PIXEL);
    }
  }

  private static void answerEmpty(HttpServerRequest request, String dropped, FoldReason folded) {
    HttpServerResponse response = answering(request, dropped, folded);
    if (response != null) {
      response.setStatusCode(200).end();
    }
  }

  private static void answerUmami(HttpServerRequest request, String dropped, FoldReason folded) {
    HttpServerResponse response = answering(request, dropped, folded);
    if (response != null) {
      response.setStatusCode(200).putHeader(CONTENT_TYPE, Responses.JSON).end("{}");
    }
  }

  private static void answerPlausible(HttpServerRequest request, String dropped, FoldReason folded) {
    HttpServerResponse response = answering(request, dropped, folded);
    if (response != null) {
      response.setStatusCode(202).putHeader(CONTENT_TYPE, "text/plain; charset=utf-8").end("ok");
    }
  }

  /** The response with the headers every tracker answer carries; null when it is already answered or closed. */
  private static HttpServerResponse answering(HttpServerRequest request, String dropped, FoldReason folded) {
    HttpServerResponse response = request.response();
    if (response.ended() || response.closed()) {
      return null;
    }
    response.putHeader(CACHE_CONTROL, NO_STORE);
    if (dropped != null) {
      response.putHeader(IncrementRoutes.DROPPED_HEADER, dropped);
    }
    if (folded != null) {
      response.putHeader(IncrementRoutes.FOLDED_HEADER, folded.label);
    }
    return response;
  }
}
